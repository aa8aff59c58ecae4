/**
 * Health of tool sources and operations for the ops console (issue 28), from the usage roll-up:
 * whole hours from `usage_hour`, and only the hours after its mark from the recorded calls (the
 * live edge), as every usage question (parts.ts). Pure: the window and the statement; running it
 * is `health.query.ts`.
 *
 * One statement answers a whole page of connections (or operations): counts per status and a
 * duration histogram per subject, and calls and errors per subject and hour for the chart, as two
 * grouping sets of one scan. The number of statements never depends on the number of subjects.
 */
import { uuidv7Floor } from '../db/ids.js';
import { HISTOGRAM_COLUMNS } from './histogram.js';
import { usageParts, type RollupMarks } from './parts.js';
import { ERROR_STATUSES_SQL, rawCallsSql, sparseHistogramSql } from './sql.js';

export enum HealthWindow {
  HOUR = 'HOUR',
  DAY = 'DAY',
  WEEK = 'WEEK',
}

const HOUR_MS = 3_600_000;
const WINDOW_HOURS: Record<HealthWindow, number> = {
  [HealthWindow.HOUR]: 1,
  [HealthWindow.DAY]: 24,
  [HealthWindow.WEEK]: 24 * 7,
};

/**
 * The whole UTC hours that cover the window ending at `until`: from the hour holding
 * `until - window` to the end of the hour holding `until`. So "the last hour" at 10:20 is
 * 09:00–11:00: roll-ups are per hour, and a part of an hour cannot be told from a roll-up.
 */
export function healthRange(window: HealthWindow, until: number): { from: number; to: number } {
  const to = Math.ceil((until + 1) / HOUR_MS) * HOUR_MS;
  const from = Math.floor((until - WINDOW_HOURS[window] * HOUR_MS) / HOUR_MS) * HOUR_MS;
  return { from, to };
}

/** What the statement groups by. */
export type HealthSubject =
  /** Connections by id. */
  | { kind: 'connection'; ids: string[] }
  /** Operations by key within their workspace (calls keep the key, the roll-up too). */
  | { kind: 'operation'; keys: { workspaceId: string; key: string }[] };

/** The subject's group text as the statement returns it: a connection id, or `workspace:key`. */
export const operationGroup = (workspaceId: string, key: string): string => `${workspaceId}:${key}`;

/**
 * The statement and its parameters (each list travels as one JSON parameter). Its rows: `(grp, status, null bucket)` with the status's
 * calls and sparse histogram, and `(grp, null status, bucket)` with the hour's calls and errors.
 */
export function healthStatement(
  subject: HealthSubject,
  workspaceIds: readonly string[],
  range: { from: number; to: number },
  marks: RollupMarks,
): { sql: string; params: unknown[] } {
  const parts = usageParts(range.from, range.to, false, marks);
  const grp =
    subject.kind === 'connection' ? 'connection_id::text' : `workspace_id::text || ':' || operation_key`;
  const filter =
    subject.kind === 'connection'
      ? 'connection_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])'
      : `workspace_id::text || ':' || operation_key = any(array(select jsonb_array_elements_text(?::jsonb)))`;
  const filterValue =
    subject.kind === 'connection'
      ? subject.ids
      : subject.keys.map((k) => operationGroup(k.workspaceId, k.key));
  const params: unknown[] = [];
  const columns = `bucket_start, ${grp} as grp, status, calls, duration_count, duration_sum, ${HISTOGRAM_COLUMNS.join(', ')}`;
  const sources: string[] = [];
  if (parts.hours) {
    sources.push(`select ${columns} from usage_hour
      where workspace_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[]) and bucket_start >= ?::timestamptz and bucket_start < ?::timestamptz and ${filter}`);
    params.push(
      JSON.stringify(workspaceIds),
      new Date(parts.hours.from).toISOString(),
      new Date(parts.hours.to).toISOString(),
      JSON.stringify(filterValue),
    );
  }
  if (parts.live) {
    // The live edge only: ids are UUIDv7 made at the call's start, so an id range (an hour wider,
    // as the roll-up's) keeps the read to the partitions of those hours.
    const live = rawCallsSql(
      `tc.workspace_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[]) and tc.id >= ?::uuid and tc.id < ?::uuid
        and tc.started_at >= ?::timestamptz and tc.started_at < ?::timestamptz`,
    );
    sources.push(`select ${columns} from (${live}) live where ${filter}`);
    params.push(
      JSON.stringify(workspaceIds),
      uuidv7Floor(parts.live.from - HOUR_MS),
      uuidv7Floor(parts.live.to + HOUR_MS),
      new Date(parts.live.from).toISOString(),
      new Date(parts.live.to).toISOString(),
      JSON.stringify(filterValue),
    );
  }
  if (sources.length === 0) return { sql: 'select null::text as grp where false', params: [] };
  const sql = `select grp, status, bucket_start as bucket, sum(calls)::float8 as calls,
      coalesce(sum(calls) filter (where status in ${ERROR_STATUSES_SQL}), 0)::float8 as errors,
      ${sparseHistogramSql()} as histogram
    from (${sources.join('\n    union all\n    ')}) s
    group by grouping sets ((grp, status), (grp, bucket_start))
    order by grp, bucket_start nulls first, status`;
  return { sql, params };
}
