/**
 * What the model is told when the guard refuses a call (pure; issue 29, DESIGN.md rule 19): a
 * breaker open, a rate limit reached, a concurrency cap full, or limits that could not be checked.
 */
import { failure, type CallResult } from '../turns/result.js';
import { CallStatus } from '../turns/call-status.js';
import type { CachedOperation } from '../turns/tool-cache.js';
import type { BreakerRecord } from './breaker.js';
import { describeLimit } from './bucket.js';
import type { LimitRecord } from './store.js';
import type { CapRecord } from './cap-store.js';

/** Why a call was refused, for the debugger's event and the answer. */
export interface Refused {
  by: 'BREAKER' | 'RATE_LIMIT';
  scope: string;
  /** What the message names: a connection's slug or an operation's key. */
  name: string;
  retryAfterMs: number | null;
}

export interface Refusal {
  ok: false;
  result: CallResult & { retryAfterMs: number | null; refused: Refused };
}

export function breakerRefusal(
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

export function limitRefusal(op: CachedOperation, name: string, r: LimitRecord, waitMs: number): Refusal {
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

export function capRefusal(op: CachedOperation, name: string, r: CapRecord): Refusal {
  const what = r.scope === 'CONNECTION' ? `its connection "${op.connection.slug}"` : 'it';
  const retryAfter = Math.max(1_000, r.maxWaitMs);
  return refusal(
    CallStatus.RATE_LIMITED,
    `This tool is busy: ${name} already has ${r.maxInFlight} call${r.maxInFlight === 1 ? '' : 's'} in flight for ${what}, the most allowed at once. Nothing was done; try again in about ${seconds(retryAfter)} seconds, or answer without it.`,
    { by: 'RATE_LIMIT', scope: r.scope, name, retryAfterMs: retryAfter },
  );
}

/** The database could not say whether a limit or cap allows a WRITE, so it is not sent. */
export function uncheckedRefusal(name: string, scope: string): Refusal {
  return refusal(
    CallStatus.UNAVAILABLE,
    `The platform could not check the limits of ${name}, so it was not called. Nothing was done; it may work if tried again later.`,
    { by: 'RATE_LIMIT', scope, name, retryAfterMs: null },
  );
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export function refusal(status: CallStatus, message: string, refused: Refused): Refusal {
  const result = failure(status, message) as Refusal['result'];
  result.retryAfterMs = refused.retryAfterMs;
  result.refused = refused;
  return { ok: false, result };
}
