/**
 * Rate limits and circuit breakers on the call path (I/O; issue 29, DESIGN.md rule 19).
 *
 * The turn path asks `admit` before it sends a call, and tells `report` the outcome after. A
 * refused call gets a result for the model (RATE_LIMITED with `retryAfterMs`, or UNAVAILABLE with
 * the breaker named), is recorded like every call, and sends nothing.
 *
 * What lives where, and why:
 * - Every instance keeps every stored breaker and limit in memory (loaded at start, reloaded on the
 *   GUARDS_CHANNEL NOTIFY and on every LISTEN reconnect), so a call with none configured pays two
 *   map lookups and nothing else.
 * - Breakers: each instance counts the outcomes it sees (no statement per call); a transition
 *   (open, probe, close) is one statement in PostgreSQL that the other instances hear within the
 *   NOTIFY's delay. The probe of a half-open breaker is claimed in that statement, so one instance
 *   sends it. An instance that could not store an opening keeps its breaker open locally.
 * - Rate limits: a token bucket per limit in PostgreSQL; an instance leases a few tokens at a time
 *   (bucket.ts), so most calls under a limit run no statement either.
 * - Concurrency caps: an instance leases slots of a cap from PostgreSQL in chunks and spends them
 *   in memory (cap.ts, cap-store.ts); a call over the cap waits in this instance's line, woken by a
 *   local release or another instance's FREED NOTIFY. Leases are renewed while held and expire, so
 *   a dead instance's slots come back.
 * - When the database is unreachable, a limit or cap fails closed for a WRITE (not sent) and open
 *   for a READ (sent).
 */
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Notifier, SqlRunner, GuardSignal } from '../db/notifier.js';
import { failure, type CallResult } from '../turns/result.js';
import { CallStatus } from '../turns/call-status.js';
import type { CachedOperation } from '../turns/tool-cache.js';
import {
  DEFAULT_BREAKER_RULE,
  FailureCounter,
  gate,
  nextCooldownMs,
  onByDefault,
  outcomeOf,
  type BreakerRecord,
  type BreakerRule,
  type BreakerScope,
} from './breaker.js';
import {
  canSpend,
  DEFAULT_LEASE_TTL_MS,
  describeLimit,
  emptyLease,
  nextLease,
  retryAfterMs,
  type Lease,
} from './bucket.js';
import { BreakerStore, LimitStore, type LimitRecord } from './store.js';
import {
  DEFAULT_CAP_LEASE_TTL_MS,
  leaseWant,
  maxWaitMs,
  sendBudgetMs,
  SlotPool,
  type Waiter,
} from './cap.js';
import { CapStore, type CapRecord } from './cap-store.js';

/** While calls wait in line, the instance asks for slots again this often (a NOTIFY may be lost). */
const CAP_RETRY_MS = 200;
/** After another instance asked for slots, this instance gives each freed slot back for this long. */
const CAP_WANT_WINDOW_MS = 1_000;

/** A probe's claim is given up after its call's budget (both attempts) and this margin. */
const PROBE_MARGIN_MS = 5_000;

/** Why a call was refused, for the debugger's event and the answer. */
export interface Refused {
  by: 'BREAKER' | 'RATE_LIMIT';
  scope: string;
  /** What the message names: a connection's slug or an operation's key. */
  name: string;
  retryAfterMs: number | null;
}

/** A call the guard let through: what `report` needs to know of it. */
export interface Permit {
  ok: true;
  /** The breakers this call is the probe of (half-open); null for a plain call. */
  probes: BreakerRecord[] | null;
  /** The concurrency caps whose slots this call holds until `report`; null for none. */
  slots?: CapEntry[] | null;
  /** The operation to send with, when the call waited in line: its budget less the wait. */
  sendOp?: CachedOperation;
}

export interface Refusal {
  ok: false;
  result: CallResult & { retryAfterMs: number | null; refused: Refused };
}

export type Admission = Permit | Refusal;

const PASS: Permit = { ok: true, probes: null };

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

interface LimitEntry {
  record: LimitRecord;
  lease: Lease;
  /** Epoch ms: the shared bucket was empty, and refills a token no sooner than this. */
  emptyUntil: number;
  pending: Promise<void> | null;
}

export interface CallGuardOptions {
  /** Epoch ms; injected so tests drive windows, cool-downs and buckets with fake time. */
  now?: () => number;
  rule?: BreakerRule;
  leaseTtlMs?: number;
  /** The call budget a probe's claim outlives (per attempt; a call has at most two). */
  callTimeoutMs?: number;
  /** How long a cap's lease lives unrenewed (ms of `now`); renewed every third of it. */
  capLeaseTtlMs?: number;
}

export class CallGuard {
  readonly #now: () => number;
  readonly #rule: BreakerRule;
  readonly #leaseTtlMs: number;
  readonly #callTimeoutMs: number;
  readonly #breakers: BreakerStore;
  readonly #limitStore: LimitStore;
  /** Stored breakers, by scope id (connection and operation ids are UUIDs: one map holds both). */
  readonly #records = new Map<string, BreakerRecord>();
  /** This instance's counts, by scope id; made at a scope's first failure. */
  readonly #counters = new Map<string, FailureCounter>();
  /** Probes this instance is claiming or sending: scope id → until (epoch ms). */
  readonly #probing = new Map<string, number>();
  /** Limits by connection id. */
  #limits = new Map<string, LimitEntry[]>();
  readonly #capStore: CapStore;
  readonly #capLeaseTtlMs: number;
  /** Concurrency caps by connection id, and by cap id. */
  readonly #caps = new Map<string, CapEntry[]>();
  readonly #capById = new Map<string, CapEntry>();
  #heartbeat: NodeJS.Timeout | null = null;
  #closed = false;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(
    sql: () => SqlRunner,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    options: CallGuardOptions = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#rule = options.rule ?? DEFAULT_BREAKER_RULE;
    this.#leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#callTimeoutMs = options.callTimeoutMs ?? 10_000;
    this.#breakers = new BreakerStore(sql);
    this.#limitStore = new LimitStore(sql);
    this.#capStore = new CapStore(sql);
    this.#capLeaseTtlMs = options.capLeaseTtlMs ?? DEFAULT_CAP_LEASE_TTL_MS;
  }

  /** Loads every stored breaker and limit, and follows their changes. */
  async start(): Promise<void> {
    this.#unsubscribe.push(
      this.notifier.onGuards((signal) => void this.#reload(signal)),
      this.notifier.onReset(() => void this.#reloadAll()),
    );
    await this.#reloadAll();
    this.#heartbeat = setInterval(
      () => void this.#renewLeases(),
      Math.max(50, Math.min(5_000, this.#capLeaseTtlMs / 3)),
    );
    this.#heartbeat.unref();
  }

  /**
   * Stops following changes and renewing leases, and runs no more statements: what a crash leaves
   * (the leases this instance holds expire). `shutdown` gives them back first.
   */
  close(): void {
    this.#closed = true;
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe.length = 0;
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    for (const entry of this.#capById.values()) this.#dropEntry(entry);
  }

  /** Gives back every slot this instance holds, then `close`. */
  async shutdown(): Promise<void> {
    if (!this.#closed && this.#capById.size > 0)
      await this.#capStore
        .dropAll(this.notifier.instanceId)
        .catch((err: unknown) => this.logger.warn({ err }, 'could not give back concurrency slots'));
    this.close();
  }

  /** The concurrency caps of a connection as this instance knows them. */
  caps(connectionId: string): readonly CapRecord[] {
    return (this.#caps.get(connectionId) ?? []).map((e) => e.record);
  }

  /** Reloads a connection's caps (after a change this instance made). */
  refreshCaps(connectionId: string): Promise<void> {
    return this.#reloadCaps(connectionId);
  }

  /** What this instance holds of a cap (tests and metrics): slots held, in flight, waiting. */
  capSlots(capId: string): { held: number; inFlight: number; waiting: number } | null {
    const pool = this.#capById.get(capId)?.pool;
    return pool ? { held: pool.held, inFlight: pool.inFlight, waiting: pool.waiting } : null;
  }

  /** The breaker of a connection or an operation as this instance knows it (undefined: default, closed). */
  breaker(scopeId: string): BreakerRecord | undefined {
    return this.#records.get(scopeId);
  }

  /** The limits of a connection as this instance knows them. */
  limits(connectionId: string): readonly LimitRecord[] {
    return (this.#limits.get(connectionId) ?? []).map((e) => e.record);
  }

  /** Operator changes: the stores, for the resolver (which runs them and audits). */
  get breakerStore(): BreakerStore {
    return this.#breakers;
  }

  /** An operator's change, stored: this instance knows it at once (the others by its NOTIFY). */
  remember(record: BreakerRecord): void {
    this.#records.set(record.scopeId, record);
    this.#probing.delete(record.scopeId);
    this.#counters.get(record.scopeId)?.reset();
  }

  /** Reloads a connection's limits (after a change this instance made). */
  refreshLimits(connectionId: string): Promise<void> {
    return this.#reloadLimits(connectionId);
  }

  get clock(): () => number {
    return this.#now;
  }

  /**
   * May this call be sent? Without a breaker or limit stored for its connection or operation, at
   * once and without a promise.
   */
  admit(op: CachedOperation, workspaceId: string, name: string): Admission | Promise<Admission> {
    const opBreaker = this.#records.get(op.id);
    const connBreaker = this.#records.get(op.connection.id);
    const limits = this.#limits.get(op.connection.id);
    const caps = this.#caps.get(op.connection.id);
    if (opBreaker === undefined && connBreaker === undefined && limits === undefined && caps === undefined)
      return PASS;
    return this.#admit(op, workspaceId, name, opBreaker, connBreaker, limits, caps);
  }

  async #admit(
    op: CachedOperation,
    workspaceId: string,
    name: string,
    opBreaker: BreakerRecord | undefined,
    connBreaker: BreakerRecord | undefined,
    limits: LimitEntry[] | undefined,
    caps: CapEntry[] | undefined,
  ): Promise<Admission> {
    const now = this.#now();
    let probes: BreakerRecord[] | null = null;
    for (const record of [opBreaker, connBreaker]) {
      if (record === undefined) continue;
      const g = gate(record, now);
      if (g.kind === 'pass') continue;
      if (g.kind === 'refuse' || (this.#probing.get(record.scopeId) ?? 0) > now)
        return this.#breakerRefusal(op, name, record, g.kind === 'refuse' ? g : null, now);
      (probes ??= []).push(record);
    }
    if (limits !== undefined) {
      const refused = await this.#spend(op, workspaceId, name, limits, now);
      if (refused !== null) return refused;
    }
    let slots: CapEntry[] | null = null;
    let sendOp: CachedOperation | undefined;
    if (caps !== undefined) {
      const taken = await this.#takeSlots(op, name, caps);
      if (!taken.ok) return taken;
      slots = taken.slots;
      sendOp = taken.sendOp;
    }
    if (probes === null) return slots === null ? PASS : { ok: true, probes: null, slots, sendOp };
    const claimed: BreakerRecord[] = [];
    for (const record of probes) {
      const won = await this.#claim(record, now, op.connection.timeoutMs ?? this.#callTimeoutMs);
      if (won === null) {
        for (const c of claimed) void this.#settleProbe(c, 'ignored');
        if (slots !== null) for (const e of slots) this.#releaseSlot(e);
        const latest = this.#records.get(record.scopeId) ?? record;
        return this.#breakerRefusal(op, name, latest, null, now);
      }
      claimed.push(won);
    }
    return { ok: true, probes: claimed, slots, sendOp };
  }

  /** The outcome of a call `admit` let through. */
  report(op: CachedOperation, permit: Permit, status: CallStatus): void {
    if (permit.slots) for (const e of permit.slots) this.#releaseSlot(e);
    const outcome = outcomeOf(status);
    if (permit.probes !== null) {
      for (const record of permit.probes) void this.#settleProbe(record, outcome);
      return;
    }
    if (outcome === 'ignored') return;
    const failed = outcome === 'failure';
    this.#count('CONNECTION', op.connection.id, failed);
    const opRecord = this.#records.get(op.id);
    if (opRecord?.enabled) this.#count('OPERATION', op.id, failed);
  }

  #count(scope: BreakerScope, id: string, failed: boolean): void {
    let counter = this.#counters.get(id);
    if (counter === undefined) {
      if (!failed) return;
      counter = new FailureCounter(this.#rule);
      this.#counters.set(id, counter);
    }
    const now = this.#now();
    const reason = counter.record(now, failed);
    if (reason === null) return;
    const record = this.#records.get(id);
    if (record !== undefined && (record.forced !== null || !record.enabled || record.state !== 'CLOSED'))
      return;
    if (record === undefined && !onByDefault(scope)) return;
    counter.reset();
    void this.#open(scope, id, reason, now);
  }

  async #open(scope: BreakerScope, id: string, reason: string, now: number): Promise<void> {
    const cooldownMs = this.#rule.cooldownMs;
    const retryAtMs = now + cooldownMs;
    // This instance refuses at once, whatever the database says.
    this.#records.set(id, {
      scope,
      scopeId: id,
      enabled: true,
      forced: null,
      state: 'OPEN',
      openedAt: new Date(now),
      reason,
      retryAtMs,
      cooldownMs,
      probeUntilMs: null,
    });
    this.logger.warn({ scope, id, reason }, 'circuit breaker opened');
    try {
      const stored = await this.#breakers.open(scope, id, reason, retryAtMs, cooldownMs);
      if (stored !== null) {
        this.metrics.breakerTransition(scope, 'opened');
        this.#records.set(id, stored);
      } else await this.#reloadBreaker(scope, id);
    } catch (err) {
      this.logger.error(
        { err, scope, id },
        'could not store a circuit breaker opening; it is open on this instance only',
      );
    }
  }

  /** Claims the probe of `record`; the breaker as claimed, or null when another call has it. */
  async #claim(record: BreakerRecord, now: number, timeoutMs: number): Promise<BreakerRecord | null> {
    const until = now + 2 * timeoutMs + PROBE_MARGIN_MS;
    this.#probing.set(record.scopeId, until);
    try {
      const claimed = await this.#breakers.claim(record.scope, record.scopeId, now, until);
      if (claimed !== null) {
        this.#records.set(record.scopeId, claimed);
        return claimed;
      }
      this.#probing.delete(record.scopeId);
      await this.#reloadBreaker(record.scope, record.scopeId);
      return null;
    } catch (err) {
      this.#probing.delete(record.scopeId);
      this.logger.warn({ err, scope: record.scope, id: record.scopeId }, 'could not claim a breaker probe');
      return null;
    }
  }

  async #settleProbe(record: BreakerRecord, outcome: 'failure' | 'answer' | 'ignored'): Promise<void> {
    const { scope, scopeId: id } = record;
    this.#probing.delete(id);
    try {
      let stored: BreakerRecord | null;
      if (outcome === 'answer') {
        stored = await this.#breakers.close(scope, id);
        if (stored !== null) {
          this.metrics.breakerTransition(scope, 'closed');
          this.#counters.get(id)?.reset();
          this.logger.info({ scope, id }, 'circuit breaker closed after its probe');
        }
      } else if (outcome === 'failure') {
        const cooldownMs = nextCooldownMs(record.cooldownMs, this.#rule);
        const now = this.#now();
        stored = await this.#breakers.reopen(
          scope,
          id,
          'its probe call failed too',
          now + cooldownMs,
          cooldownMs,
        );
        if (stored !== null) this.metrics.breakerTransition(scope, 'reopened');
      } else stored = await this.#breakers.release(scope, id);
      if (stored !== null) this.#records.set(id, stored);
      else await this.#reloadBreaker(scope, id);
    } catch (err) {
      this.logger.warn({ err, scope, id }, 'could not store the outcome of a breaker probe');
    }
  }

  #breakerRefusal(
    op: CachedOperation,
    name: string,
    record: BreakerRecord,
    refuse: { retryAfterMs: number | null; byOperator: boolean } | null,
    now: number,
  ): Refusal {
    const what =
      record.scope === 'CONNECTION' ? `the connection "${op.connection.slug}"` : `the operation ${op.key}`;
    const byOperator = refuse?.byOperator ?? false;
    const retryAfter = byOperator
      ? null
      : (refuse?.retryAfterMs ?? Math.max(0, (record.probeUntilMs ?? record.retryAtMs ?? now) - now));
    const message = byOperator
      ? `The tool ${name} is unavailable right now: an operator opened the circuit breaker of ${what}. Nothing was done; answer without it.`
      : `The tool ${name} is unavailable right now: the circuit breaker of ${what} is open${record.reason ? ` (${record.reason})` : ''}. Nothing was done; try again in about ${seconds(retryAfter ?? 0)} seconds, or answer without it.`;
    return refusal(CallStatus.UNAVAILABLE, message, {
      by: 'BREAKER',
      scope: record.scope,
      name: record.scope === 'CONNECTION' ? op.connection.slug : op.key,
      retryAfterMs: retryAfter,
    });
  }

  /** Spends a token of every limit the call falls under, or says which one refuses it. */
  async #spend(
    op: CachedOperation,
    workspaceId: string,
    name: string,
    limits: LimitEntry[],
    now: number,
  ): Promise<Refusal | null> {
    const applies: LimitEntry[] = [];
    for (const entry of limits) {
      const r = entry.record;
      if (
        r.scope === 'CONNECTION' ||
        (r.scope === 'OPERATION' && r.operationId === op.id) ||
        (r.scope === 'WORKSPACE' && r.forWorkspaceId === workspaceId)
      )
        applies.push(entry);
    }
    const spend: LimitEntry[] = [];
    for (const entry of applies) {
      if (!canSpend(entry.lease, now, this.#leaseTtlMs)) {
        if (entry.emptyUntil > now) return this.#limitRefusal(op, name, entry, entry.emptyUntil - now);
        try {
          // Another call of this instance may be leasing already: share its statement, then look again.
          // Each lease doubles while they are spent at once, so eight cover a burst of 255 calls.
          for (
            let tries = 0;
            tries < 8 && !canSpend(entry.lease, now, this.#leaseTtlMs) && entry.emptyUntil <= now;
            tries++
          )
            await (entry.pending ?? this.#lease(entry, now));
        } catch (err) {
          if (op.risk === 'WRITE') {
            this.logger.error(
              { err, limit: entry.record.id },
              'could not check a rate limit; the WRITE call was not made',
            );
            return refusal(
              CallStatus.UNAVAILABLE,
              `The platform could not check the limits of ${name}, so it was not called. Nothing was done; it may work if tried again later.`,
              { by: 'RATE_LIMIT', scope: entry.record.scope, name, retryAfterMs: null },
            );
          }
          this.logger.warn(
            { err, limit: entry.record.id },
            'could not check a rate limit; the READ call goes ahead',
          );
          continue;
        }
        if (!this.#limits.get(op.connection.id)?.includes(entry)) continue; // removed meanwhile
        if (!canSpend(entry.lease, now, this.#leaseTtlMs))
          return this.#limitRefusal(op, name, entry, Math.max(1, entry.emptyUntil - now));
      }
      spend.push(entry);
    }
    for (const entry of spend) entry.lease.tokens--;
    return null;
  }

  #lease(entry: LimitEntry, now: number): Promise<void> {
    const { want, giveBack } = nextLease(entry.lease, now, this.#leaseTtlMs, entry.record);
    entry.lease.tokens = 0;
    const p = this.#limitStore
      .lease(entry.record.id, now, want, giveBack)
      .then((got) => {
        if (got === null) {
          void this.#reloadLimits(entry.record.connectionId);
          return;
        }
        entry.lease = { tokens: got.granted, size: want, takenAt: now };
        entry.emptyUntil = got.granted === 0 ? now + retryAfterMs(got.available, entry.record) : 0;
      })
      .finally(() => {
        entry.pending = null;
      });
    entry.pending = p;
    return p;
  }

  /**
   * Takes a slot of every cap the call falls under (the operation's, then the connection's),
   * waiting in line up to the cap's wait (at most half the call's budget); the send gets the rest
   * of the budget. A refusal gives back what it took.
   */
  async #takeSlots(
    op: CachedOperation,
    name: string,
    caps: CapEntry[],
  ): Promise<Refusal | { ok: true; slots: CapEntry[] | null; sendOp: CachedOperation | undefined }> {
    const applies = caps.filter((e) => e.record.scope === 'OPERATION' && e.record.operationId === op.id);
    for (const e of caps) if (e.record.scope === 'CONNECTION') applies.push(e);
    if (applies.length === 0) return { ok: true, slots: null, sendOp: undefined };
    const budgetMs = op.connection.timeoutMs ?? this.#callTimeoutMs;
    const t0 = performance.now();
    const taken: CapEntry[] = [];
    const giveUp = () => {
      for (const e of taken) this.#releaseSlot(e);
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
            return refusal(
              CallStatus.UNAVAILABLE,
              `The platform could not check the limits of ${name}, so it was not called. Nothing was done; it may work if tried again later.`,
              { by: 'RATE_LIMIT', scope: entry.record.scope, name, retryAfterMs: null },
            );
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
      const left = maxWaitMs(entry.record, budgetMs) - (performance.now() - t0);
      const got = left > 0 && (await this.#wait(entry, left));
      if (!got) {
        giveUp();
        return this.#capRefusal(op, name, entry);
      }
      if (!entry.gone) taken.push(entry);
    }
    const waited = performance.now() - t0;
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
      let timer: NodeJS.Timeout | null = null;
      const waiter: Waiter = {
        settle: (granted) => {
          if (timer !== null) clearTimeout(timer);
          timer = null;
          resolve(granted);
        },
      };
      entry.pool.enqueue(waiter);
      timer = setTimeout(() => {
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
      this.#capStore
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
    const p = this.#capStore
      .hold(entry.record.id, this.notifier.instanceId, target, now, now + this.#capLeaseTtlMs, freed)
      .then((held) => {
        if (held === null) {
          this.#dropEntry(entry);
          void this.#reloadCaps(entry.record.connectionId).catch(() => undefined);
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
  #releaseSlot(entry: CapEntry): void {
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
    for (const entry of this.#capById.values()) {
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
    this.#capById.delete(entry.record.id);
    // A removed cap holds nobody back.
    entry.pool.drain(true);
  }

  #capRefusal(op: CachedOperation, name: string, entry: CapEntry): Refusal {
    const r = entry.record;
    const what = r.scope === 'CONNECTION' ? `its connection "${op.connection.slug}"` : 'it';
    const retryAfter = Math.max(1_000, r.maxWaitMs);
    return refusal(
      CallStatus.RATE_LIMITED,
      `This tool is busy: ${name} already has ${r.maxInFlight} call${r.maxInFlight === 1 ? '' : 's'} in flight for ${what}, the most allowed at once. Nothing was done; try again in about ${seconds(retryAfter)} seconds, or answer without it.`,
      { by: 'RATE_LIMIT', scope: r.scope, name, retryAfterMs: retryAfter },
    );
  }

  #limitRefusal(op: CachedOperation, name: string, entry: LimitEntry, waitMs: number): Refusal {
    const r = entry.record;
    const what =
      r.scope === 'CONNECTION'
        ? `its connection "${op.connection.slug}"`
        : r.scope === 'OPERATION'
          ? 'it'
          : `this workspace's calls on "${op.connection.slug}"`;
    return refusal(
      CallStatus.RATE_LIMITED,
      `This tool is busy: ${name} has reached the limit of ${describeLimit(r)} for ${what}. Nothing was done; try again in about ${seconds(waitMs)} seconds, or answer without it.`,
      { by: 'RATE_LIMIT', scope: r.scope, name, retryAfterMs: waitMs },
    );
  }

  async #reload(signal: GuardSignal): Promise<void> {
    try {
      if (signal.kind === 'breaker') await this.#reloadBreaker(signal.scope as BreakerScope, signal.id);
      else if (signal.kind === 'cap') this.#capSignal(signal);
      else await this.#reloadLimits(signal.id);
    } catch (err) {
      this.logger.warn({ err, signal }, 'could not reload a limit or breaker');
    }
  }

  #capSignal(signal: GuardSignal): void {
    if (signal.scope === 'CONFIG') {
      void this.#reloadCaps(signal.id).catch((err: unknown) =>
        this.logger.warn({ err, signal }, 'could not reload concurrency caps'),
      );
      return;
    }
    const entry = this.#capById.get(signal.id);
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

  async #reloadCaps(connectionId: string): Promise<void> {
    this.#setCaps(connectionId, await this.#capStore.loadConnection(connectionId));
  }

  /** Keeps the pools of caps that stayed (with the new numbers); drops the others. */
  #setCaps(connectionId: string, records: CapRecord[]): void {
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
      this.#capById.set(record.id, entry);
      return entry;
    });
    for (const e of old) if (!kept.has(e)) this.#dropEntry(e);
    if (entries.length === 0) this.#caps.delete(connectionId);
    else this.#caps.set(connectionId, entries);
  }

  async #reloadBreaker(scope: BreakerScope, id: string): Promise<void> {
    const record = await this.#breakers.load(scope, id);
    if (record === null) this.#records.delete(id);
    else this.#records.set(id, record);
  }

  async #reloadLimits(connectionId: string): Promise<void> {
    const records = await this.#limitStore.loadConnection(connectionId);
    this.#setLimits(connectionId, records);
  }

  /** Keeps the leases of limits that did not change. */
  #setLimits(connectionId: string, records: LimitRecord[]): void {
    const old = this.#limits.get(connectionId) ?? [];
    if (records.length === 0) {
      this.#limits.delete(connectionId);
      return;
    }
    this.#limits.set(
      connectionId,
      records.map((record) => {
        const same = old.find(
          (e) =>
            e.record.id === record.id &&
            e.record.calls === record.calls &&
            e.record.periodMs === record.periodMs &&
            e.record.burst === record.burst,
        );
        return same ?? { record, lease: emptyLease(), emptyUntil: 0, pending: null };
      }),
    );
  }

  async #reloadAll(): Promise<void> {
    try {
      const [breakers, limits, caps] = await Promise.all([
        this.#breakers.loadAll(),
        this.#limitStore.loadAll(),
        this.#capStore.loadAll(),
      ]);
      this.#records.clear();
      for (const b of breakers) this.#records.set(b.scopeId, b);
      const byConnection = new Map<string, LimitRecord[]>();
      for (const l of limits) {
        const list = byConnection.get(l.connectionId) ?? [];
        list.push(l);
        byConnection.set(l.connectionId, list);
      }
      for (const id of this.#limits.keys()) if (!byConnection.has(id)) this.#limits.delete(id);
      for (const [id, list] of byConnection) this.#setLimits(id, list);
      const capsByConnection = new Map<string, CapRecord[]>();
      for (const c of caps) {
        const list = capsByConnection.get(c.connectionId) ?? [];
        list.push(c);
        capsByConnection.set(c.connectionId, list);
      }
      for (const id of [...this.#caps.keys()]) if (!capsByConnection.has(id)) this.#setCaps(id, []);
      for (const [id, list] of capsByConnection) this.#setCaps(id, list);
    } catch (err) {
      this.logger.warn({ err }, 'could not load limits and breakers; keeping what this instance knew');
    }
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function refusal(status: CallStatus, message: string, refused: Refused): Refusal {
  const result = failure(status, message) as Refusal['result'];
  result.retryAfterMs = refused.retryAfterMs;
  result.refused = refused;
  return { ok: false, result };
}
