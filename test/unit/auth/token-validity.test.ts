import { describe, expect, it } from 'vitest';
import { ApiToken } from '../../../src/auth/api-token.entity.js';
import { isTokenActive, TOKEN_ACTIVE_SQL } from '../../../src/auth/token-validity.js';

const NOW = new Date('2026-12-02T12:00:00.000Z');

describe('isTokenActive', () => {
  it('should hold a token that is not revoked and has no expiry or one after now', () => {
    expect(isTokenActive({ revokedAt: null, expiresAt: null }, NOW)).toBe(true);
    expect(isTokenActive({ revokedAt: null, expiresAt: new Date(NOW.getTime() + 1) }, NOW)).toBe(true);
  });

  it('should refuse a revoked token, and one whose expiry is now or before', () => {
    expect(isTokenActive({ revokedAt: new Date(0), expiresAt: null }, NOW)).toBe(false);
    expect(isTokenActive({ revokedAt: null, expiresAt: NOW }, NOW)).toBe(false);
    expect(isTokenActive({ revokedAt: null, expiresAt: new Date(NOW.getTime() - 1) }, NOW)).toBe(false);
  });

  it('should be what ApiToken.isActive answers', () => {
    const token = Object.assign(Object.create(ApiToken.prototype) as ApiToken, {
      revokedAt: null,
      expiresAt: NOW,
    });
    expect(token.isActive(new Date(NOW.getTime() - 1))).toBe(true);
    expect(token.isActive(NOW)).toBe(false);
  });

  it('should say the same in SQL, with now bound rather than read from the database clock', () => {
    expect(TOKEN_ACTIVE_SQL).toBe(
      'revoked_at is null and (expires_at is null or expires_at > ?::timestamptz)',
    );
    expect(TOKEN_ACTIVE_SQL).not.toMatch(/now\(\)/);
  });
});
