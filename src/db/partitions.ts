/**
 * Daily partitions of `turn_call` and `turn_event` (issue 15; created by migration
 * 20261201110000): the service creates each UTC day's partitions ahead of time, moves any rows that
 * landed in a table's DEFAULT partition into their day, and, with a retention setting, drops whole
 * days older than it. The ledger is never touched: it keeps its own copy of what it shows, and its
 * link to a dropped call resolves to null.
 *
 * - `turn_call` is partitioned by id (UUIDv7, made at the call's start): a day is the id range
 *   between the UUIDv7 floors of two UTC midnights.
 * - `turn_event` is partitioned by `created_at`.
 *
 * A day's partition is made as a plain table and then ATTACHed: attaching locks the parent only
 * against other schema changes (SHARE UPDATE EXCLUSIVE), so calls keep being recorded meanwhile.
 * Dropping a day needs a brief exclusive lock on the parent; every statement here runs under a
 * short `lock_timeout`, so maintenance gives way to the call path and tries again at its next run.
 * Instances may run it at once: each step holds a transaction-level advisory lock.
 *
 * The pure part (days, names, bounds, what to create and drop) is exported for unit tests; the I/O
 * is `PartitionMaintainer`.
 */
import pg from 'pg';
import type { Logger } from '../logger.js';
import { uuidv7Floor } from './ids.js';

export const DAY_MS = 86_400_000;
/** Days created ahead of today (UTC), so that midnight never finds its partition missing. */
export const DEFAULT_PARTITION_AHEAD_DAYS = 2;
/** Maintenance runs this often (and at start); with two days ahead, a missed run is harmless. */
export const DEFAULT_PARTITION_EVERY_MS = 3_600_000;
/** How long a maintenance statement waits for a lock before giving way to the call path. */
export const PARTITION_LOCK_TIMEOUT_MS = 1_000;
/** Serialises maintenance across instances (pg_advisory_xact_lock key). */
const ADVISORY_KEY = 7_146_151_501;

export type PartitionedTable = 'turn_call' | 'turn_event';
export const PARTITIONED_TABLES: readonly PartitionedTable[] = ['turn_call', 'turn_event'];

/** The UTC day (its midnight, ms) of an instant. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** `turn_call_p20261201` for the day starting at `day` (UTC midnight, ms). */
export function partitionName(table: PartitionedTable, day: number): string {
  return `${table}_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The day a partition's name stands for, or null for another table (the default partition). */
export function partitionDay(table: PartitionedTable, name: string): number | null {
  const m = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})$`).exec(name);
  if (!m) return null;
  const day = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(day) ? null : day;
}

/** The partition key's bounds of a day, as SQL literals: [from, to). */
export function dayBounds(table: PartitionedTable, day: number): { from: string; to: string } {
  return table === 'turn_call'
    ? { from: `'${uuidv7Floor(day)}'`, to: `'${uuidv7Floor(day + DAY_MS)}'` }
    : { from: `'${new Date(day).toISOString()}'`, to: `'${new Date(day + DAY_MS).toISOString()}'` };
}

/** SQL: the UTC day (midnight, ms since the epoch) of a row of `table`, by its partition key. */
export function rowDaySql(table: PartitionedTable): string {
  return table === 'turn_call'
    ? `(floor((('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint) / ${DAY_MS}) * ${DAY_MS})::bigint`
    : `(floor(extract(epoch from created_at) * 1000 / ${DAY_MS}) * ${DAY_MS})::bigint`;
}

export interface PartitionPlan {
  create: number[];
  drop: number[];
}

/**
 * What one maintenance run does to a table: create today … today + `aheadDays` and the days of the
 * rows waiting in the default partition (`waiting`), unless they exist or are past retention; drop
 * the days that ended at least `retentionDays` before today (0: keep everything) and that the usage
 * roll-up has summed (`summedUntil`, ms: every hour before it; only `turn_call` feeds usage).
 */
export function planPartitions(input: {
  table: PartitionedTable;
  now: number;
  existing: readonly number[];
  waiting: readonly number[];
  aheadDays: number;
  retentionDays: number;
  summedUntil: number | null;
}): PartitionPlan {
  const today = dayOf(input.now);
  const cutoff = input.retentionDays > 0 ? today - input.retentionDays * DAY_MS : -Infinity;
  const have = new Set(input.existing);
  const wanted = new Set<number>();
  for (let d = 0; d <= input.aheadDays; d++) wanted.add(today + d * DAY_MS);
  for (const day of input.waiting) wanted.add(dayOf(day));
  const create = [...wanted].filter((d) => !have.has(d) && d + DAY_MS > cutoff).sort((a, b) => a - b);
  const drop = input.existing
    .filter((d) => d + DAY_MS <= cutoff)
    .filter(
      (d) => input.table !== 'turn_call' || (input.summedUntil !== null && d + DAY_MS <= input.summedUntil),
    )
    .sort((a, b) => a - b);
  return { create, drop };
}

/** The statements that create a day's partition, moving its rows out of the default partition. */
export function createDayStatements(table: PartitionedTable, day: number): string[] {
  const name = partitionName(table, day);
  const { from, to } = dayBounds(table, day);
  const inDay = `${rowDaySql(table)} = ${day}`;
  return [
    `create table "${name}" (like "${table}" including defaults including constraints including storage)`,
    `with moved as (delete from "${table}_default" where ${inDay} returning *) insert into "${name}" select * from moved`,
    `alter table "${table}" attach partition "${name}" for values from (${from}) to (${to})`,
  ];
}

export interface PartitionRunResult {
  created: string[];
  dropped: string[];
  /** Rows older than the retention found in a default partition, deleted. */
  expired: number;
}

export interface PartitionMaintainerOptions {
  /** 0 keeps every day (the default). */
  retentionDays: number;
  aheadDays?: number;
  everyMs?: number;
  /** The clock (tests inject one). */
  now?: () => number;
}

/**
 * Runs the plan against the database. `databaseUrl` must log in as the owner of the tables (the
 * migration URL when the service runs as a role that owns nothing).
 */
export class PartitionMaintainer {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;
  readonly #now: () => number;
  readonly #aheadDays: number;
  readonly #everyMs: number;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    private readonly options: PartitionMaintainerOptions,
  ) {
    this.#now = options.now ?? Date.now;
    this.#aheadDays = options.aheadDays ?? DEFAULT_PARTITION_AHEAD_DAYS;
    this.#everyMs = options.everyMs ?? DEFAULT_PARTITION_EVERY_MS;
  }

  async runOnce(): Promise<PartitionRunResult> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    const result: PartitionRunResult = { created: [], dropped: [], expired: 0 };
    try {
      const now = this.#now();
      for (const table of PARTITIONED_TABLES) {
        const plan = await step(client, async () =>
          planPartitions({
            table,
            now,
            existing: await partitionDays(client, table),
            waiting: await waitingDays(client, table),
            aheadDays: this.#aheadDays,
            retentionDays: this.options.retentionDays,
            summedUntil: table === 'turn_call' ? await summedUntil(client) : null,
          }),
        );
        for (const day of plan.create) {
          await step(client, async () => {
            // Another instance may have made it since the plan.
            if ((await partitionDays(client, table)).includes(day)) return;
            for (const sql of createDayStatements(table, day)) await client.query(sql);
            result.created.push(partitionName(table, day));
          });
        }
        for (const day of plan.drop) {
          await step(client, async () => {
            if (!(await partitionDays(client, table)).includes(day)) return;
            await client.query(`drop table "${partitionName(table, day)}"`);
            result.dropped.push(partitionName(table, day));
          });
        }
        if (this.options.retentionDays > 0) {
          const cutoff = dayOf(now) - this.options.retentionDays * DAY_MS;
          const summed = table === 'turn_call' ? await summedUntil(client) : cutoff;
          const until = Math.min(cutoff, summed ?? -Infinity);
          if (Number.isFinite(until)) {
            const res = await step(client, () =>
              client.query(`delete from "${table}_default" where ${rowDaySql(table)} + ${DAY_MS} <= $1`, [
                until,
              ]),
            );
            result.expired += res.rowCount ?? 0;
          }
        }
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    if (result.created.length + result.dropped.length + result.expired > 0)
      this.logger.info({ ...result }, 'turn partitions maintained');
    return result;
  }

  /** Runs now and then every `everyMs`; failures are logged and retried at the next run. */
  start(): void {
    const tick = () => {
      this.#running ??= this.runOnce()
        .catch((err: unknown) =>
          this.logger.warn({ err }, 'turn partition maintenance failed; it runs again later'),
        )
        .finally(() => (this.#running = null));
    };
    this.#timer = setInterval(tick, this.#everyMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}

/**
 * One transaction, serialised with other instances' maintenance, whose locks give way to the call
 * path (transaction-local settings only: the URL may be a transaction-mode pooler).
 */
async function step<T>(client: pg.Client, fn: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query(`set local lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
    await client.query('select pg_advisory_xact_lock($1)', [ADVISORY_KEY]);
    const out = await fn();
    await client.query('commit');
    return out;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}

async function partitionDays(client: pg.Client, table: PartitionedTable): Promise<number[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = $1::regclass`,
    [table],
  );
  return rows.map((r) => partitionDay(table, r.name)).filter((d): d is number => d !== null);
}

/** The days of the rows in the default partition (normally none). */
async function waitingDays(client: pg.Client, table: PartitionedTable): Promise<number[]> {
  const { rows } = await client.query<{ day: string }>(
    `select distinct ${rowDaySql(table)}::text as day from "${table}_default"`,
  );
  // Ids that are not UUIDv7 (or far off) stay where they are.
  const [low, high] = [Date.UTC(2020, 0, 1), Date.UTC(2200, 0, 1)];
  return rows.map((r) => Number(r.day)).filter((d) => d >= low && d < high);
}

/** Every hour before this instant is summed into usage (ms), or null when nothing is. */
async function summedUntil(client: pg.Client): Promise<number | null> {
  const { rows } = await client.query<{ until: Date | null }>(
    `select hours_until as until from usage_rollup where id = 1`,
  );
  const until = rows[0]?.until;
  return until ? new Date(until).getTime() : null;
}
