/**
 * Rate limits (pure; issue 29): token buckets shared in PostgreSQL, spent locally from
 * leases. No clock is read: every function takes `now` (epoch ms).
 *
 * A limit is `calls` per `periodMs` with a bucket of `burst` tokens. The shared bucket refills at
 * calls / periodMs, up to `burst`. An instance takes a lease of a few tokens from it in one
 * statement and spends them in memory, so most calls run no statement. Every admitted call spent a
 * token taken from the shared bucket, so the instances together never admit more than
 * `burst + calls × elapsed / periodMs`; the error the other way is at most the tokens that leases
 * hold unspent at a moment (at most MAX_LEASE_SHARE of the limit per instance). A lease unspent
 * after LEASE_TTL_MS is given back with the next lease, so an idle instance holds nothing for long.
 */

/** A lease is at most this share of the limit's calls per period (and at most `burst`). */
export const MAX_LEASE_SHARE = 0.02;
/** Unspent leased tokens go back to the shared bucket after this. */
export const DEFAULT_LEASE_TTL_MS = 1_000; // 1 second

export type LimitScope = 'CONNECTION' | 'OPERATION' | 'WORKSPACE';

export interface LimitSpec {
  calls: number;
  periodMs: number;
  burst: number;
}

/** The tokens this instance holds of one limit. */
export interface Lease {
  tokens: number;
  /** How many it asked for last time. */
  size: number;
  /** Epoch ms when it was taken (0: never). */
  takenAt: number;
}

export function emptyLease(): Lease {
  return { tokens: 0, size: 1, takenAt: 0 };
}

/** The most tokens one lease takes. */
export function maxLease(spec: LimitSpec): number {
  return Math.max(1, Math.min(spec.burst, Math.floor(spec.calls * MAX_LEASE_SHARE)));
}

/** The lease can pay for a call now. */
export function canSpend(lease: Lease, now: number, ttlMs: number): boolean {
  return lease.tokens >= 1 && now - lease.takenAt < ttlMs;
}

/**
 * What the next lease asks for, and what it gives back: a lease spent within its TTL doubles the
 * next one (a busy instance runs fewer statements), a lease that expired unspent gives its tokens
 * back and halves the next one, a lease spent slower than its TTL keeps its size.
 */
export function nextLease(
  lease: Lease,
  now: number,
  ttlMs: number,
  spec: LimitSpec,
): { want: number; giveBack: number } {
  const max = maxLease(spec);
  if (lease.takenAt === 0) return { want: 1, giveBack: 0 };
  const expired = now - lease.takenAt >= ttlMs;
  const giveBack = expired ? Math.max(0, Math.floor(lease.tokens)) : 0;
  const size = !expired ? lease.size * 2 : giveBack > 0 ? Math.floor(lease.size / 2) : lease.size;
  return { want: Math.max(1, Math.min(max, size)), giveBack };
}

/** The bucket's tokens after refilling (mirrors LEASE_SQL in store.ts; unit tests hold both to it). */
export function refilled(
  tokens: number,
  refilledMs: number,
  now: number,
  spec: LimitSpec,
  giveBack = 0,
): number {
  return Math.min(
    spec.burst,
    tokens + giveBack + (Math.max(0, now - refilledMs) * spec.calls) / spec.periodMs,
  );
}

/** How long until the bucket holds one token again, from `available` tokens now (ms, at least 1). */
export function retryAfterMs(available: number, spec: LimitSpec): number {
  return Math.max(1, Math.ceil(((1 - Math.min(1, available)) * spec.periodMs) / spec.calls));
}

/** "100 calls per minute" */
export function describeLimit(spec: LimitSpec): string {
  return `${spec.calls} call${spec.calls === 1 ? '' : 's'} per ${spec.periodMs === 1_000 ? 'second' : 'minute'}`;
}
