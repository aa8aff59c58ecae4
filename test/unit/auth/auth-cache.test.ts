/**
 * The token lookup cache on an injected clock: an entry lasts PRINCIPAL_CACHE_TTL_MS, never past
 * the token's own expiry, and a token the database no longer returns is refused once it lapses.
 */
import { describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { AuthService, PRINCIPAL_CACHE_TTL_MS, type TokenLookupSql } from '../../../src/auth/auth.service.js';
import { generateToken } from '../../../src/auth/tokens.js';

const T0 = Date.parse('2026-12-01T12:00:00Z');

/** A database that answers the lookup with `row` while `expiresAt` is later than `dbNow()`. */
function database(expiresAt: number | null, dbNow: () => number) {
  const lookups = { count: 0 };
  const sql = {
    execute: () => {
      lookups.count++;
      const live = expiresAt === null || expiresAt > dbNow();
      return Promise.resolve(
        live
          ? [
              {
                id: 'tok-1',
                role: Role.RUNTIME,
                workspace_id: null,
                label: 'runtime',
                expires_at: expiresAt === null ? null : new Date(expiresAt),
              },
            ]
          : [],
      );
    },
  } as unknown as TokenLookupSql; // only the one call authenticate makes
  return { sql, lookups };
}

describe('the token lookup cache', () => {
  const token = generateToken();

  it('should keep a lookup for its TTL, then read the database again', async () => {
    let now = T0;
    const { sql, lookups } = database(null, () => now);
    const auth = new AuthService(undefined, () => now);
    expect(await auth.authenticate(sql, token)).toMatchObject({ tokenId: 'tok-1' });
    now = T0 + PRINCIPAL_CACHE_TTL_MS - 1;
    await auth.authenticate(sql, token);
    expect(lookups.count).toBe(1);
    now = T0 + PRINCIPAL_CACHE_TTL_MS;
    await auth.authenticate(sql, token);
    expect(lookups.count).toBe(2);
  });

  it('should refuse a token from its expiry on, even inside the cache TTL', async () => {
    let now = T0;
    const expiresAt = T0 + 1_500;
    const { sql, lookups } = database(expiresAt, () => now);
    const auth = new AuthService(undefined, () => now);
    expect(await auth.authenticate(sql, token)).not.toBeNull();
    now = expiresAt - 1;
    expect(await auth.authenticate(sql, token)).not.toBeNull();
    expect(lookups.count).toBe(1);
    now = expiresAt;
    expect(await auth.authenticate(sql, token)).toBeNull();
    expect(lookups.count).toBe(2);
  });
});
