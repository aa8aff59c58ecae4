/**
 * Whether a failed request may be sent again (pure): DESIGN.md rule 7, the one rule every call path
 * asks (the MCP client's `callTool` and listing, and OpenAPI calls in `turns/dispatch.ts`).
 *
 * Two kinds of "again", counted apart:
 * - a **retry** is a new attempt, at most one per call (`MAX_ATTEMPTS`): after a timeout or a broken
 *   connection only for a `READ` or idempotent operation, since the first request may have done its
 *   work; after a failed connect (the request provably never reached the server) for any operation;
 * - a **re-send** repeats a request the server refused before acting on it (an MCP session it wants
 *   or that expired, a modern request a legacy server turned away): at most one per call
 *   (`MAX_RESENDS`), whatever the risk, and not an attempt;
 * - a **renewal** repeats a request whose OAuth token the server rejected (401) before acting, with
 *   a renewed token: at most one per call (`MAX_RENEWALS`), whatever the risk, and not an attempt.
 *
 * Nothing else is sent again: a cancelled call, a refusal by policy (address, URL, header, body
 * size), or an answer the server gave (an HTTP status, a JSON-RPC error, a malformed reply).
 */
import type { Risk } from './types.js';

/** Counted attempts per call: the first and at most one retry. */
export const MAX_ATTEMPTS = 2;
/** Re-sends per call of a request refused before the server acted on it. */
export const MAX_RESENDS = 1;
/** Sends per call with a renewed token after the server rejected the first (401). */
export const MAX_RENEWALS = 1;

/** What went wrong with the last request. */
export type FailureKind =
  /** The deadline passed; the server may have received the request and acted on it. */
  | 'timeout'
  /** DNS, refused connection, connect timeout or TLS failure. */
  | 'connect_failed'
  /** The connection broke once established (reset, closed mid-answer). */
  | 'connection_broken'
  /** The caller cancelled the call. */
  | 'cancelled'
  /** Refused by this service's policy (URL, address, header, redirect, body size): nothing helps. */
  | 'refused'
  /** The server answered: an HTTP status, a JSON-RPC error, a malformed or unusable reply. */
  | 'answered'
  /** The server refused the request before acting on it (MCP: 400/404 for want of a session, or a legacy server turning away a modern request). */
  | 'refused_before_acting'
  /** The server rejected the OAuth token (401) before acting; a renewed token may be sent. */
  | 'credential_rejected';

export interface RetryQuestion {
  /** Counted attempts made so far (1 after the first request; re-sends are not attempts). */
  attempts: number;
  /** Re-sends made so far. */
  resends: number;
  failure: FailureKind;
  /** False only when the request provably never reached the server. */
  reachedServer: boolean;
  risk: Risk;
  /** The operation may be repeated without a second effect (`idempotentHint`). */
  idempotent: boolean;
  /** Sends with a renewed token made so far (0 when absent). */
  renewals?: number;
}

/** Why a request is, or is not, sent again. Stable: tests and logs read it. */
export type RetryReason =
  /** A READ or idempotent operation after a timeout or broken connection. */
  | 'SAFE_TO_REPEAT'
  /** The request never reached the server, so it cannot have acted. */
  | 'NEVER_REACHED'
  /** The server refused it before acting: re-sent, not counted as an attempt. */
  | 'REFUSED_BEFORE_ACTING'
  /** The token was rejected before the server acted: sent once more with a renewed one. */
  | 'CREDENTIAL_RENEWED'
  /** The one retry (or the one re-send) is used up. */
  | 'LIMIT_REACHED'
  /** A WRITE that may have reached the server: a second send could do its work twice. */
  | 'MAY_HAVE_ACTED'
  | 'CANCELLED'
  /** A policy refusal or an answer from the server: sending again gives the same. */
  | 'NOT_TRANSIENT';

export type RetryDecision =
  | { retry: true; counts: 'attempt' | 'resend' | 'renewal'; reason: RetryReason }
  | { retry: false; reason: RetryReason };

export function mayRetry(q: RetryQuestion): RetryDecision {
  switch (q.failure) {
    case 'cancelled':
      return { retry: false, reason: 'CANCELLED' };
    case 'refused':
    case 'answered':
      return { retry: false, reason: 'NOT_TRANSIENT' };
    case 'refused_before_acting':
      return q.resends < MAX_RESENDS
        ? { retry: true, counts: 'resend', reason: 'REFUSED_BEFORE_ACTING' }
        : { retry: false, reason: 'LIMIT_REACHED' };
    case 'credential_rejected':
      return (q.renewals ?? 0) < MAX_RENEWALS
        ? { retry: true, counts: 'renewal', reason: 'CREDENTIAL_RENEWED' }
        : { retry: false, reason: 'LIMIT_REACHED' };
    case 'timeout':
    case 'connect_failed':
    case 'connection_broken': {
      if (q.attempts >= MAX_ATTEMPTS) return { retry: false, reason: 'LIMIT_REACHED' };
      if (!q.reachedServer) return { retry: true, counts: 'attempt', reason: 'NEVER_REACHED' };
      if (q.risk === 'READ' || q.idempotent)
        return { retry: true, counts: 'attempt', reason: 'SAFE_TO_REPEAT' };
      return { retry: false, reason: 'MAY_HAVE_ACTED' };
    }
  }
}

/**
 * The failure kind of an outbound error code (`http/outbound.ts`'s `OutboundErrorCode`; a string
 * here so this module stays free of I/O imports). Refusals and unknown codes are `refused`.
 */
export function failureOfOutboundCode(code: string): FailureKind {
  switch (code) {
    case 'TIMEOUT':
      return 'timeout';
    case 'CONNECT_FAILED':
      return 'connect_failed';
    case 'TRANSPORT_ERROR':
      return 'connection_broken';
    case 'ABORTED':
      return 'cancelled';
    case 'BODY_TOO_LARGE':
    case 'HTTP_STATUS':
    case 'INVALID_JSON':
      return 'answered';
    default:
      return 'refused';
  }
}
