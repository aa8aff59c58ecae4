/**
 * A `fetch`-compatible function over the shared `OutboundClient`, for oauth4webapi's
 * `[customFetch]` option: metadata, registration and token requests then get the same address
 * checks, deadline and body cap as every other outbound request (DESIGN.md rule 9).
 *
 * oauth4webapi asks for `redirect: 'manual'`; we follow none (`maxRedirects: 0`): a 3xx comes back
 * as it is, and oauth4webapi treats it as the failure it is. A failure rejects with the
 * `OutboundError`, whose message names the host only.
 */
import type { OutboundClient } from '../http/outbound.js';

/** Answers of OAuth endpoints are small; a larger one is refused while it streams. */
export const DEFAULT_OAUTH_MAX_BODY_BYTES = 256 * 1024; // 256 KiB

export interface OAuthFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | null;
  redirect?: string;
}

export type OAuthFetch = (url: string, init: OAuthFetchInit) => Promise<Response>;

/** Statuses whose `Response` must not have a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function bodyOf(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  // oauth4webapi sends only these for the requests we make; anything else is a programming error.
  throw new TypeError('the OAuth fetch adapter sends only string and URLSearchParams bodies');
}

function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      try {
        headers.append(name, v);
      } catch {
        // A header value `Headers` refuses cannot matter to OAuth processing: drop it.
      }
    }
  }
  return headers;
}

export function outboundFetch(
  outbound: OutboundClient,
  options: { timeoutMs?: number; maxBodyBytes?: number } = {},
): OAuthFetch {
  const { timeoutMs, maxBodyBytes = DEFAULT_OAUTH_MAX_BODY_BYTES } = options;
  return async (url, init) => {
    const res = await outbound.request(url, {
      method: init.method ?? 'GET',
      headers: init.headers ?? {},
      body: bodyOf(init.body),
      maxRedirects: 0,
      maxBodyBytes,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const text = await res.text();
    return new Response(NULL_BODY_STATUSES.has(res.status) ? null : text, {
      status: res.status,
      headers: toHeaders(res.headers),
    });
  };
}
