/**
 * The `state` of a sign-in, pure. `state` is a one-time secret carried by the browser from
 * `beginSignIn` to the callback: only its SHA-256 is stored, so a database read does not let anyone
 * finish someone else's sign-in.
 */
import { createHash } from 'node:crypto';

/** How long a sign-in may take between `beginSignIn` and the callback. */
export const DEFAULT_SIGN_IN_TTL_MS = 10 * 60_000; // 10 minutes

/** What we generate is 43 base64url characters; anything far from that shape is not ours. */
const STATE_SHAPE = /^[A-Za-z0-9_-]{16,256}$/;

/** Why a callback's `state` is refused. */
export type StateProblem =
  /** No `state` parameter, or one that cannot be ours. */
  | 'MISSING'
  /** Well formed, but no sign-in has it: forged, or from another deployment. */
  | 'UNKNOWN'
  /** The sign-in already completed or failed once: a replay. */
  | 'USED'
  /** More than the sign-in lifetime after `beginSignIn`. */
  | 'EXPIRED';

export function isWellFormedState(state: string | null | undefined): state is string {
  return typeof state === 'string' && STATE_SHAPE.test(state);
}

/** The stored form of a `state`: lower-case hex SHA-256. */
export function hashState(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}

/** Why a stored sign-in cannot be completed at `nowMs`, or null when it can. */
export function signInStateProblem(
  row: { usedAt: Date | null; expiresAt: Date } | null,
  nowMs: number,
): Exclude<StateProblem, 'MISSING'> | null {
  if (row === null) return 'UNKNOWN';
  if (row.usedAt !== null) return 'USED';
  if (row.expiresAt.getTime() <= nowMs) return 'EXPIRED';
  return null;
}

/** A sentence for the callback page, for people: what happened and what to do. */
export function describeStateProblem(problem: StateProblem): string {
  switch (problem) {
    case 'MISSING':
      return 'This address has no valid sign-in state. Start the sign-in again from the console.';
    case 'UNKNOWN':
      return 'This sign-in is not known here. Start the sign-in again from the console.';
    case 'USED':
      return 'This sign-in link was already used. Start the sign-in again from the console.';
    case 'EXPIRED':
      return 'This sign-in link expired (it is valid for 10 minutes). Start the sign-in again from the console.';
  }
}
