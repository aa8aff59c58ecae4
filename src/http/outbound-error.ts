/**
 * The outbound client's errors (pure, a leaf beside `outbound.ts`): what callers classify a failed
 * request by, without loading the client, undici or the network modules.
 */
import { AppError } from '../errors.js';

/** Stable codes of `OutboundError`. They never go over the wire. */
export const OutboundErrorCode = {
  /** The URL is not absolute, not `http(s)`, carries credentials, or is `http://` to a host that is not allow-listed. Nothing was sent. */
  URL_REFUSED: 'URL_REFUSED',
  /** The host is, or resolved to, a private, loopback, link-local, metadata, unique-local, IPv4-mapped, unspecified or otherwise non-public address. Nothing was sent. */
  ADDRESS_REFUSED: 'ADDRESS_REFUSED',
  /** A header name is not a token, a value holds CR, LF or NUL, or the header is one the client sets itself. Nothing was sent. */
  HEADER_INVALID: 'HEADER_INVALID',
  /** The deadline passed before the body was complete. The request may have reached the server. */
  TIMEOUT: 'TIMEOUT',
  /** The response body is larger than the cap. It was cut while streaming. */
  BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  /** DNS failure, connection refused, connect timeout or TLS failure: the request provably never reached the server. */
  CONNECT_FAILED: 'CONNECT_FAILED',
  /** The connection failed after it was established (reset, closed mid-body…). The request may have reached the server. */
  TRANSPORT_ERROR: 'TRANSPORT_ERROR',
  /** A redirect pointed to a refused URL or address, or there were more hops than `maxRedirects`. */
  REDIRECT_REFUSED: 'REDIRECT_REFUSED',
  /** `fetchText` only: the server answered with a status outside 2xx; `data.status` holds it. */
  HTTP_STATUS: 'HTTP_STATUS',
  /** `json()` only: the body is not valid JSON. */
  INVALID_JSON: 'INVALID_JSON',
  /** The caller's `signal` aborted the request. The request may have reached the server. */
  ABORTED: 'ABORTED',
} as const;
export type OutboundErrorCode = (typeof OutboundErrorCode)[keyof typeof OutboundErrorCode];

export class OutboundError extends AppError {
  override readonly name = 'OutboundError';
  declare readonly code: OutboundErrorCode;
  /**
   * False only when the request provably never reached the server (nothing sent, or the connection
   * was never established). A WRITE may be retried only then.
   */
  readonly reachedServer: boolean;

  /** `data` holds structured, secret-free details, such as `{ status }` or `{ host, limitBytes }`. */
  constructor(
    code: OutboundErrorCode,
    message: string,
    options: { reachedServer: boolean; data?: Record<string, unknown>; cause?: unknown },
  ) {
    super(code, message, { data: options.data, cause: options.cause });
    this.reachedServer = options.reachedServer;
  }
}

export function isOutboundError(value: unknown): value is OutboundError {
  return value instanceof OutboundError;
}
