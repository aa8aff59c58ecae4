/**
 * The token lookup cache on an injected clock: an entry lasts PRINCIPAL_CACHE_TTL_MS, never past
 * the token's own expiry, and a token the database no longer returns is refused once it lapses.
 */
import { describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import {
  AuthService,
  PRINCIPAL_CACHE_MAX,
  PRINCIPAL_CACHE_TTL_MS,
  REFUSED_CACHE_MAX,
  type TokenLookupSql,
} from '../../../src/auth/auth.service.js';
import { generateToken, hashToken } from '../../../src/auth/tokens.js';

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

describe('the token lookup cache under a flood of bogus tokens (issue 25)', () => {
  /** A database that knows the tokens of `valid` (by hash) and counts lookups per hash. */
  function tokens(valid: string[]) {
    const known = new Map(valid.map((t, i) => [hashToken(t), `tok-${i}`]));
    const lookups = new Map<string, number>();
    const sql = {
      execute: (_sql: string, [hash]: [string]) => {
        lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
        const id = known.get(hash);
        return Promise.resolve(
          id ? [{ id, role: Role.RUNTIME, workspace_id: null, label: id, expires_at: null }] : [],
        );
      },
    };
    return { sql, lookupsOf: (token: string) => lookups.get(hashToken(token)) ?? 0 };
  }

  it('should keep a valid lookup while more distinct bogus tokens than either cache holds are refused', async () => {
    const good = generateToken();
    const { sql, lookupsOf } = tokens([good]);
    const auth = new AuthService(undefined, () => T0);
    expect(await auth.authenticate(sql, good)).toMatchObject({ tokenId: 'tok-0' });
    const bogus = Array.from({ length: PRINCIPAL_CACHE_MAX + REFUSED_CACHE_MAX + 1 }, () => generateToken());
    for (const token of bogus) expect(await auth.authenticate(sql, token)).toBeNull();
    expect(await auth.authenticate(sql, good)).toMatchObject({ tokenId: 'tok-0' });
    expect(lookupsOf(good)).toBe(1);
    expect(auth.cacheSizes()).toEqual({ valid: 1, refused: REFUSED_CACHE_MAX });
    // The latest refusals are still cached; the oldest made room for them.
    await auth.authenticate(sql, bogus.at(-1)!);
    expect(lookupsOf(bogus.at(-1)!)).toBe(1);
    await auth.authenticate(sql, bogus[0]!);
    expect(lookupsOf(bogus[0]!)).toBe(2);
  });

  it('should let the oldest valid lookup make room when the valid cache is full, keeping the rest', async () => {
    const valid = Array.from({ length: PRINCIPAL_CACHE_MAX + 1 }, () => generateToken());
    const { sql, lookupsOf } = tokens(valid);
    const auth = new AuthService(undefined, () => T0);
    for (const token of valid) await auth.authenticate(sql, token);
    expect(auth.cacheSizes().valid).toBe(PRINCIPAL_CACHE_MAX);
    await auth.authenticate(sql, valid[1]!);
    expect(lookupsOf(valid[1]!)).toBe(1);
    await auth.authenticate(sql, valid[0]!);
    expect(lookupsOf(valid[0]!)).toBe(2);
  });

  it('should refuse, on its next lookup, a token whose valid lookup lapsed and that the database no longer returns', async () => {
    let now = T0;
    const good = generateToken();
    let known = [good];
    const sql = {
      execute: (_sql: string, [hash]: [string]) =>
        Promise.resolve(
          known.some((t) => hashToken(t) === hash)
            ? [{ id: 'tok-0', role: Role.RUNTIME, workspace_id: null, label: 'x', expires_at: null }]
            : [],
        ),
    };
    const auth = new AuthService(undefined, () => now);
    expect(await auth.authenticate(sql, good)).not.toBeNull();
    known = [];
    now += PRINCIPAL_CACHE_TTL_MS;
    expect(await auth.authenticate(sql, good)).toBeNull();
    expect(auth.cacheSizes()).toEqual({ valid: 0, refused: 1 });
  });
});
