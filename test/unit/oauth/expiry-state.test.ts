import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REFRESH_SKEW_MS,
  expiresAtFrom,
  isUnexpired,
  needsRefresh,
} from '../../../src/oauth/expiry.js';
import {
  DEFAULT_SIGN_IN_TTL_MS,
  describeStateProblem,
  hashState,
  isWellFormedState,
  signInStateProblem,
} from '../../../src/oauth/state.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('expiry', () => {
  it('should count expires_in from the moment the request was sent', () => {
    expect(expiresAtFrom(3600, T0)?.getTime()).toBe(T0 + 3_600_000);
    expect(expiresAtFrom(1.5, T0)?.getTime()).toBe(T0 + 1_500);
  });

  it.each([[undefined], [Number.NaN], [-5], [Number.POSITIVE_INFINITY]])(
    'should give no expiry for expires_in %s',
    (value) => {
      expect(expiresAtFrom(value, T0)).toBeNull();
    },
  );

  it.each([
    ['more than 60 s left', 61_000, false],
    ['exactly 60 s left', 60_000, true],
    ['10 s left', 10_000, true],
    ['already expired', -1_000, true],
  ])('should decide whether to renew with %s', (_label, leftMs, expected) => {
    expect(DEFAULT_REFRESH_SKEW_MS).toBe(60_000);
    expect(needsRefresh(new Date(T0 + leftMs), T0)).toBe(expected);
  });

  it('should never renew a token without an expiry, and take it as unexpired', () => {
    expect(needsRefresh(null, T0)).toBe(false);
    expect(isUnexpired(null, T0)).toBe(true);
  });

  it('should take a token as expired from its expiry on', () => {
    expect(isUnexpired(new Date(T0 + 1), T0)).toBe(true);
    expect(isUnexpired(new Date(T0), T0)).toBe(false);
  });
});

describe('sign-in state', () => {
  it('should accept what we generate and refuse what cannot be ours', () => {
    expect(isWellFormedState('Qm9vUV0gZGF0YSBmb3IgdGhlIHN0YXRlIHZhbHVlIQ')).toBe(true);
    expect(isWellFormedState(null)).toBe(false);
    expect(isWellFormedState('')).toBe(false);
    expect(isWellFormedState('short')).toBe(false);
    expect(isWellFormedState('has spaces and <tags> in it....')).toBe(false);
    expect(isWellFormedState('a'.repeat(257))).toBe(false);
  });

  it('should store a SHA-256, never the state itself', () => {
    const state = 'Qm9vUV0gZGF0YSBmb3IgdGhlIHN0YXRlIHZhbHVlIQ';
    expect(hashState(state)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashState(state)).not.toContain(state);
    expect(hashState(state)).toBe(hashState(state));
    expect(hashState(`${state}x`)).not.toBe(hashState(state));
  });

  it.each([
    ['no row', null, 'UNKNOWN'],
    ['a used row', { usedAt: new Date(T0 - 1000), expiresAt: new Date(T0 + 1000) }, 'USED'],
    ['an expired row', { usedAt: null, expiresAt: new Date(T0) }, 'EXPIRED'],
    ['a used and expired row', { usedAt: new Date(T0 - 5000), expiresAt: new Date(T0 - 1000) }, 'USED'],
    ['a fresh row', { usedAt: null, expiresAt: new Date(T0 + DEFAULT_SIGN_IN_TTL_MS) }, null],
  ] as const)('should judge %s', (_label, row, expected) => {
    expect(signInStateProblem(row, T0)).toBe(expected);
  });

  it('should give a 10-minute lifetime and a sentence for every problem', () => {
    expect(DEFAULT_SIGN_IN_TTL_MS).toBe(600_000);
    for (const p of ['MISSING', 'UNKNOWN', 'USED', 'EXPIRED'] as const) {
      expect(describeStateProblem(p)).toMatch(/Start the sign-in again/);
    }
    expect(describeStateProblem('USED')).toMatch(/already used/);
    expect(describeStateProblem('EXPIRED')).toMatch(/expired/);
  });
});
