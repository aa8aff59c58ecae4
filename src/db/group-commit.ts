/**
 * Group commit of the call path's records (issue 15). Concurrent calls each need a short write
 * (CALL_STARTED with a WRITE's ledger intent, the TurnCall with CALL_FINISHED). One by one, each is a round trip, a transaction, a WAL flush and a wake-up of every
 * LISTEN connection; under load that is most of what the database and the service spend per call.
 *
 * `GroupCommit` sends a statement at once while fewer than `maxInFlight` batches are running;
 * otherwise it waits for one to finish and goes with everything queued meanwhile, as ONE
 * transaction in one round trip (for the call records: one prepared statement over all of them,
 * `jsonBatchIo`). Nothing is answered before its batch has committed: a WRITE still
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
 * Pure queueing logic; the I/O comes in through `GroupCommitIo` (`jsonBatchIo` on the database).
 */
import type { Prepared, Row, RunPrepared } from './prepared.js';

export type { Row } from './prepared.js';

/** One record to commit. */
export interface Keyed {
  /** Batches are ordered by this key: the id of the row the record locks first. */
  lockKey: string;
}

export interface GroupCommitIo<T extends Keyed> {
  /** One record on its own (its own transaction); the rows of its result. */
  one(item: T): Promise<Row[]>;
  /** Several records as one transaction in one round trip; the rows of each, in order. */
  many(items: T[]): Promise<Row[][]>;
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

interface Pending<T> {
  item: T;
  lockKey: string;
  resolve(rows: Row[]): void;
  reject(err: unknown): void;
}

export class GroupCommit<T extends Keyed> {
  readonly #queue: Pending<T>[] = [];
  readonly #maxInFlight: number;
  readonly #maxBatch: number;
  #inFlight = 0;
  /** Batches of more than one statement sent so far, and the statements in them (for tests and the bench). */
  readonly stats = { batches: 0, batched: 0, fallbacks: 0 };

  constructor(
    private readonly io: GroupCommitIo<T>,
    options: GroupCommitOptions = {},
  ) {
    this.#maxInFlight = Math.max(1, options.inFlight ?? DEFAULT_GROUP_COMMIT_IN_FLIGHT);
    this.#maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_GROUP_COMMIT_MAX_BATCH);
  }

  /** Commits `item` (alone or with others); resolves with its rows once committed. */
  run(item: T): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      this.#queue.push({ item, lockKey: item.lockKey, resolve, reject });
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

  async #send(batch: Pending<T>[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch[0]!);
    const ordered = orderByLockKey(batch);
    this.stats.batches++;
    this.stats.batched += ordered.length;
    let results: Row[][];
    try {
      results = await this.io.many(ordered.map((p) => p.item));
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

  async #alone(p: Pending<T>): Promise<void> {
    try {
      p.resolve(await this.io.one(p.item));
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

/**
 * A server error that the same statement with the same values would meet again: a value the
 * column or a constraint refuses (SQLSTATE classes 22 and 23), a statement it cannot run (42) or a
 * limit of the server (54, such as nesting too deep). Trying such a record again only fails again,
 * rolling back every batch it joins; connection, lock, serialization, resource and shutdown errors
 * (08, 40, 53, 55, 57, 58) may pass on another try. A unique violation (23505) is left to the
 * caller, for whom it may mean that an earlier try landed.
 */
export function isPermanentServerError(err: unknown): boolean {
  if (!isServerError(err)) return false;
  const code = (err as { code: string }).code;
  return code !== '23505' && ['22', '23', '42', '54'].includes(code.slice(0, 2));
}

/** A batch's items as JSON (`ord`: the item's place in the batch, 0-based). */
export function batchJson(itemsJson: readonly string[]): string {
  let out = '[';
  for (let i = 0; i < itemsJson.length; i++) {
    const item = itemsJson[i]!;
    out += `${i === 0 ? '' : ','}{"ord":${i}${item === '{}' ? '' : ','}${item.slice(1)}`;
  }
  return `${out}]`;
}

/** The rows of each item, by their `ord` column; without one, every item gets every row. */
export function rowsByOrd(rows: readonly Row[], count: number): Row[][] {
  const out: Row[][] = Array.from({ length: count }, () => []);
  for (const row of rows) {
    if (typeof row.ord === 'number') out[row.ord]?.push(row);
    else for (const list of out) list.push(row);
  }
  return out;
}

/**
 * The I/O of a `GroupCommit` whose records all go through ONE prepared statement that takes the
 * whole batch as a JSON array in `$1` (each item a JSON object, `json(item)`, to which `ord` is
 * added). One round trip, one implicit transaction, planned once per connection: a lone record is
 * a batch of one. Rows that carry `ord` go back to their own item.
 */
export function jsonBatchIo<T extends Keyed>(
  run: RunPrepared,
  statement: Prepared,
  json: (item: T) => string,
): GroupCommitIo<T> {
  const many = async (items: T[]): Promise<Row[][]> =>
    rowsByOrd(await run(statement, [batchJson(items.map(json))]), items.length);
  return {
    one: async (item) => (await many([item]))[0]!,
    many,
    rolledBack: isServerError,
  };
}
