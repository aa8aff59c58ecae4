import { describe, expect, it } from 'vitest';
import { parseSparseHistogram, HISTOGRAM_BUCKETS } from '../../../src/usage/histogram.js';
import { usageParts, type TimeRange } from '../../../src/usage/parts.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.UTC(2031, 0, 1);

/** Every hour of [from, to) in exactly one part, and each part on its table's edges. */
function expectTiled(from: number, to: number, inDays: boolean, hoursUntil: number, daysUntil: number) {
  const parts = usageParts(from, to, inDays, { hoursUntil, daysUntil });
  const covered = new Map<number, string>();
  for (const [name, r] of Object.entries(parts) as [string, TimeRange | null][]) {
    if (!r) continue;
    expect(r.from).toBeLessThan(r.to);
    for (let h = r.from; h < r.to; h += HOUR) {
      expect(covered.get(h), `hour ${h - BASE} in ${covered.get(h)} and ${name}`).toBeUndefined();
      covered.set(h, name);
    }
  }
  for (let h = from; h < to; h += HOUR) expect(covered.has(h), `hour ${h - BASE} missing`).toBe(true);
  expect([...covered.keys()].every((h) => h >= from && h < to)).toBe(true);
  if (parts.days) expect([parts.days.from % DAY, parts.days.to % DAY]).toEqual([0, 0]);
  // Rolled-up tables only for what they hold; the recorded calls only after the hour mark.
  if (parts.days) expect(parts.days.to).toBeLessThanOrEqual(daysUntil);
  if (parts.hours) expect(parts.hours.to).toBeLessThanOrEqual(hoursUntil);
  if (parts.live) expect(parts.live.from).toBeGreaterThanOrEqual(hoursUntil);
  return parts;
}

describe('usage parts', () => {
  it('should read days, then hours, then the recorded calls after the hour mark', () => {
    const parts = expectTiled(BASE, BASE + 30 * DAY, true, BASE + 29 * DAY + 5 * HOUR, BASE + 29 * DAY);
    expect(parts).toEqual({
      days: { from: BASE, to: BASE + 29 * DAY },
      hours: { from: BASE + 29 * DAY, to: BASE + 29 * DAY + 5 * HOUR },
      live: { from: BASE + 29 * DAY + 5 * HOUR, to: BASE + 30 * DAY },
    });
  });

  it('should never read usage_day for hourly buckets', () => {
    const parts = expectTiled(BASE, BASE + 2 * DAY, false, BASE + DAY + 3 * HOUR, BASE + DAY);
    expect(parts.days).toBeNull();
    expect(parts.hours).toEqual({ from: BASE, to: BASE + DAY + 3 * HOUR });
  });

  it('should read only recorded calls for a range after the marks, and none for one before', () => {
    expect(usageParts(BASE + 2 * DAY, BASE + 3 * DAY, true, { hoursUntil: BASE, daysUntil: BASE })).toEqual({
      days: null,
      hours: null,
      live: { from: BASE + 2 * DAY, to: BASE + 3 * DAY },
    });
    expect(
      usageParts(BASE, BASE + DAY, true, { hoursUntil: BASE + 5 * DAY, daysUntil: BASE + 5 * DAY }).live,
    ).toBeNull();
  });

  it('should tile every range against every pair of marks', () => {
    for (const inDays of [true, false]) {
      const step = inDays ? DAY : HOUR;
      for (let f = 0; f < 4; f++) {
        for (let n = 1; n < 4; n++) {
          for (let d = 0; d < 5; d++) {
            for (let extra = 0; extra < 30; extra += 7) {
              const daysUntil = BASE + d * DAY;
              expectTiled(
                BASE + f * step,
                BASE + (f + n) * step,
                inDays,
                daysUntil + extra * HOUR,
                daysUntil,
              );
            }
          }
        }
      }
    }
  });
});

describe('sparse histogram', () => {
  it('should read index:count pairs into all buckets', () => {
    const h = parseSparseHistogram('0:3,12:40,76:1000000');
    expect(h).toHaveLength(HISTOGRAM_BUCKETS);
    expect([h[0], h[12], h[76], h.reduce((a, b) => a + b, 0)]).toEqual([3, 40, 1_000_000, 1_000_043]);
    expect(parseSparseHistogram('')).toEqual(new Array(HISTOGRAM_BUCKETS).fill(0));
    expect(parseSparseHistogram(null)).toEqual(new Array(HISTOGRAM_BUCKETS).fill(0));
  });

  it.each(['x:1', '77:1', '1:', ':3', '1:2:3', '12', '5:1,6', '-1:2', '1:2.5'])(
    'should refuse %j',
    (text) => {
      expect(() => parseSparseHistogram(text)).toThrow(/not a sparse histogram/);
    },
  );
});
