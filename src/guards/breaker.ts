/**
 * Circuit breakers (pure; issue 29): what a call's outcome means to a breaker, when the
 * rule opens it, and whether a call may pass. No clock is read: every function takes `now` (epoch
 * ms), so tests drive the windows with fake time. The shared state (PostgreSQL) and the calls that
 * move it are `call-guard.ts` and `store.ts`.
 *
 * The rule (docs/limits.md, "Limits and breakers"): a breaker opens when, of the calls it has seen, either
 * `consecutiveFailures` in a row failed, or at least `failureRate` of the calls in the last
 * `windowMs` failed, with at least `minCalls` calls in that window. Only TIMEOUT and UPSTREAM_ERROR
 * are failures. TOOL_ERROR is an answer (the server works; the tool said no). REJECTED,
 * UNAVAILABLE and RATE_LIMITED never reached the server and are not counted at all.
 */
import { CallStatus } from '../turns/call-status.js';

export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';
export type BreakerForce = 'OPEN' | 'CLOSED';
export type BreakerScope = 'CONNECTION' | 'OPERATION';

export interface BreakerRule {
  /** Opens after this many failures in a row. */
  consecutiveFailures: number;
  /** … or when this share of the window's calls failed (0–1) … */
  failureRate: number;
  /** … over this sliding window … */
  windowMs: number;
  /** … once the window holds at least this many calls. */
  minCalls: number;
  /** The first cool-down before a probe; each failed probe doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
}

/** Every connection's breaker, unless an operator changes it (docs/limits.md documents these numbers). */
export const DEFAULT_BREAKER_RULE: Readonly<BreakerRule> = {
  consecutiveFailures: 5,
  failureRate: 0.5,
  windowMs: 60_000, // 1 minute
  minCalls: 20,
  cooldownMs: 30_000, // 30 seconds
  maxCooldownMs: 300_000, // 5 minutes
};

/** How many slices the sliding window is kept in (its resolution is windowMs / WINDOW_SLICES). */
const WINDOW_SLICES = 10;

/** What an outcome means to a breaker. */
export type Outcome = 'failure' | 'answer' | 'ignored';

export function outcomeOf(status: CallStatus): Outcome {
  switch (status) {
    case CallStatus.TIMEOUT:
    case CallStatus.UPSTREAM_ERROR:
      return 'failure';
    case CallStatus.SUCCEEDED:
    case CallStatus.TOOL_ERROR:
      return 'answer';
    default:
      return 'ignored';
  }
}

/**
 * One instance's count of a breaker's recent outcomes: the failures in a row, and a sliding window
 * of slices. `record` returns why the rule is met (the breaker's reason), or null.
 */
export class FailureCounter {
  consecutive = 0;
  readonly #calls: number[] = new Array<number>(WINDOW_SLICES).fill(0);
  readonly #failures: number[] = new Array<number>(WINDOW_SLICES).fill(0);
  /** The slice index (floor(now / sliceMs)) the slot `i % WINDOW_SLICES` holds. */
  readonly #sliceOf: number[] = new Array<number>(WINDOW_SLICES).fill(-1);
  readonly #sliceMs: number;

  constructor(private readonly rule: BreakerRule) {
    this.#sliceMs = Math.max(1, Math.floor(rule.windowMs / WINDOW_SLICES));
  }

  record(now: number, failed: boolean): string | null {
    const slice = Math.floor(now / this.#sliceMs);
    const slot = slice % WINDOW_SLICES;
    if (this.#sliceOf[slot] !== slice) {
      this.#sliceOf[slot] = slice;
      this.#calls[slot] = 0;
      this.#failures[slot] = 0;
    }
    this.#calls[slot]!++;
    if (failed) this.#failures[slot]!++;
    this.consecutive = failed ? this.consecutive + 1 : 0;
    if (!failed) return null;
    if (this.consecutive >= this.rule.consecutiveFailures)
      return `${this.consecutive} calls in a row failed (timeout or upstream error)`;
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < WINDOW_SLICES; i++) {
      const s = this.#sliceOf[i]!;
      if (s > slice - WINDOW_SLICES && s <= slice) {
        calls += this.#calls[i]!;
        failures += this.#failures[i]!;
      }
    }
    if (calls >= this.rule.minCalls && failures >= this.rule.failureRate * calls)
      return `${failures} of the last ${calls} calls in ${Math.round(this.rule.windowMs / 1000)} s failed (timeout or upstream error)`;
    return null;
  }

  reset(): void {
    this.consecutive = 0;
    this.#sliceOf.fill(-1);
  }
}

/** A breaker's shared state, as stored (`call_breaker`); absent means the default, closed. */
export interface BreakerRecord {
  scope: BreakerScope;
  scopeId: string;
  enabled: boolean;
  forced: BreakerForce | null;
  state: BreakerState;
  openedAt: Date | null;
  reason: string | null;
  /** Epoch ms: an OPEN breaker lets one probe through from then on. */
  retryAtMs: number | null;
  cooldownMs: number | null;
  /** Epoch ms: a HALF_OPEN breaker's probe is given up (its instance died) after this. */
  probeUntilMs: number | null;
}

/** Whether a call may pass a breaker now. */
export type BreakerGate =
  { kind: 'pass' } | { kind: 'probe' } | { kind: 'refuse'; retryAfterMs: number | null; byOperator: boolean };

const PASS: BreakerGate = { kind: 'pass' };
const PROBE: BreakerGate = { kind: 'probe' };

/**
 * The operator's force wins over everything; a disabled breaker passes; an OPEN breaker refuses
 * until its cool-down ends, then lets one probe through (the probe is claimed in the database, so
 * one instance gets it); a HALF_OPEN breaker refuses while its probe runs.
 */
export function gate(record: BreakerRecord | undefined, now: number): BreakerGate {
  if (record === undefined) return PASS;
  if (record.forced === 'OPEN') return { kind: 'refuse', retryAfterMs: null, byOperator: true };
  if (record.forced === 'CLOSED' || !record.enabled) return PASS;
  switch (record.state) {
    case 'CLOSED':
      return PASS;
    case 'OPEN': {
      const at = record.retryAtMs ?? 0;
      return now >= at ? PROBE : { kind: 'refuse', retryAfterMs: at - now, byOperator: false };
    }
    case 'HALF_OPEN': {
      const until = record.probeUntilMs ?? 0;
      return now >= until ? PROBE : { kind: 'refuse', retryAfterMs: until - now, byOperator: false };
    }
  }
}

/** The cool-down after a failed probe: doubled, at most the rule's maximum. */
export function nextCooldownMs(current: number | null, rule: BreakerRule): number {
  return Math.min(rule.maxCooldownMs, Math.max(rule.cooldownMs, (current ?? rule.cooldownMs) * 2));
}

/** Whether a breaker of `scope` counts calls when it has no stored row: connections do, operations not. */
export function onByDefault(scope: BreakerScope): boolean {
  return scope === 'CONNECTION';
}
