/**
 * Group commit of the call path's records (issue 15). Concurrent calls each need a short write
 * (CALL_STARTED with a WRITE's ledger intent, the TurnCall with CALL_FINISHED, the Turn at
 * beginTurn). One by one, each is a round trip, a transaction, a WAL flush and a wake-up of every
 * LISTEN connection; under load that is most of what the database and the service spend per call.
 *
 * `GroupCommit` sends a statement at once while fewer than `maxInFlight` batches are running;
 * otherwise it waits for one to finish and goes with everything queued meanwhile, as ONE
 * transaction in one round trip. Nothing is answered before its batch has committed: a WRITE still
 * goes out only once its intent is durable. No timer is involved, so a lone call waits for nothing.
 *
 * Within a batch, statements are ordered by their lock key (the turn id, stable for one turn), so
 * two batches (on this instance or another) take their row locks in the same order and cannot
 * deadlock each other.
 *
 * A batch the database refused (any statement's error rolls the whole batch back) is run again one
 * statement at a time, so that each caller gets its own statement's outcome, exactly as without
 * batching. A batch whose fate is unknown (the connection broke before the answer) is not run
 * again: each caller gets the error, as a lone statement would.
 *
 * Pure queueing logic; the I/O comes in through `GroupCommitIo` (`ormGroupCommitIo` for MikroORM).
 */
import type { MikroORM } from '@mikro-orm/postgresql';

export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  params: readonly unknown[];
  /** Batches are ordered by this key: the id of the row the statement locks first. */
  lockKey: string;
}

export interface GroupCommitIo {
  /** One statement on its own (its own transaction); the rows of its result. */
  one(statement: Statement): Promise<Row[]>;
  /** Several statements as one transaction in one round trip; the rows of each, in order. */
  many(statements: Statement[]): Promise<Row[][]>;
  /** True when `err` proves that the database rolled the whole batch back. */
  rolledBack(err: unknown): boolean;
}

export interface GroupCommitOptions {
  /** Batches (or lone statements) running at once; each holds one pooled connection. */
  inFlight?: number;
  /** The most statements in one batch. */
  maxBatch?: number;
}

export const DEFAULT_GROUP_COMMIT_IN_FLIGHT = 2;
export const DEFAULT_GROUP_COMMIT_MAX_BATCH = 64;

interface Pending extends Statement {
  resolve(rows: Row[]): void;
  reject(err: unknown): void;
}

export class GroupCommit {
  readonly #queue: Pending[] = [];
  readonly #maxInFlight: number;
  readonly #maxBatch: number;
  #inFlight = 0;
  /** Batches of more than one statement sent so far, and the statements in them (for tests and the bench). */
  readonly stats = { batches: 0, batched: 0, fallbacks: 0 };

  constructor(
    private readonly io: GroupCommitIo,
    options: GroupCommitOptions = {},
  ) {
    this.#maxInFlight = Math.max(1, options.inFlight ?? DEFAULT_GROUP_COMMIT_IN_FLIGHT);
    this.#maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_GROUP_COMMIT_MAX_BATCH);
  }

  /** Runs `statement` (alone or with others); resolves with its rows once committed. */
  run(statement: Statement): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      this.#queue.push({ ...statement, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight++;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #send(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch[0]!);
    const ordered = orderByLockKey(batch);
    this.stats.batches++;
    this.stats.batched += ordered.length;
    let results: Row[][];
    try {
      results = await this.io.many(ordered);
    } catch (err) {
      if (!this.io.rolledBack(err)) {
        for (const p of ordered) p.reject(err);
        return;
      }
      // Nothing of the batch was kept: each statement again on its own, in the same order.
      this.stats.fallbacks++;
      for (const p of ordered) await this.#alone(p);
      return;
    }
    ordered.forEach((p, i) => p.resolve(results[i] ?? []));
  }

  async #alone(p: Pending): Promise<void> {
    try {
      p.resolve(await this.io.one(p));
    } catch (err) {
      p.reject(err);
    }
  }
}

/** Stable order by lock key: statements of one turn keep their order among themselves. */
export function orderByLockKey<T extends { lockKey: string }>(batch: readonly T[]): T[] {
  return batch
    .map((s, i) => ({ s, i }))
    .sort((a, b) => (a.s.lockKey < b.s.lockKey ? -1 : a.s.lockKey > b.s.lockKey ? 1 : a.i - b.i))
    .map(({ s }) => s);
}

/** A PostgreSQL error reported by the server (it has a SQLSTATE): the transaction was rolled back. */
export function isServerError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string';
}

interface PgResult {
  rows: Row[];
}
interface PgClient {
  query(text: string): Promise<PgResult | PgResult[]>;
}
interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
  emit(event: 'query', data: { sql: string; bindings: unknown[] }): boolean;
}

/**
 * The I/O of a `GroupCommit` on MikroORM's connection pool: a lone statement through
 * `execute` (its errors converted as everywhere else); a batch as one multi-statement simple query
 * (PostgreSQL runs it as one implicit transaction), its values inlined exactly as `execute` does.
 * Each statement is still reported to knex's `query` listeners (statement counts in tests).
 */
export function ormGroupCommitIo(orm: MikroORM): GroupCommitIo {
  return {
    one: (s) => orm.em.getConnection().execute<Row[]>(s.sql, [...s.params]),
    many: async (statements) => {
      const platform = orm.em.getPlatform();
      // knex's Client type does not declare the driver methods used here: our own narrow view of it.
      const knex = orm.em.getConnection().getKnex().client as unknown as KnexClient;
      const texts = statements.map((s) => platform.formatQuery(s.sql, [...s.params]));
      for (const sql of texts) knex.emit('query', { sql, bindings: [] });
      const connection = await knex.acquireConnection();
      try {
        const res = await connection.query(texts.join(';\n'));
        const list = Array.isArray(res) ? res : [res];
        return list.map((r) => r.rows);
      } finally {
        await knex.releaseConnection(connection);
      }
    },
    rolledBack: isServerError,
  };
}
