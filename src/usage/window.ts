/**
 * The time window of a usage question (pure): buckets are whole UTC hours or UTC days; `from` is
 * floored and `to` ceiled to bucket edges, so every bucket answered is whole.
 */

export enum UsageBucket {
  HOUR = 'HOUR',
  DAY = 'DAY',
}

export const BUCKET_MS: Record<UsageBucket, number> = {
  [UsageBucket.HOUR]: 3_600_000,
  [UsageBucket.DAY]: 86_400_000,
};

/** At most this many buckets per question: 31 days of hours, or about two years of days. */
export const MAX_USAGE_BUCKETS = 744;

export type UsageWindow =
  { ok: true; from: Date; to: Date; buckets: number } | { ok: false; message: string };

/** Floors `from` and ceils `to` to UTC bucket edges, and applies the limits. */
export function usageWindow(from: Date, to: Date, bucket: UsageBucket): UsageWindow {
  const size = BUCKET_MS[bucket];
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
    return { ok: false, message: '"from" and "to" must be date-times' };
  }
  if (to.getTime() <= from.getTime()) return { ok: false, message: '"to" must be after "from"' };
  const start = Math.floor(from.getTime() / size) * size;
  const end = Math.ceil(to.getTime() / size) * size;
  const buckets = (end - start) / size;
  if (buckets > MAX_USAGE_BUCKETS) {
    return {
      ok: false,
      message: `this asks for ${buckets} ${bucket === UsageBucket.HOUR ? 'hours' : 'days'}; at most ${MAX_USAGE_BUCKETS} buckets are answered: shorten the range${bucket === UsageBucket.HOUR ? ' or use DAY buckets' : ''}`,
    };
  }
  return { ok: true, from: new Date(start), to: new Date(end), buckets };
}
