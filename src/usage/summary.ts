/** Usage rows into series and statistics (pure). */
import { addInto, HISTOGRAM_BUCKETS, percentile } from './histogram.js';

export interface UsageCounts {
  calls: number;
  errors: number;
  durationCount: number;
  durationSum: number;
  histogram: number[];
}

export interface UsageStats {
  calls: number;
  errors: number;
  /** errors / calls; 0 without calls. */
  errorRate: number;
  meanDurationMs: number | null;
  p50DurationMs: number | null;
  p95DurationMs: number | null;
}

export interface UsagePointStats extends UsageStats {
  start: Date;
}

export interface UsageSeriesSummary {
  group: string | null;
  total: UsageStats;
  points: UsagePointStats[];
}

export function stats(c: UsageCounts): UsageStats {
  return {
    calls: c.calls,
    errors: c.errors,
    errorRate: c.calls === 0 ? 0 : c.errors / c.calls,
    meanDurationMs: c.durationCount === 0 ? null : c.durationSum / c.durationCount,
    p50DurationMs: percentile(c.histogram, 0.5),
    p95DurationMs: percentile(c.histogram, 0.95),
  };
}

const empty = (): UsageCounts => ({
  calls: 0,
  errors: 0,
  durationCount: 0,
  durationSum: 0,
  histogram: new Array<number>(HISTOGRAM_BUCKETS).fill(0),
});

function add(into: UsageCounts, row: UsageCounts): void {
  into.calls += row.calls;
  into.errors += row.errors;
  into.durationCount += row.durationCount;
  into.durationSum += row.durationSum;
  addInto(into.histogram, row.histogram);
}

/**
 * Rows in (bucket, group) order with the same (bucket, group) possibly twice in a row (from the
 * roll-up and from the recorded calls), as one row each: counts and histograms added.
 */
export function mergeAdjacent<R extends UsageCounts & { bucket: Date; group: string | null }>(
  rows: R[],
): R[] {
  const out: R[] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (last && last.bucket.getTime() === row.bucket.getTime() && last.group === row.group) add(last, row);
    else out.push(row);
  }
  return out;
}

/**
 * Rows per (bucket, group), in bucket order, into one series per group (in order of first
 * appearance, then by group) with its points and total, and the total of everything.
 */
export function summarize(rows: readonly (UsageCounts & { bucket: Date; group: string | null })[]): {
  total: UsageStats;
  series: UsageSeriesSummary[];
} {
  const total = empty();
  const groups = new Map<string | null, { total: UsageCounts; points: UsagePointStats[] }>();
  for (const row of rows) {
    add(total, row);
    let g = groups.get(row.group);
    if (!g) {
      g = { total: empty(), points: [] };
      groups.set(row.group, g);
    }
    add(g.total, row);
    g.points.push({ start: row.bucket, ...stats(row) });
  }
  const series = [...groups.entries()]
    .sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))
    .map(([group, g]) => ({ group, total: stats(g.total), points: g.points }));
  return { total: stats(total), series };
}
