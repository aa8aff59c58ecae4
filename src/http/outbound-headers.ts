/**
 * Outbound headers (pure): which names and values a request may carry, and which survive a
 * redirect (DESIGN.md rule 9). `OutboundClient` (outbound.ts) checks every request and hop.
 */
import { OutboundError, OutboundErrorCode } from './outbound-error.js';
import { FORBIDDEN_HEADER_CHARS } from '../limits.js';

export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers that undici or the transport set; a caller setting them could split or misroute a request. */
export const RESERVED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
/** Kept on a cross-origin redirect; every other caller header is dropped so no credential follows. */
export const CROSS_ORIGIN_SAFE_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-type',
  'user-agent',
  'mcp-protocol-version',
]);

export function checkHeaders(headers: Record<string, string>, host: string): void {
  for (const name in headers) {
    const value = headers[name];
    if (!TOKEN.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new OutboundError(OutboundErrorCode.HEADER_INVALID, `header name is not allowed for ${host}`, {
        reachedServer: false,
        data: { host },
      });
    }
    if (typeof value !== 'string' || FORBIDDEN_HEADER_CHARS.test(value)) {
      // The name is safe to report (it is a token); the value never is.
      throw new OutboundError(
        OutboundErrorCode.HEADER_INVALID,
        `header "${name}" has a value with CR, LF or NUL, or not a string, for ${host}`,
        { reachedServer: false, data: { host, header: name } },
      );
    }
  }
}

export function pickSafeHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (CROSS_ORIGIN_SAFE_HEADERS.has(name.toLowerCase())) out[name] = headers[name] as string;
  }
  return out;
}

export function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (name.toLowerCase() !== 'content-type') out[name] = headers[name] as string;
  }
  return out;
}
