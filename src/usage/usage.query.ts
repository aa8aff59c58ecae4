/**
 * One usage question, one SQL statement (I/O): whole days from `usage_day`, rolled-up hours from
 * `usage_hour`, and the calls not yet rolled up straight from `turn_call`, summed per bucket and
 * group. Percentiles are read from the summed histograms in `summarize` (pure).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { HISTOGRAM_COLUMNS } from './histogram.js';
import { ERROR_STATUSES_SQL, rawCallsSql, sumHistogram, uuidFloorSql } from './sql.js';
import { UsageBucket } from './window.js';

export enum UsageGroupBy {
  TOOL = 'TOOL',
  CONNECTION = 'CONNECTION',
  STATUS = 'STATUS',
}

const GROUP_SQL: Record<UsageGroupBy | 'NONE', string> = {
  [UsageGroupBy.TOOL]: 'operation_key',
  [UsageGroupBy.CONNECTION]: 'connection_id::text',
  [UsageGroupBy.STATUS]: 'status',
  NONE: 'null::text',
};

export interface UsageRow {
  bucket: Date;
  group: string | null;
  calls: number;
  errors: number;
  durationCount: number;
  durationSum: number;
  histogram: number[];
}

export interface UsageQuery {
  workspaceId: string;
  assistantId: string | null;
  from: Date;
  to: Date;
  bucket: UsageBucket;
  groupBy: UsageGroupBy | null;
}

// Scalar subqueries (init plans), so each bound is a constant to the planner and reads an index range.
const HOURS_UNTIL = '(select hours_until from usage_rollup where id = 1)';
const DAYS_UNTIL = '(select days_until from usage_rollup where id = 1)';

const ROLLED = (table: string, lower: string, upper: string) => `
  select bucket_start, status, operation_key, connection_id, calls, duration_count, duration_sum, ${HISTOGRAM_COLUMNS.join(', ')}
  from ${table}
  where workspace_id = ?::uuid and (?::uuid is null or assistant_id = ?::uuid)
    and bucket_start >= ${lower} and bucket_start < ${upper}`;

function usageSql(bucket: UsageBucket, groupBy: UsageGroupBy | null): string {
  const day = bucket === UsageBucket.DAY;
  const liveFrom = `greatest(?::timestamptz, ${HOURS_UNTIL})`;
  const live = rawCallsSql(`tc.workspace_id = ?::uuid and (?::uuid is null or t.assistant_id = ?::uuid)
      and tc.id >= ${uuidFloorSql(`(${liveFrom} - interval '1 hour')`)}
      and tc.started_at >= ${liveFrom} and tc.started_at < ?::timestamptz`);
  return `
with src as (
  ${day ? `${ROLLED('usage_day', '?::timestamptz', `least(?::timestamptz, ${DAYS_UNTIL})`)} union all` : ''}
  ${ROLLED('usage_hour', day ? `greatest(?::timestamptz, ${DAYS_UNTIL})` : '?::timestamptz', `least(?::timestamptz, ${HOURS_UNTIL})`)}
  union all
  select bucket_start, status, operation_key, connection_id, calls, duration_count, duration_sum, ${HISTOGRAM_COLUMNS.join(', ')}
  from (${live}) live
)
select date_trunc('${day ? 'day' : 'hour'}', bucket_start, 'UTC') as bucket, ${GROUP_SQL[groupBy ?? 'NONE']} as grp,
  sum(calls)::bigint as calls, coalesce(sum(calls) filter (where status in ${ERROR_STATUSES_SQL}), 0)::bigint as errors,
  sum(duration_count)::bigint as duration_count, sum(duration_sum)::bigint as duration_sum, ${sumHistogram()}
from src
group by 1, 2
order by 1, 2`;
}

type Raw = Record<string, string | Date | null>;

/** Runs the question: rows per (bucket, group) that had calls, in bucket order. */
export async function queryUsage(em: EntityManager, q: UsageQuery): Promise<UsageRow[]> {
  const scope = [q.workspaceId, q.assistantId, q.assistantId];
  const from = q.from.toISOString();
  const to = q.to.toISOString();
  const params: unknown[] = [];
  if (q.bucket === UsageBucket.DAY) params.push(...scope, from, to);
  params.push(...scope, from, to);
  params.push(...scope, from, from, to);
  const rows = await em.getConnection().execute<Raw[]>(usageSql(q.bucket, q.groupBy), params);
  return rows.map((r) => ({
    bucket: new Date(r.bucket!),
    group: r.grp as string | null,
    calls: Number(r.calls),
    errors: Number(r.errors),
    durationCount: Number(r.duration_count),
    durationSum: Number(r.duration_sum),
    histogram: HISTOGRAM_COLUMNS.map((c) => Number(r[c])),
  }));
}
