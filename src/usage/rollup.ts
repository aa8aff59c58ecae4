/**
 * The usage roll-up (I/O): sums recorded calls into `usage_hour` once their hour is closed and
 * settled, and whole UTC days of those into `usage_day`, so a dashboard's question reads a few
 * thousand rows however long the history. The call path pays nothing: this job reads `turn_call`
 * by primary-key range (call ids are UUIDv7 made at the call's start).
 *
 * An hour is rolled up once `settleMs` after it ends: a call is recorded when it finishes, and one
 * whose outcome was lost is closed by the ledger sweep (`LEDGER_SWEEP_AFTER_MS`) with its original
 * start time, so the settle time must be longer than both. The progress marks live in the one row
 * of `usage_rollup`, locked while a step runs, so instances may run the job at once and each hour
 * is summed exactly once. Until an hour is rolled up, the usage query reads its calls directly.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { HISTOGRAM_COLUMNS } from './histogram.js';
import { forgetRollupMarks } from './marks.js';
import { KEY_COLUMNS, rawCallsSql, sumHistogram, uuidFloorSql } from './sql.js';

/** Most hours summed per statement (a first run over a long history takes several). */
const HOURS_PER_STEP = 24 * 7;
const STEPS_PER_RUN = 60;

const COLUMNS = [
  'bucket_start',
  ...KEY_COLUMNS,
  'calls',
  'duration_count',
  'duration_sum',
  ...HISTOGRAM_COLUMNS,
].join(', ');
const KEYS = KEY_COLUMNS.join(', ');
const SUMS = `sum(calls)::int, sum(duration_count)::int, sum(duration_sum)::bigint, ${sumHistogram()}`;

const HOURS_SQL = `
insert into usage_hour (${COLUMNS})
select bucket_start, ${KEYS}, ${SUMS}
from (${rawCallsSql(
  `tc.id >= ${uuidFloorSql(`(?::timestamptz - interval '1 hour')`)} and tc.id < ${uuidFloorSql(`(?::timestamptz + interval '1 hour')`)}
      and tc.started_at >= ?::timestamptz and tc.started_at < ?::timestamptz`,
)}) raw
group by bucket_start, ${KEYS}`;

const DAYS_SQL = `
insert into usage_day (${COLUMNS})
select date_trunc('day', bucket_start, 'UTC'), ${KEYS}, ${SUMS}
from usage_hour where bucket_start >= ?::timestamptz and bucket_start < ?::timestamptz
group by date_trunc('day', bucket_start, 'UTC'), ${KEYS}`;

export interface UsageRollupOptions {
  everyMs: number;
  settleMs: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export class UsageRollup {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly options: UsageRollupOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Rolls up every settled hour (up to STEPS_PER_RUN steps of a week), then the whole days they
   * complete. Returns the hours summed.
   */
  async runOnce(): Promise<number> {
    let hours = 0;
    for (let step = 0; step < STEPS_PER_RUN; step++) {
      const done = await this.#step();
      hours += done;
      if (done === 0) break;
    }
    if (hours > 0) forgetRollupMarks(this.orm);
    return hours;
  }

  async #step(): Promise<number> {
    const target = Math.floor((this.now() - this.options.settleMs) / HOUR) * HOUR;
    return this.orm.em.fork().transactional(async (tx) => {
      const sql = tx.getConnection();
      const ctx = tx.getTransactionContext();
      const mark = await sql.execute<{ hours_until: Date; days_until: Date }>(
        `select hours_until, days_until from usage_rollup where id = 1 for update`,
        [],
        'get',
        ctx,
      );
      const from = new Date(mark.hours_until).getTime();
      if (from >= target) return 0;
      const until = Math.min(target, from + HOURS_PER_STEP * HOUR);
      const [a, b] = [new Date(from).toISOString(), new Date(until).toISOString()];
      await sql.execute(HOURS_SQL, [a, b, a, b], 'run', ctx);
      const daysFrom = new Date(mark.days_until).getTime();
      const daysUntil = Math.floor(until / DAY) * DAY;
      if (daysUntil > daysFrom) {
        await sql.execute(
          DAYS_SQL,
          [new Date(daysFrom).toISOString(), new Date(daysUntil).toISOString()],
          'run',
          ctx,
        );
      }
      await sql.execute(
        `update usage_rollup set hours_until = ?, days_until = ? where id = 1`,
        [b, new Date(Math.max(daysFrom, daysUntil)).toISOString()],
        'run',
        ctx,
      );
      return (until - from) / HOUR;
    });
  }

  start(): void {
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.runOnce()
        .catch((err: unknown) => this.logger.error({ err }, 'the usage roll-up failed'))
        .finally(() => {
          this.#running = null;
        });
    }, this.options.everyMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
