/**
 * Whether an API token is valid (pure): not revoked, and its expiry, when it has one, is after
 * `now`. One clock decides it, the service's (`AuthService`'s injected `now`, `Date.now` in
 * production): authentication binds it into {@link TOKEN_ACTIVE_SQL} and `ApiToken.active` reads
 * it through {@link isTokenActive}, so a token stops working at the moment the API says it is no
 * longer active, whatever the database server's clock says.
 */

/** The columns of a token that decide it. */
export interface TokenValidity {
  revokedAt: Date | null;
  expiresAt: Date | null;
}

/** Not revoked and not expired at `now`: an expiry at exactly `now` has passed. */
export function isTokenActive(token: TokenValidity, now: Date): boolean {
  return token.revokedAt === null && (token.expiresAt === null || token.expiresAt > now);
}

/** {@link isTokenActive} over `api_token`'s columns; its one binding is `now` (an ISO timestamp). */
export const TOKEN_ACTIVE_SQL = `revoked_at is null and (expires_at is null or expires_at > ?::timestamptz)`;
