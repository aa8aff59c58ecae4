/**
 * One usage question, one SQL statement (I/O): whole days from `usage_day`, rolled-up hours from
 * `usage_hour`, and the calls not yet rolled up straight from `turn_call` (by workspace and start
 * time), summed per bucket and group. Which range each part reads is decided beforehand from the
 * roll-up's marks (`usageParts`, pure), so every bound is a constant the planner sees. Percentiles
 * are read from the summed histograms in `summarize` (pure).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7Floor } from '../db/ids.js';
import { HISTOGRAM_COLUMNS, parseSparseHistogram } from './histogram.js';
import { usageParts, type RollupMarks, type TimeRange } from './parts.js';
import { BOUNDS_SQL, ERROR_STATUSES_SQL, sparseHistogramSql } from './sql.js';
import { mergeAdjacent } from './summary.js';
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

/** The group of a recorded call (the live part reads `turn_call tc`, and `operation o` for CONNECTION). */
const LIVE_GROUP_SQL: Record<UsageGroupBy | 'NONE', string> = {
  [UsageGroupBy.TOOL]: 'tc.operation_key',
  [UsageGroupBy.CONNECTION]: 'o.connection_id::text',
  [UsageGroupBy.STATUS]: 'tc.status',
  NONE: 'null::text',
};

const iso = (ms: number) => new Date(ms).toISOString();
const HOUR_MS = 3_600_000;

/**
 * The statement and its parameters (pure). Its rows are per (bucket, group) and part: the rolled-up
 * tables summed together, and the recorded calls counted per duration bucket straight into the
 * sparse text (no histogram columns for them, which also keeps planning short); the same (bucket,
 * group) may come from both, adjacent in the order, and is added up by `mergeAdjacent`.
 */
export function usageStatement(q: UsageQuery, marks: RollupMarks): { sql: string; params: unknown[] } {
  const day = q.bucket === UsageBucket.DAY;
  const unit = day ? 'day' : 'hour';
  const parts = usageParts(q.from.getTime(), q.to.getTime(), day, marks);
  const params: unknown[] = [];
  const scope = (assistantColumn: string) => {
    params.push(q.workspaceId);
    if (q.assistantId === null) return '';
    params.push(q.assistantId);
    return ` and ${assistantColumn} = ?::uuid`;
  };
  const rolledFrom = (table: string, r: TimeRange) => {
    const assistant = scope('assistant_id');
    params.push(iso(r.from), iso(r.to));
    return `select ${SOURCE_COLUMNS} from ${table}
      where workspace_id = ?::uuid${assistant} and bucket_start >= ?::timestamptz and bucket_start < ?::timestamptz`;
  };
  const selects: string[] = [];
  const rolled: string[] = [];
  if (parts.days) rolled.push(rolledFrom('usage_day', parts.days));
  if (parts.hours) rolled.push(rolledFrom('usage_hour', parts.hours));
  if (rolled.length > 0) {
    selects.push(`select date_trunc('${unit}', bucket_start, 'UTC') as bucket, ${GROUP_SQL[q.groupBy ?? 'NONE']} as grp,
    sum(calls)::float8 as calls, coalesce(sum(calls) filter (where status in ${ERROR_STATUSES_SQL}), 0)::float8 as errors,
    sum(duration_count)::float8 as duration_count, sum(duration_sum)::float8 as duration_sum,
    ${sparseHistogramSql()} as histogram
  from (${rolled.join('\n    union all\n    ')}) rolled
  group by 1, 2`);
  }
  if (parts.live) {
    // A call's assistant is its turn's: looked up (by primary key) only for an assistant's question.
    const assistant = scope('(select t.assistant_id from turn t where t.id = tc.turn_id)');
    // Call ids are UUIDv7 made at the call's start: an id range (an hour wider, as the roll-up's)
    // keeps the read to the partitions of those days (turn_call is partitioned by id).
    params.push(
      uuidv7Floor(parts.live.from - HOUR_MS),
      uuidv7Floor(parts.live.to + HOUR_MS),
      iso(parts.live.from),
      iso(parts.live.to),
    );
    const connection =
      q.groupBy === UsageGroupBy.CONNECTION ? ' left join operation o on o.id = tc.operation_id' : '';
    selects.push(`select bucket, grp, sum(n)::float8 as calls, sum(e)::float8 as errors, sum(dc)::float8 as duration_count,
    sum(ds)::float8 as duration_sum, coalesce(string_agg(b || ':' || dc, ',') filter (where b is not null), '') as histogram
  from (select date_trunc('${unit}', tc.started_at, 'UTC') as bucket, ${LIVE_GROUP_SQL[q.groupBy ?? 'NONE']} as grp,
      width_bucket(tc.duration_ms, ${BOUNDS_SQL}) as b, count(*) as n,
      count(*) filter (where tc.status in ${ERROR_STATUSES_SQL}) as e, count(tc.duration_ms) as dc,
      coalesce(sum(tc.duration_ms), 0) as ds
    from turn_call tc${connection}
    where tc.workspace_id = ?::uuid${assistant} and tc.id >= ?::uuid and tc.id < ?::uuid
      and tc.started_at >= ?::timestamptz and tc.started_at < ?::timestamptz
    group by 1, 2, 3) live
  group by 1, 2`);
  }
  const sql = `${selects.join('\nunion all\n')}\norder by 1, 2`;
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
  return mergeAdjacent(
    rows.map((r) => ({
      bucket: new Date(r.bucket),
      group: r.grp,
      calls: r.calls,
      errors: r.errors,
      durationCount: r.duration_count,
      durationSum: r.duration_sum,
      histogram: parseSparseHistogram(r.histogram),
    })),
  );
}
