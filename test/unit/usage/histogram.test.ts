import { describe, expect, it } from 'vitest';
import {
  bucketOf,
  bucketRange,
  DURATION_BOUNDS_MS,
  HISTOGRAM_BUCKETS,
  HISTOGRAM_COLUMNS,
  percentile,
} from '../../../src/usage/histogram.js';
import { mergeAdjacent, summarize } from '../../../src/usage/summary.js';
import { MAX_USAGE_BUCKETS, UsageBucket, usageWindow } from '../../../src/usage/window.js';

function histogramOf(durations: number[]): number[] {
  const h = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  for (const d of durations) h[bucketOf(d)]!++;
  return h;
}

describe('duration histogram', () => {
  it('should have the 77 buckets the migration created columns for', () => {
    expect(HISTOGRAM_BUCKETS).toBe(77);
    expect(HISTOGRAM_COLUMNS.at(-1)).toBe('d76');
    expect(DURATION_BOUNDS_MS.at(-1)).toBe(2 ** 20);
  });

  it.each([
    [0, 0],
    [1, 1],
    [2, 2],
    [9, 8],
    [10, 9],
    [1_048_575, 75],
    [1_048_576, 76],
    [10 ** 9, 76],
  ])('should put %d ms in bucket %d, as width_bucket does', (ms, bucket) => {
    expect(bucketOf(ms)).toBe(bucket);
    const { low, high } = bucketRange(bucket);
    expect(ms).toBeGreaterThanOrEqual(low);
    expect(ms).toBeLessThanOrEqual(high);
  });

  it('should keep every bucket from 16 ms up at most 25 % wider than its lower bound (19 % from 128 ms)', () => {
    for (let i = 1; i < DURATION_BOUNDS_MS.length; i++) {
      const low = DURATION_BOUNDS_MS[i - 1]!;
      if (low >= 16) expect(DURATION_BOUNDS_MS[i]! / low).toBeLessThanOrEqual(low >= 128 ? 1.2 : 1.25);
    }
  });

  it('should read nearest-rank percentiles within 10 % of the exact ones', () => {
    let seed = 1;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    for (let run = 0; run < 50; run++) {
      const durations = Array.from({ length: 1 + Math.floor(random() * 500) }, () =>
        Math.floor(Math.exp(random() * 13)),
      );
      const sorted = [...durations].sort((a, b) => a - b);
      for (const p of [0.5, 0.95]) {
        const exact = sorted[Math.ceil(p * sorted.length) - 1]!;
        const estimate = percentile(histogramOf(durations), p)!;
        expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(Math.max(0.5, 0.1 * exact));
      }
    }
  });

  it('should answer null without durations, and the lower bound past the last bound', () => {
    expect(percentile(histogramOf([]), 0.5)).toBeNull();
    expect(percentile(histogramOf([5_000_000]), 0.95)).toBe(2 ** 20);
  });
});

describe('usage window', () => {
  it('should floor and ceil to UTC edges whatever the offset written', () => {
    const w = usageWindow(
      new Date('2031-03-11T01:30:00+02:00'),
      new Date('2031-03-11T00:00:00.001Z'),
      UsageBucket.DAY,
    );
    expect(w).toEqual({
      ok: true,
      from: new Date('2031-03-10T00:00:00Z'),
      to: new Date('2031-03-12T00:00:00Z'),
      buckets: 2,
    });
  });

  it('should refuse an empty or reversed range and more buckets than the limit', () => {
    const at = new Date('2031-01-01T00:00:00Z');
    expect(usageWindow(at, at, UsageBucket.HOUR)).toEqual({
      ok: false,
      message: '"to" must be after "from"',
    });
    const end = new Date(at.getTime() + MAX_USAGE_BUCKETS * 3_600_000);
    expect(usageWindow(at, end, UsageBucket.HOUR).ok).toBe(true);
    const over = usageWindow(at, new Date(end.getTime() + 1), UsageBucket.HOUR);
    expect(over.ok).toBe(false);
  });
});

describe('summarize', () => {
  const row = (bucket: number, group: string | null, calls: number, errors: number, d: number[]) => ({
    bucket: new Date(bucket),
    group,
    calls,
    errors,
    durationCount: d.length,
    durationSum: d.reduce((a, b) => a + b, 0),
    histogram: histogramOf(d),
  });

  it('should add up a (bucket, group) that comes from the roll-up and from the recorded calls', () => {
    const merged = mergeAdjacent([
      row(0, 'a', 2, 1, [3, 5]),
      row(0, 'a', 1, 0, [300]),
      row(0, 'b', 1, 0, [4]),
      row(0, null, 1, 0, []),
      row(0, null, 2, 2, [9]),
      row(1, null, 1, 1, [1]),
    ]);
    expect(merged).toEqual([
      row(0, 'a', 3, 1, [3, 5, 300]),
      row(0, 'b', 1, 0, [4]),
      row(0, null, 3, 2, [9]),
      row(1, null, 1, 1, [1]),
    ]);
  });

  it('should add buckets into series totals and the grand total', () => {
    const { total, series } = summarize([
      row(0, 'b', 2, 1, [3, 5]),
      row(0, 'a', 1, 0, [4]),
      row(1, 'b', 1, 1, []),
    ]);
    expect(series.map((s) => [s.group, s.total.calls, s.total.errors, s.points.length])).toEqual([
      ['a', 1, 0, 1],
      ['b', 3, 2, 2],
    ]);
    expect(total).toMatchObject({ calls: 4, errors: 2, errorRate: 0.5, meanDurationMs: 4, p50DurationMs: 4 });
  });
});
