/**
 * One usage question, one SQL statement (I/O): whole days from `usage_day`, rolled-up hours from
 * `usage_hour`, and the calls not yet rolled up straight from `turn_call` (by workspace and start
 * time), summed per bucket and group. Which range each part reads is decided beforehand from the
 * roll-up's marks (`usageParts`, pure), so every bound is a constant the planner sees. Percentiles
 * are read from the summed histograms in `summarize` (pure).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { HISTOGRAM_COLUMNS, parseSparseHistogram } from './histogram.js';
import { usageParts, type RollupMarks, type TimeRange } from './parts.js';
import { ERROR_STATUSES_SQL, rawCallsSql, sparseHistogramSql } from './sql.js';
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

const SOURCE_COLUMNS = `bucket_start, status, operation_key, connection_id, calls, duration_count, duration_sum, ${HISTOGRAM_COLUMNS.join(', ')}`;

const iso = (ms: number) => new Date(ms).toISOString();

/** The statement and its parameters (pure). */
export function usageStatement(q: UsageQuery, marks: RollupMarks): { sql: string; params: unknown[] } {
  const day = q.bucket === UsageBucket.DAY;
  const parts = usageParts(q.from.getTime(), q.to.getTime(), day, marks);
  const params: unknown[] = [];
  const scope = (assistantColumn: string) => {
    params.push(q.workspaceId);
    if (q.assistantId === null) return '';
    params.push(q.assistantId);
    return ` and ${assistantColumn} = ?::uuid`;
  };
  const rolled = (table: string, r: TimeRange) => {
    const assistant = scope('assistant_id');
    params.push(iso(r.from), iso(r.to));
    return `select ${SOURCE_COLUMNS} from ${table}
  where workspace_id = ?::uuid${assistant} and bucket_start >= ?::timestamptz and bucket_start < ?::timestamptz`;
  };
  const sources: string[] = [];
  if (parts.days) sources.push(rolled('usage_day', parts.days));
  if (parts.hours) sources.push(rolled('usage_hour', parts.hours));
  if (parts.live) {
    // A call's assistant is its turn's: looked up (by primary key) only for an assistant's question.
    const assistant = scope('(select t.assistant_id from turn t where t.id = tc.turn_id)');
    params.push(iso(parts.live.from), iso(parts.live.to));
    const calls = rawCallsSql(
      `tc.workspace_id = ?::uuid${assistant} and tc.started_at >= ?::timestamptz and tc.started_at < ?::timestamptz`,
      { assistant: false, connection: q.groupBy === UsageGroupBy.CONNECTION },
    );
    sources.push(`select ${SOURCE_COLUMNS} from (${calls}) live`);
  }
  const sql = `
with src as (
  ${sources.join('\n  union all\n  ')}
)
select date_trunc('${day ? 'day' : 'hour'}', bucket_start, 'UTC') as bucket, ${GROUP_SQL[q.groupBy ?? 'NONE']} as grp,
  sum(calls)::float8 as calls, coalesce(sum(calls) filter (where status in ${ERROR_STATUSES_SQL}), 0)::float8 as errors,
  sum(duration_count)::float8 as duration_count, sum(duration_sum)::float8 as duration_sum,
  ${sparseHistogramSql()} as histogram
from src
group by 1, 2
order by 1, 2`;
  return { sql, params };
}

interface Raw {
  bucket: Date;
  grp: string | null;
  calls: number;
  errors: number;
  duration_count: number;
  duration_sum: number;
  histogram: string;
}

/** Runs the question with the roll-up's `marks`: rows per (bucket, group) that had calls, in bucket order. */
export async function queryUsage(em: EntityManager, q: UsageQuery, marks: RollupMarks): Promise<UsageRow[]> {
  const { sql, params } = usageStatement(q, marks);
  const rows = await em.getConnection().execute<Raw[]>(sql, params);
  return rows.map((r) => ({
    bucket: new Date(r.bucket),
    group: r.grp,
    calls: r.calls,
    errors: r.errors,
    durationCount: r.duration_count,
    durationSum: r.duration_sum,
    histogram: parseSparseHistogram(r.histogram),
  }));
}
