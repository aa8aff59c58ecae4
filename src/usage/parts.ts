/**
 * Where each part of a usage question is read from (pure). The roll-up's marks say how far
 * `usage_day` and `usage_hour` are complete (`daysUntil` ≤ `hoursUntil`, both on bucket edges);
 * whole days come from `usage_day` (DAY buckets only), hours from `usage_hour`, and only the tail
 * after `hoursUntil` from the recorded calls. The three ranges tile [from, to) with no gap and no
 * overlap, so every call is counted exactly once.
 *
 * Marks only ever move forward, and a mark's rows commit with it: marks read earlier (older than
 * the statement that uses them) still tile correctly, they only leave more to the recorded calls.
 */

export interface RollupMarks {
  /** `usage_hour` holds every hour before this (ms since the epoch, on an hour edge). */
  hoursUntil: number;
  /** `usage_day` holds every UTC day before this (ms, on a day edge); never after `hoursUntil`. */
  daysUntil: number;
}

export interface TimeRange {
  from: number;
  to: number;
}

export interface UsageParts {
  days: TimeRange | null;
  hours: TimeRange | null;
  live: TimeRange | null;
}

const range = (from: number, to: number): TimeRange | null => (from < to ? { from, to } : null);

/** The parts of [from, to) (ms): `days` only when the answer is in days. */
export function usageParts(from: number, to: number, inDays: boolean, marks: RollupMarks): UsageParts {
  const hoursUntil = marks.hoursUntil;
  const daysUntil = Math.min(marks.daysUntil, hoursUntil);
  const hoursFrom = inDays ? Math.max(from, daysUntil) : from;
  return {
    days: inDays ? range(from, Math.min(to, daysUntil)) : null,
    hours: range(hoursFrom, Math.min(to, hoursUntil)),
    live: range(Math.max(from, hoursUntil), to),
  };
}
