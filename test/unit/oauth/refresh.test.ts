import { describe, expect, it } from 'vitest';
import { NO_REFRESH_TOKEN_REASON, refreshStep, tokenOf } from '../../../src/oauth/refresh.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms);

describe('refreshStep', () => {
  it.each([
    // [expires in, has refresh token, seen version, min validity, step]
    ['a token well within its validity is kept', 600_000, true, 1, 60_000, 'keep'],
    ['a token expiring within the skew is renewed', 30_000, true, 1, 60_000, 'refresh'],
    ['a token expiring exactly at the skew is renewed', 60_000, true, 1, 60_000, 'refresh'],
    ['a row renewed by someone else (newer version) is kept', 30_000, true, 0, 60_000, 'keep'],
    ['force renews a token that is far from expiry', 600_000, true, 1, 'force', 'refresh'],
    ['force keeps a row someone else renewed meanwhile', 600_000, true, 0, 'force', 'keep'],
    ['a token without refresh token is kept while still valid', 30_000, false, 1, 60_000, 'keep'],
    ['a token without refresh token that expired ends the sign-in', -1, false, 1, 60_000, 'end'],
    ['a token expiring right now without refresh token ends the sign-in', 0, false, 1, 60_000, 'end'],
  ] as const)('%s', (_name, expiresInMs, hasRefreshToken, seenVersion, minValidity, step) => {
    expect(
      refreshStep({ version: 1, expiresAt: at(expiresInMs), hasRefreshToken }, seenVersion, minValidity, T0),
    ).toBe(step);
  });

  it('should keep a token that has no lifetime, unless forced', () => {
    const row = { version: 3, expiresAt: null, hasRefreshToken: true };
    expect(refreshStep(row, 3, 60_000, T0)).toBe('keep');
    expect(refreshStep(row, 3, 'force', T0)).toBe('refresh');
    expect(refreshStep({ ...row, hasRefreshToken: false }, 3, 'force', T0)).toBe('keep');
  });

  it('should take the sweep window as the minimum validity', () => {
    const row = { version: 1, expiresAt: at(90_000), hasRefreshToken: true };
    expect(refreshStep(row, 1, 60_000, T0)).toBe('keep');
    expect(refreshStep(row, 1, 120_000, T0)).toBe('refresh');
  });
});

describe('tokenOf', () => {
  it('should give the token of a token outcome', () => {
    expect(tokenOf('c1', { kind: 'token', accessToken: 'at-1', refreshed: true })).toBe('at-1');
  });

  it('should throw NEEDS_SIGN_IN with the reason when the sign-in has ended', () => {
    expect(() => tokenOf('c1', { kind: 'needs_sign_in', reason: NO_REFRESH_TOKEN_REASON })).toThrow(
      expect.objectContaining({
        code: 'NEEDS_SIGN_IN',
        message: `the OAuth sign-in of connection c1 has ended (${NO_REFRESH_TOKEN_REASON}); sign in again`,
      }),
    );
  });

  it('should throw TOKEN_ENDPOINT_UNAVAILABLE when a renewal could not reach the server', () => {
    expect(() => tokenOf('c1', { kind: 'unavailable', message: 'timed out' })).toThrow(
      expect.objectContaining({
        code: 'TOKEN_ENDPOINT_UNAVAILABLE',
        message: 'the token could not be renewed just now: timed out',
      }),
    );
  });
});
