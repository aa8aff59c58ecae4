/**
 * Concurrency caps on this instance (I/O; issue 29, DESIGN.md rule 19): the slots it leases of
 * each cap from PostgreSQL in chunks (cap-store.ts) and spends in memory (cap.ts), the line of calls
 * waiting for one, and the leases it renews while held. `CallGuard` asks `take` before a call and
 * `release` after it.
 *
 * A call over the cap waits in this instance's line, woken by a local release or another
 * instance's FREED NOTIFY. Leases are renewed while held and expire, so a dead instance's slots
 * come back. When the database is unreachable, a cap fails closed for a WRITE and open for a READ.
 */
import { systemClock, type Clock, type ClockTimer } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Notifier, SqlRunner, GuardSignal } from '../db/notifier.js';
import type { CachedOperation } from '../turns/tool-cache.js';
import {
  DEFAULT_CAP_LEASE_TTL_MS,
  leaseWant,
  maxWaitMs,
  sendBudgetMs,
  SlotPool,
  type Waiter,
} from './cap.js';
import { CapStore, type CapRecord } from './cap-store.js';
import { capRefusal, uncheckedRefusal, type Refusal } from './refusals.js';

/** While calls wait in line, the instance asks for slots again this often (a NOTIFY may be lost). */
const CAP_RETRY_MS = 200;
/** After another instance asked for slots, this instance gives each freed slot back for this long. */
const CAP_WANT_WINDOW_MS = 1_000;

/** A concurrency cap on this instance: the stored cap and the slots this instance holds of it. */
export interface CapEntry {
  record: CapRecord;
  pool: SlotPool;
  pending: Promise<void> | null;
  /** Real ms (performance.now) until which freed slots go straight back (another instance asked). */
  othersWantUntil: number;
  /** Real ms of the last WANT this instance sent. */
  wantSentAt: number;
  retry: NodeJS.Timeout | null;
  gone: boolean;
}

export interface CapSlotsOptions {
  /** The call budget when a connection sets none. */
  callTimeoutMs: number;
  /** How long a cap's lease lives unrenewed (ms of the clock's wall time); renewed every third of it. */
  leaseTtlMs?: number;
  /**
   * The clock a call's wait in line and its remaining budget run on (src/clock.ts). Default:
   * `systemClock`. The re-asks (CAP_RETRY_MS), the give-back window and the lease renewals pace
   * the instances among themselves and stay on real time.
   */
  clock?: Clock;
}

export class CapSlots {
  readonly #now: () => number;
  readonly #clock: Clock;
  readonly #callTimeoutMs: number;
  readonly #store: CapStore;
  readonly #leaseTtlMs: number;
  /** Concurrency caps by connection id, and by cap id. */
  readonly #caps = new Map<string, CapEntry[]>();
  readonly #byId = new Map<string, CapEntry>();
  #heartbeat: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    sql: () => SqlRunner,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    options: CapSlotsOptions,
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#now = () => this.#clock.now();
    this.#callTimeoutMs = options.callTimeoutMs;
    this.#store = new CapStore(sql);
    this.#leaseTtlMs = options.leaseTtlMs ?? DEFAULT_CAP_LEASE_TTL_MS;
  }

  /** Renews the leases this instance holds, every third of their life (at most every 5 s). */
  startRenewing(): void {
    this.#heartbeat = setInterval(
      () => void this.#renewLeases(),
      Math.max(50, Math.min(5_000, this.#leaseTtlMs / 3)),
    );
    this.#heartbeat.unref();
  }

  /** Stops renewing and runs no more statements; every line is let go. */
  close(): void {
    this.#closed = true;
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    for (const entry of this.#byId.values()) this.#dropEntry(entry);
  }

  /** Gives back every slot this instance holds (before `close`). */
  async giveBackAll(): Promise<void> {
    if (!this.#closed && this.#byId.size > 0)
      await this.#store
        .dropAll(this.notifier.instanceId)
        .catch((err: unknown) => this.logger.warn({ err }, 'could not give back concurrency slots'));
  }

  /** The caps of a connection, or undefined when it has none (a call pays one lookup). */
  of(connectionId: string): CapEntry[] | undefined {
    return this.#caps.get(connectionId);
  }

  /** The concurrency caps of a connection as this instance knows them. */
  records(connectionId: string): readonly CapRecord[] {
    return (this.#caps.get(connectionId) ?? []).map((e) => e.record);
  }

  /** What this instance holds of a cap (tests and metrics): slots held, in flight, waiting. */
  slots(capId: string): { held: number; inFlight: number; waiting: number } | null {
    const pool = this.#byId.get(capId)?.pool;
    return pool ? { held: pool.held, inFlight: pool.inFlight, waiting: pool.waiting } : null;
  }

  /** Every stored cap. */
  loadAll(): Promise<CapRecord[]> {
    return this.#store.loadAll();
  }

  /** Every stored cap, as `loadAll` found them: connections without one lose theirs. */
  setAll(caps: CapRecord[]): void {
    const capsByConnection = new Map<string, CapRecord[]>();
    for (const c of caps) {
      const list = capsByConnection.get(c.connectionId) ?? [];
      list.push(c);
      capsByConnection.set(c.connectionId, list);
    }
    for (const id of [...this.#caps.keys()]) if (!capsByConnection.has(id)) this.set(id, []);
    for (const [id, list] of capsByConnection) this.set(id, list);
  }

  /**
   * Takes a slot of every cap the call falls under (the operation's, then the connection's),
   * waiting in line up to the cap's wait (at most half the call's budget); the send gets the rest
   * of the budget. A refusal gives back what it took.
   */
  async take(
    op: CachedOperation,
    name: string,
    caps: CapEntry[],
  ): Promise<Refusal | { ok: true; slots: CapEntry[] | null; sendOp: CachedOperation | undefined }> {
    const applies = caps.filter((e) => e.record.scope === 'OPERATION' && e.record.operationId === op.id);
    for (const e of caps) if (e.record.scope === 'CONNECTION') applies.push(e);
    if (applies.length === 0) return { ok: true, slots: null, sendOp: undefined };
    const budgetMs = op.connection.timeoutMs ?? this.#callTimeoutMs;
    const t0 = this.#clock.monotonic();
    const taken: CapEntry[] = [];
    const giveUp = () => {
      for (const e of taken) this.release(e);
    };
    for (const entry of applies) {
      const pool = entry.pool;
      if (pool.tryTake()) {
        taken.push(entry);
        continue;
      }
      if (pool.waiting === 0 && pool.held < entry.record.maxInFlight) {
        try {
          await (entry.pending ?? this.#grow(entry));
        } catch (err) {
          if (op.risk === 'WRITE') {
            giveUp();
            this.logger.error(
              { err, cap: entry.record.id },
              'could not check a concurrency cap; the WRITE call was not made',
            );
            return uncheckedRefusal(name, entry.record.scope);
          }
          this.logger.warn(
            { err, cap: entry.record.id },
            'could not check a concurrency cap; the READ call goes ahead',
          );
          continue;
        }
        if (entry.gone) continue;
        if (pool.tryTake()) {
          taken.push(entry);
          continue;
        }
      }
      const left = maxWaitMs(entry.record, budgetMs) - (this.#clock.monotonic() - t0);
      const got = left > 0 && (await this.#wait(entry, left));
      if (!got) {
        giveUp();
        return capRefusal(op, name, entry.record);
      }
      if (!entry.gone) taken.push(entry);
    }
    const waited = this.#clock.monotonic() - t0;
    // Only a call that waited in line sends with less than its budget (a copy, made only then).
    const sendOp =
      waited >= 1
        ? { ...op, connection: { ...op.connection, timeoutMs: sendBudgetMs(budgetMs, waited) } }
        : undefined;
    return { ok: true, slots: taken.length > 0 ? taken : null, sendOp };
  }

  /** Waits in `entry`'s line up to `ms`: true with a slot taken, false when the time ran out. */
  #wait(entry: CapEntry, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: ClockTimer | null = null;
      const waiter: Waiter = {
        settle: (granted) => {
          if (timer !== null) this.#clock.clearTimeout(timer);
          timer = null;
          resolve(granted);
        },
      };
      entry.pool.enqueue(waiter);
      timer = this.#clock.setTimeout(() => {
        timer = null;
        // Served meanwhile? Then `settle` already ran; a slot is never taken after the call gave up.
        if (entry.pool.leave(waiter)) resolve(false);
      }, ms);
      this.#keepAsking(entry);
    });
  }

  /** While calls wait: ask for slots now and every CAP_RETRY_MS, and ask the others to give some back. */
  #keepAsking(entry: CapEntry): void {
    if (this.#closed || entry.gone) return;
    const at = performance.now();
    if (at - entry.wantSentAt >= CAP_RETRY_MS) {
      entry.wantSentAt = at;
      this.#store
        .want(entry.record.id)
        .catch((err: unknown) =>
          this.logger.warn({ err, cap: entry.record.id }, 'could not ask for concurrency slots'),
        );
    }
    if (entry.retry !== null) return;
    entry.retry = setTimeout(() => {
      entry.retry = null;
      if (entry.pool.waiting === 0 || this.#closed || entry.gone) return;
      void (entry.pending ?? this.#grow(entry))
        .catch((err: unknown) =>
          this.logger.warn({ err, cap: entry.record.id }, 'could not lease concurrency slots'),
        )
        .finally(() => {
          if (entry.pool.waiting > 0) this.#keepAsking(entry);
        });
    }, CAP_RETRY_MS);
    entry.retry.unref();
  }

  /** Asks for more slots of a cap (one statement, shared by the calls that want them). */
  #grow(entry: CapEntry): Promise<void> {
    const pool = entry.pool;
    const target = pool.held + leaseWant(entry.record, pool.held, pool.waiting);
    return this.#hold(entry, target, false);
  }

  /** Sets this instance's slots of a cap to `target` (or fewer, as the cap allows). */
  #hold(entry: CapEntry, target: number, freed: boolean): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const now = this.#now();
    const p = this.#store
      .hold(entry.record.id, this.notifier.instanceId, target, now, now + this.#leaseTtlMs, freed)
      .then((held) => {
        if (held === null) {
          this.#dropEntry(entry);
          void this.reload(entry.record.connectionId).catch(() => undefined);
          return;
        }
        entry.pool.setHeld(held);
      })
      .finally(() => {
        if (entry.pending === p) entry.pending = null;
      });
    entry.pending = p;
    return p;
  }

  /** A call's slot is free again: to this instance's line first, else back when others want it. */
  release(entry: CapEntry): void {
    const pool = entry.pool;
    pool.release();
    if (entry.gone || pool.waiting > 0 || pool.spare === 0) return;
    if (performance.now() < entry.othersWantUntil) this.#giveBack(entry);
  }

  /** Gives back the slots no call of this instance uses, and says so (FREED). */
  #giveBack(entry: CapEntry): void {
    const pool = entry.pool;
    if (this.#closed || entry.gone || pool.spare === 0 || pool.waiting > 0) return;
    const run = () =>
      this.#hold(entry, pool.inFlight, true).catch((err: unknown) =>
        this.logger.warn({ err, cap: entry.record.id }, 'could not give back concurrency slots'),
      );
    void (entry.pending ? entry.pending.then(run, run) : run());
  }

  /** Renews the leases this instance holds; gives back those it did not use since the last time. */
  async #renewLeases(): Promise<void> {
    for (const entry of this.#byId.values()) {
      const pool = entry.pool;
      if (this.#closed || entry.gone || pool.held === 0 || entry.pending !== null) continue;
      const idle = !pool.used && pool.inFlight === 0 && pool.waiting === 0;
      pool.used = false;
      try {
        await this.#hold(entry, idle ? 0 : pool.held, idle);
      } catch (err) {
        this.logger.warn({ err, cap: entry.record.id }, 'could not renew a concurrency lease');
      }
    }
  }

  #dropEntry(entry: CapEntry): void {
    entry.gone = true;
    if (entry.retry !== null) clearTimeout(entry.retry);
    entry.retry = null;
    this.#byId.delete(entry.record.id);
    // A removed cap holds nobody back.
    entry.pool.drain(true);
  }

  /** A cap's NOTIFY: its settings changed (CONFIG), another instance is short (WANT) or gave slots back (FREED). */
  signal(signal: GuardSignal): void {
    if (signal.scope === 'CONFIG') {
      void this.reload(signal.id).catch((err: unknown) =>
        this.logger.warn({ err, signal }, 'could not reload concurrency caps'),
      );
      return;
    }
    const entry = this.#byId.get(signal.id);
    if (entry === undefined) return;
    if (signal.scope === 'WANT') {
      // Another instance (or this one) is short: spare slots go back, and freed ones for a while.
      if (entry.pool.waiting > 0) return;
      entry.othersWantUntil = performance.now() + CAP_WANT_WINDOW_MS;
      this.#giveBack(entry);
    } else if (signal.scope === 'FREED' && entry.pool.waiting > 0 && entry.pending === null) {
      void this.#grow(entry).catch((err: unknown) =>
        this.logger.warn({ err, cap: entry.record.id }, 'could not lease concurrency slots'),
      );
    }
  }

  /** Reloads a connection's caps. */
  async reload(connectionId: string): Promise<void> {
    this.set(connectionId, await this.#store.loadConnection(connectionId));
  }

  /** Keeps the pools of caps that stayed (with the new numbers); drops the others. */
  set(connectionId: string, records: CapRecord[]): void {
    const old = this.#caps.get(connectionId) ?? [];
    const kept = new Set<CapEntry>();
    const entries = records.map((record) => {
      const same = old.find((e) => e.record.id === record.id && !e.gone);
      if (same !== undefined) {
        same.record = record;
        same.pool.spec = record;
        kept.add(same);
        return same;
      }
      const entry: CapEntry = {
        record,
        pool: new SlotPool(record),
        pending: null,
        othersWantUntil: 0,
        wantSentAt: -Infinity,
        retry: null,
        gone: false,
      };
      this.#byId.set(record.id, entry);
      return entry;
    });
    for (const e of old) if (!kept.has(e)) this.#dropEntry(e);
    if (entries.length === 0) this.#caps.delete(connectionId);
    else this.#caps.set(connectionId, entries);
  }
}
