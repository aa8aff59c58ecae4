/**
 * Rate limits, concurrency caps and circuit breakers on the call path (I/O; issue 29, DESIGN.md
 * rule 19), behind one door: the call path (src/turns/call-check.ts) asks `admit` before it sends
 * a call, and tells `report` the outcome after. A refused call gets a result for the model
 * (refusals.ts: RATE_LIMITED with `retryAfterMs`, UNAVAILABLE with the breaker or cap named), is
 * recorded like every call, and sends nothing. Operators change them through guards.resolver.ts.
 *
 * What lives where, and why:
 * - Every instance keeps every stored breaker, limit and cap in memory (loaded at start, reloaded
 *   on the GUARDS_CHANNEL NOTIFY and on every LISTEN reconnect), so a call with none configured
 *   pays four map lookups and nothing else.
 * - Breakers, here: each instance counts the outcomes it sees (no statement per call); a
 *   transition (open, probe, close) is one statement in PostgreSQL (store.ts) that the other
 *   instances hear within the NOTIFY's delay. The probe of a half-open breaker is claimed in that
 *   statement, so one instance sends it. An instance that could not store an opening keeps its
 *   breaker open locally.
 * - Rate limits: rate-limits.ts (token buckets in PostgreSQL, leased a few tokens at a time).
 * - Concurrency caps: cap-slots.ts (slots leased in chunks, a local line of waiting calls).
 * - When the database is unreachable, a limit or cap fails closed for a WRITE (not sent) and open
 *   for a READ (sent).
 */
import { systemClock, type Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Notifier, SqlRunner, GuardSignal } from '../db/notifier.js';
import { type CallStatus } from '../turns/call-status.js';
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
import { DEFAULT_LEASE_TTL_MS } from './bucket.js';
import { RateLimits, type LimitEntry } from './rate-limits.js';
import { BreakerStore, type LimitRecord } from './store.js';
import { CapSlots, type CapEntry } from './cap-slots.js';
import type { CapRecord } from './cap-store.js';
import { breakerRefusal, type Refusal } from './refusals.js';

export type { Refused, Refusal } from './refusals.js';
export type { CapEntry } from './cap-slots.js';

/** A probe's claim is given up after its call's budget (both attempts) and this margin. */
const PROBE_MARGIN_MS = 5_000;

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
export type Admission = Permit | Refusal;

const PASS: Permit = { ok: true, probes: null };

export interface CallGuardOptions {
  /**
   * The guard's time (src/clock.ts): its wall time drives windows, cool-downs and buckets, its
   * timers a call's wait for a cap's slot. Default: `systemClock`; tests drive it with fake time.
   */
  clock?: Clock;
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
  readonly #callTimeoutMs: number;
  readonly #breakers: BreakerStore;
  /** Stored breakers, by scope id (connection and operation ids are UUIDs: one map holds both). */
  readonly #records = new Map<string, BreakerRecord>();
  /** This instance's counts, by scope id; made at a scope's first failure. */
  readonly #counters = new Map<string, FailureCounter>();
  /** Probes this instance is claiming or sending: scope id → until (epoch ms). */
  readonly #probing = new Map<string, number>();
  /** Rate limits (rate-limits.ts). */
  readonly #rates: RateLimits;
  /** Concurrency caps. */
  readonly #slots: CapSlots;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(
    sql: () => SqlRunner,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    options: CallGuardOptions = {},
  ) {
    const clock = options.clock ?? systemClock;
    this.#now = () => clock.now();
    this.#rule = options.rule ?? DEFAULT_BREAKER_RULE;
    this.#callTimeoutMs = options.callTimeoutMs ?? 10_000;
    this.#breakers = new BreakerStore(sql);
    this.#rates = new RateLimits(sql, logger, options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS);
    this.#slots = new CapSlots(sql, notifier, logger, {
      callTimeoutMs: this.#callTimeoutMs,
      leaseTtlMs: options.capLeaseTtlMs,
      clock,
    });
  }

  /** Loads every stored breaker and limit, and follows their changes. */
  async start(): Promise<void> {
    this.#unsubscribe.push(
      this.notifier.onGuards((signal) => void this.#reload(signal)),
      this.notifier.onReset(() => void this.#reloadAll()),
    );
    await this.#reloadAll();
    this.#slots.startRenewing();
  }

  /**
   * Stops following changes and renewing leases, and runs no more statements: what a crash leaves
   * (the leases this instance holds expire). `shutdown` gives them back first.
   */
  close(): void {
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe.length = 0;
    this.#slots.close();
  }

  /** Gives back every slot this instance holds, then `close`. */
  async shutdown(): Promise<void> {
    await this.#slots.giveBackAll();
    this.close();
  }

  /** The concurrency caps of a connection as this instance knows them. */
  caps(connectionId: string): readonly CapRecord[] {
    return this.#slots.records(connectionId);
  }

  /** Reloads a connection's caps (after a change this instance made). */
  refreshCaps(connectionId: string): Promise<void> {
    return this.#slots.reload(connectionId);
  }

  /** What this instance holds of a cap (tests and metrics): slots held, in flight, waiting. */
  capSlots(capId: string): { held: number; inFlight: number; waiting: number } | null {
    return this.#slots.slots(capId);
  }

  /** The breaker of a connection or an operation as this instance knows it (undefined: default, closed). */
  breaker(scopeId: string): BreakerRecord | undefined {
    return this.#records.get(scopeId);
  }

  /** The limits of a connection as this instance knows them. */
  limits(connectionId: string): readonly LimitRecord[] {
    return this.#rates.records(connectionId);
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
    return this.#rates.reload(connectionId);
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
    const limits = this.#rates.of(op.connection.id);
    const caps = this.#slots.of(op.connection.id);
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
        return breakerRefusal(op, name, record, g.kind === 'refuse' ? g : null, now);
      (probes ??= []).push(record);
    }
    if (limits !== undefined) {
      const refused = await this.#rates.spend(op, workspaceId, name, limits, now);
      if (refused !== null) return refused;
    }
    let slots: CapEntry[] | null = null;
    let sendOp: CachedOperation | undefined;
    if (caps !== undefined) {
      const taken = await this.#slots.take(op, name, caps);
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
        if (slots !== null) for (const e of slots) this.#slots.release(e);
        const latest = this.#records.get(record.scopeId) ?? record;
        return breakerRefusal(op, name, latest, null, now);
      }
      claimed.push(won);
    }
    return { ok: true, probes: claimed, slots, sendOp };
  }

  /** The outcome of a call `admit` let through. */
  report(op: CachedOperation, permit: Permit, status: CallStatus): void {
    if (permit.slots) for (const e of permit.slots) this.#slots.release(e);
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

  async #reload(signal: GuardSignal): Promise<void> {
    try {
      if (signal.kind === 'breaker') await this.#reloadBreaker(signal.scope as BreakerScope, signal.id);
      else if (signal.kind === 'cap') this.#slots.signal(signal);
      else await this.#rates.reload(signal.id);
    } catch (err) {
      this.logger.warn({ err, signal }, 'could not reload a limit or breaker');
    }
  }

  async #reloadBreaker(scope: BreakerScope, id: string): Promise<void> {
    const record = await this.#breakers.load(scope, id);
    if (record === null) this.#records.delete(id);
    else this.#records.set(id, record);
  }

  async #reloadAll(): Promise<void> {
    try {
      const [breakers, limits, caps] = await Promise.all([
        this.#breakers.loadAll(),
        this.#rates.loadAll(),
        this.#slots.loadAll(),
      ]);
      this.#records.clear();
      for (const b of breakers) this.#records.set(b.scopeId, b);
      this.#rates.setAll(limits);
      this.#slots.setAll(caps);
    } catch (err) {
      this.logger.warn({ err }, 'could not load limits and breakers; keeping what this instance knew');
    }
  }
}
