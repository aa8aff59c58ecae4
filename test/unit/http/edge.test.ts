import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import {
  WS_UNACCEPTED_MAX_BYTES,
  bodyLimitFor,
  readBody,
  wsMessageLimitFor,
} from '../../../src/http/edge.js';

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

/** A request body as a stream with the headers readBody looks at (no socket: a unit test). */
function request(headers: Record<string, string>): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

describe('readBody', () => {
  it('should join the chunks, a character split between two of them included', async () => {
    const req = request({ 'content-length': '9' });
    const reading = readBody(req, 100);
    const bytes = Buffer.from('{"a":"é"}');
    req.write(bytes.subarray(0, 7)); // the two bytes of é, split
    req.end(bytes.subarray(7));
    await expect(reading).resolves.toBe('{"a":"é"}');
  });

  it('should answer an empty body with an empty string', async () => {
    const req = request({ 'content-length': '0' });
    const reading = readBody(req, 100);
    req.end();
    await expect(reading).resolves.toBe('');
  });

  it('should refuse a body declared over the cap without reading it', async () => {
    const req = request({ 'content-length': '101' });
    await expect(readBody(req, 100)).resolves.toBeNull();
    expect(req.readableFlowing).toBeNull();
    expect(req.destroyed).toBe(false);
  });

  it('should stop at the cap of an undeclared body and destroy the request', async () => {
    const req = request({ 'transfer-encoding': 'chunked' });
    const reading = readBody(req, 10);
    req.write('0123456789');
    req.write('x');
    await expect(reading).resolves.toBeNull();
    expect(req.destroyed).toBe(true);
  });

  it('should reject when the request fails or closes before its end', async () => {
    const failing = request({ 'transfer-encoding': 'chunked' });
    const failed = readBody(failing, 100);
    failing.write('{"q"');
    failing.destroy(new Error('aborted'));
    await expect(failed).rejects.toThrow('aborted');

    const closing = request({ 'transfer-encoding': 'chunked' });
    const closed = readBody(closing, 100);
    closing.write('{"q"');
    closing.destroy();
    await expect(closed).rejects.toThrow('closed before its body was complete');

    await expect(readBody(closing, 100)).rejects.toThrow('closed before its body was read');
  });
});
