import { describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { WS_UNACCEPTED_MAX_BYTES, bodyLimitFor, wsMessageLimitFor } from '../../../src/http/edge.js';

const limits = { maxBodyBytes: 1_000, maxBodyBytesStaff: 8_000 };

describe('wsMessageLimitFor', () => {
  it('should give a socket not yet accepted the small cap, whatever the body caps', () => {
    expect(wsMessageLimitFor(null, limits)).toBe(WS_UNACCEPTED_MAX_BYTES);
    expect(wsMessageLimitFor(null, { maxBodyBytes: 1, maxBodyBytesStaff: 1 })).toBe(16 * 1024);
  });

  it.each([Role.ADMIN, Role.OPERATOR, Role.CUSTOMER, Role.RUNTIME])(
    'should give an accepted %s socket the body cap of its role',
    (role) => {
      expect(wsMessageLimitFor(role, limits)).toBe(bodyLimitFor(role, limits));
    },
  );

  it('should give staff the larger cap', () => {
    expect(wsMessageLimitFor(Role.OPERATOR, limits)).toBe(8_000);
    expect(wsMessageLimitFor(Role.CUSTOMER, limits)).toBe(1_000);
  });
});
