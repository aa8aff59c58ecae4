/**
 * The authorization request the operator's browser is sent to, pure (OAuth 2.1 with PKCE S256 and
 * the RFC 8707 `resource`, as protocol 2025-06-18 basic/authorization.mdx asks).
 */

export interface AuthorizationRequest {
  /** The server's `authorization_endpoint`. */
  endpoint: string;
  clientId: string;
  redirectUri: string;
  /** The one-time `state`, in clear (only its hash is stored). */
  state: string;
  /** The S256 challenge of the PKCE verifier. */
  codeChallenge: string;
  resource: string;
  /** Space-separated scopes, or null for the server's default. */
  scope: string | null;
}

export function authorizationUrl(request: AuthorizationRequest): string {
  const url = new URL(request.endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', request.clientId);
  url.searchParams.set('redirect_uri', request.redirectUri);
  url.searchParams.set('state', request.state);
  url.searchParams.set('code_challenge', request.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('resource', request.resource);
  if (request.scope !== null) url.searchParams.set('scope', request.scope);
  return url.href;
}
