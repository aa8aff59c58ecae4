/**
 * Call durations as a fixed log-scale histogram (pure), so that usage roll-ups can add histograms
 * of many hours and still answer p50 and p95.
 *
 * Bucket 0 holds 0 ms; bucket i (1…75) holds [BOUNDS[i-1], BOUNDS[i]) ms; bucket 76 holds
 * everything from BOUNDS[75] = 2^20 ms (about 17.5 minutes) up. The bounds are the distinct
 * values of ceil(2^(k/4)) for k = 0…80: each bucket is 2^(1/4) (19 %) wider than the one before
 * (a little more below 128 ms, from rounding to whole milliseconds), so
 * a percentile read as its bucket's midpoint is within about 9 % of the exact value (exact up to
 * 7 ms, where each bucket holds one whole millisecond). The same bounds are used by SQL
 * (`width_bucket(duration_ms, BOUNDS)`), which gives the same index as `bucketOf`.
 */

function bounds(): number[] {
  const out: number[] = [];
  for (let k = 0; k <= 80; k++) {
    const v = Math.ceil(2 ** (k / 4));
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** Ascending lower bounds (ms) of buckets 1…76. */
export const DURATION_BOUNDS_MS: readonly number[] = bounds();

/** Number of buckets; the roll-up tables have one column per bucket (`d0` … `d76`). */
export const HISTOGRAM_BUCKETS = DURATION_BOUNDS_MS.length + 1;

/** The column names of the histogram, in bucket order. */
export const HISTOGRAM_COLUMNS: readonly string[] = Array.from(
  { length: HISTOGRAM_BUCKETS },
  (_, i) => `d${i}`,
);

/** The bucket of a duration in whole milliseconds: how many bounds are ≤ it (width_bucket's rule). */
export function bucketOf(durationMs: number): number {
  let lo = 0;
  let hi = DURATION_BOUNDS_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (DURATION_BOUNDS_MS[mid]! <= durationMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The whole milliseconds bucket `i` holds: [low, high]; `high` is Infinity for the last one. */
export function bucketRange(i: number): { low: number; high: number } {
  const low = i === 0 ? 0 : DURATION_BOUNDS_MS[i - 1]!;
  const high = i === 0 ? 0 : i < DURATION_BOUNDS_MS.length ? DURATION_BOUNDS_MS[i]! - 1 : Infinity;
  return { low, high };
}

/**
 * The nearest-rank percentile `p` (0 < p ≤ 1) of the durations counted in `histogram`, read as the
 * midpoint of its bucket (the overflow bucket answers its lower bound). Null when nothing counted.
 */
export function percentile(histogram: readonly number[], p: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= rank) {
      const { low, high } = bucketRange(i);
      return high === Infinity ? low : (low + high) / 2;
    }
  }
  return null;
}

/** Adds `from` into `into`, bucket by bucket. */
export function addInto(into: number[], from: readonly number[]): void {
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + from[i]!;
}

/**
 * A histogram sent as its non-empty buckets, `index:count,…` (`sparseHistogramSql`), back into all
 * HISTOGRAM_BUCKETS counts. Empty text: nothing counted. Read character by character: a question
 * parses hundreds of these.
 */
export function parseSparseHistogram(text: string | null): number[] {
  const out = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  if (!text) return out;
  const bad = () => new Error(`not a sparse histogram: "${text.slice(0, 100)}"`);
  let i = 0;
  while (i < text.length) {
    let index = 0;
    let digits = 0;
    for (let c = text.charCodeAt(i++); c !== 58; c = text.charCodeAt(i++)) {
      if (!(c >= 48 && c <= 57)) throw bad();
      index = index * 10 + (c - 48);
      digits++;
    }
    let count = 0;
    let countDigits = 0;
    for (let c = text.charCodeAt(i++); i <= text.length && c !== 44; c = text.charCodeAt(i++)) {
      if (!(c >= 48 && c <= 57)) throw bad();
      count = count * 10 + (c - 48);
      countDigits++;
    }
    if (digits === 0 || countDigits === 0 || index >= HISTOGRAM_BUCKETS) throw bad();
    out[index] = count;
  }
  return out;
}
