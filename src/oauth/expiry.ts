/**
 * Token lifetime arithmetic, pure: every function takes the current time as an argument.
 */

/** A token this close to its expiry is renewed before it is used (issue 7: "within 60 s"). */
export const DEFAULT_REFRESH_SKEW_MS = 60_000; // 60 seconds

/**
 * The moment a token expires, from the `expires_in` (seconds) of a token response and the time the
 * request was sent (not received: a slow answer must not stretch the lifetime). Null when the
 * server gave no lifetime, or a nonsensical one: such a token is used until the server refuses it.
 */
export function expiresAtFrom(expiresIn: number | undefined, requestedAtMs: number): Date | null {
  if (expiresIn === undefined || !Number.isFinite(expiresIn) || expiresIn < 0) return null;
  return new Date(requestedAtMs + Math.floor(expiresIn * 1000));
}

/** Whether a token expiring at `expiresAt` must be renewed before use at `nowMs`. */
export function needsRefresh(
  expiresAt: Date | null,
  nowMs: number,
  skewMs: number = DEFAULT_REFRESH_SKEW_MS,
): boolean {
  return expiresAt !== null && expiresAt.getTime() - nowMs <= skewMs;
}

/** Whether a token expiring at `expiresAt` is still accepted at `nowMs` (no lifetime: yes). */
export function isUnexpired(expiresAt: Date | null, nowMs: number): boolean {
  return expiresAt === null || expiresAt.getTime() > nowMs;
}
