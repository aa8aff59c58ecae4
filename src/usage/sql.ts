/**
 * SQL pieces shared by the roll-up job and the usage query (pure: strings only). The histogram's
 * bucket of a duration is `width_bucket(duration_ms, BOUNDS)`, the same index as `bucketOf`.
 */
import { ERROR_STATUSES } from '../turns/call-status.js';
import { DURATION_BOUNDS_MS, HISTOGRAM_COLUMNS } from './histogram.js';

export const BOUNDS_SQL = `array[${DURATION_BOUNDS_MS.join(',')}]::int[]`;

/** Statuses that count as errors (`turns/call-status.ts#ERROR_STATUSES`), as an SQL list. */
export const ERROR_STATUSES_SQL = `(${ERROR_STATUSES.map((status) => `'${status}'`).join(',')})`;

/** The lowest UUIDv7 of an instant (a `timestamptz` SQL expression): call ids are UUIDv7 made at the call's start. */
export function uuidFloorSql(instant: string): string {
  return `(lpad(to_hex(floor(extract(epoch from ${instant}) * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid`;
}

export const KEY_COLUMNS = [
  'workspace_id',
  'assistant_id',
  'operation_key',
  'connection_id',
  'status',
] as const;

/** `sum(d0) as d0, …`, or with a prefix. */
export function sumHistogram(prefix = ''): string {
  return HISTOGRAM_COLUMNS.map((c) => `coalesce(sum(${prefix}${c}), 0)::bigint as ${c}`).join(', ');
}

/**
 * The summed histogram as one text column, only its non-empty buckets: `index:count,…` (read by
 * `parseSparseHistogram`). One short string per row instead of 77 numbers to send and parse.
 */
export function sparseHistogramSql(): string {
  const parts = HISTOGRAM_COLUMNS.map((c, i) => `case when sum(${c}) <> 0 then '${i}:' || sum(${c}) end`);
  return `concat_ws(',', ${parts.join(', ')})`;
}

/** Raw calls as roll-up rows (one per call), with the bucket column `bucket_start` at the hour. */
export function rawCallsSql(where: string): string {
  // The duration's bucket is computed once per call, then spread over the histogram's columns.
  const histogram = HISTOGRAM_COLUMNS.map((c, i) => `(b = ${i})::int as ${c}`).join(', ');
  return `select bucket_start, workspace_id, assistant_id, operation_key, connection_id, status, 1 as calls,
      (duration_ms is not null)::int as duration_count, coalesce(duration_ms, 0)::bigint as duration_sum, ${histogram}
    from (select date_trunc('hour', tc.started_at, 'UTC') as bucket_start, tc.workspace_id, t.assistant_id, tc.operation_key,
        o.connection_id, tc.status, tc.duration_ms, width_bucket(tc.duration_ms, ${BOUNDS_SQL}) as b
      from turn_call tc join turn t on t.id = tc.turn_id left join operation o on o.id = tc.operation_id
      where ${where}) calls`;
}
