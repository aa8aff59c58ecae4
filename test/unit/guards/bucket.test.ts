import { describe, expect, it } from 'vitest';
import {
  canSpend,
  emptyLease,
  maxLease,
  nextLease,
  refilled,
  retryAfterMs,
} from '../../../src/guards/bucket.js';

const PER_MINUTE_100 = { calls: 100, periodMs: 60_000, burst: 5 };
const T0 = 1_800_000_000_000;

describe('token bucket arithmetic', () => {
  it('should refill at calls per period, never past the burst', () => {
    expect(refilled(0, T0, T0 + 600, PER_MINUTE_100)).toBeCloseTo(1, 9);
    expect(refilled(0, T0, T0 + 60_000, PER_MINUTE_100)).toBe(5);
    expect(refilled(2, T0, T0, PER_MINUTE_100, 2)).toBe(4);
    // An instance whose clock is behind the last refill adds nothing.
    expect(refilled(1, T0, T0 - 5_000, PER_MINUTE_100)).toBe(1);
  });

  it('should say when the next token comes', () => {
    expect(retryAfterMs(0, PER_MINUTE_100)).toBe(600);
    expect(retryAfterMs(0.5, PER_MINUTE_100)).toBe(300);
    expect(retryAfterMs(0.999_99, PER_MINUTE_100)).toBe(1);
  });
});

describe('leases', () => {
  it('should lease at most 2 % of the limit (so two instances hold it within 5 %), at least 1', () => {
    expect(maxLease(PER_MINUTE_100)).toBe(2);
    expect(maxLease({ calls: 10, periodMs: 1_000, burst: 10 })).toBe(1);
    expect(maxLease({ calls: 100_000, periodMs: 1_000, burst: 500 })).toBe(500);
  });

  it('should double a lease spent within its TTL, and halve one that expired unspent, giving it back', () => {
    const spec = { calls: 10_000, periodMs: 1_000, burst: 1_000 };
    expect(nextLease(emptyLease(), T0, 1_000, spec)).toEqual({ want: 1, giveBack: 0 });
    expect(nextLease({ tokens: 0, size: 8, takenAt: T0 }, T0 + 10, 1_000, spec)).toEqual({
      want: 16,
      giveBack: 0,
    });
    expect(nextLease({ tokens: 6, size: 8, takenAt: T0 }, T0 + 1_000, 1_000, spec)).toEqual({
      want: 4,
      giveBack: 6,
    });
    expect(nextLease({ tokens: 0, size: 8, takenAt: T0 }, T0 + 5_000, 1_000, spec)).toEqual({
      want: 8,
      giveBack: 0,
    });
    expect(nextLease({ tokens: 0, size: 200, takenAt: T0 }, T0 + 1, 1_000, spec)).toEqual({
      want: 200,
      giveBack: 0,
    });
  });

  it('should not spend an expired lease', () => {
    expect(canSpend({ tokens: 3, size: 4, takenAt: T0 }, T0 + 999, 1_000)).toBe(true);
    expect(canSpend({ tokens: 3, size: 4, takenAt: T0 }, T0 + 1_000, 1_000)).toBe(false);
    expect(canSpend({ tokens: 0, size: 4, takenAt: T0 }, T0, 1_000)).toBe(false);
  });
});
