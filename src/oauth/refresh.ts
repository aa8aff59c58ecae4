/**
 * The rules of token renewal, pure: what a renewal does with the row it has locked, and what its
 * outcome means to the caller that wanted a token. The I/O is in `renewal.service.ts`.
 */
import { OAuthError, OAuthErrorCode } from './errors.js';
import { isUnexpired, needsRefresh } from './expiry.js';

/** A refresh outcome, which the caller turns into a token or an error. */
export type RefreshOutcome =
  | { kind: 'token'; accessToken: string; refreshed: boolean }
  | { kind: 'needs_sign_in'; reason: string }
  | { kind: 'unavailable'; message: string };

/** Why a sign-in ends when its token expired and there is nothing to renew it with. */
export const NO_REFRESH_TOKEN_REASON = 'expired, and the server gave no refresh token';

/**
 * What a renewal does with the credential it holds locked: keep the current token (another renewal
 * got there first, or it is no longer due), renew it, or end the sign-in (expired and no refresh
 * token). `minValidityMs` is how long the token must still be valid to be kept; 'force' renews
 * whatever its expiry.
 */
export function refreshStep(
  row: { version: number; expiresAt: Date | null; hasRefreshToken: boolean },
  seenVersion: number,
  minValidityMs: number | 'force',
  nowMs: number,
): 'keep' | 'refresh' | 'end' {
  const due = minValidityMs === 'force' || needsRefresh(row.expiresAt, nowMs, minValidityMs);
  if (row.version !== seenVersion || !due) return 'keep';
  if (!row.hasRefreshToken) return isUnexpired(row.expiresAt, nowMs) ? 'keep' : 'end';
  return 'refresh';
}

/**
 * The token of an outcome, or the `OAuthError` the caller gets: NEEDS_SIGN_IN when the sign-in has
 * ended, TOKEN_ENDPOINT_UNAVAILABLE when a renewal failed for transport reasons and the token has
 * expired.
 */
export function tokenOf(connectionId: string, outcome: RefreshOutcome): string {
  switch (outcome.kind) {
    case 'token':
      return outcome.accessToken;
    case 'needs_sign_in':
      throw new OAuthError(
        OAuthErrorCode.NEEDS_SIGN_IN,
        `the OAuth sign-in of connection ${connectionId} has ended (${outcome.reason}); sign in again`,
      );
    case 'unavailable':
      throw new OAuthError(
        OAuthErrorCode.TOKEN_ENDPOINT_UNAVAILABLE,
        `the token could not be renewed just now: ${outcome.message}`,
      );
  }
}
