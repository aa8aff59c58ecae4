/**
 * Errors of the OAuth module. Messages are for people and never hold a token, a secret, a code or
 * a verifier: they name hosts and the OAuth error codes servers send, nothing else.
 */
import { AppError } from '../errors.js';

/** Stable codes of `OAuthError`. */
export const OAuthErrorCode = {
  /** `beginSignIn` on a connection that is not MCP, or has no endpoint. */
  NOT_APPLICABLE: 'NOT_APPLICABLE',
  /** The MCP server could not be reached to ask how it wants to be signed in to. */
  SERVER_UNREACHABLE: 'SERVER_UNREACHABLE',
  /** Neither the 401 nor the well-known addresses gave protected-resource metadata (RFC 9728). */
  OAUTH_NOT_ADVERTISED: 'OAUTH_NOT_ADVERTISED',
  /** The metadata names a resource that does not cover the connection's endpoint. */
  RESOURCE_MISMATCH: 'RESOURCE_MISMATCH',
  /** No usable authorization-server metadata (RFC 8414 or OpenID discovery) for the issuer. */
  AUTHORIZATION_SERVER_UNAVAILABLE: 'AUTHORIZATION_SERVER_UNAVAILABLE',
  /**
   * The metadata names an address the service will not use or show: not `https://` (a
   * `javascript:` or `data:` URL, plain `http://` to a host that is not loopback in development
   * or allow-listed), or one with credentials or a private address in it.
   */
  ADDRESS_REFUSED: 'ADDRESS_REFUSED',
  /** The authorization server does not offer PKCE with S256, or the code flow. */
  FLOW_UNSUPPORTED: 'FLOW_UNSUPPORTED',
  /** No dynamic registration: the operator must give a client id. */
  CLIENT_REQUIRED: 'CLIENT_REQUIRED',
  /** The client id or secret the operator gave is malformed, or cannot authenticate here. */
  CLIENT_INVALID: 'CLIENT_INVALID',
  /** Dynamic client registration (RFC 7591) was refused or failed. */
  REGISTRATION_FAILED: 'REGISTRATION_FAILED',
  /** The connection has no usable sign-in: never signed in, refresh refused, or 401 after refresh. */
  NEEDS_SIGN_IN: 'NEEDS_SIGN_IN',
  /** The token endpoint could not be used just now (unreachable, timeout, 5xx). The sign-in stays. */
  TOKEN_ENDPOINT_UNAVAILABLE: 'TOKEN_ENDPOINT_UNAVAILABLE',
} as const;
export type OAuthErrorCode = (typeof OAuthErrorCode)[keyof typeof OAuthErrorCode];

export class OAuthError extends AppError {
  override readonly name = 'OAuthError';
  declare readonly code: OAuthErrorCode;
  /** The input field a person can fix, for `userErrors`; null when none applies. */
  readonly field: string[] | null;

  constructor(code: OAuthErrorCode, message: string, options: { field?: string[]; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.field = options.field ?? null;
  }
}

/**
 * A server-sent OAuth error code (`invalid_grant`…) made safe to show: printable ASCII, at most
 * 64 characters. Servers put what they like there; it is still never a token of ours.
 */
export function safeOAuthCode(value: unknown): string {
  if (typeof value !== 'string') return 'unknown_error';
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, 64);
  return clean === '' ? 'unknown_error' : clean;
}
