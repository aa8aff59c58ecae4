/**
 * The one outbound HTTP client. Every request the service makes goes through it: MCP calls,
 * description fetches, OpenAPI calls and OAuth (DESIGN.md rule 9).
 *
 * What it guarantees, for every request and every redirect hop:
 * - the address passes the one static rule, `url-policy.ts#judgeUrl`, which the save-time check
 *   uses too: absolute `https://`; `http://` only for allow-listed hosts (and, with
 *   `allowLoopback`, for loopback hosts);
 * - the peer address is public. The check runs at connect time, on the addresses DNS returned for
 *   that very connection (a custom `lookup` inside the one undici `Agent`'s connector), so a name
 *   that resolves to a public address once and to a private one later (DNS rebinding) is still
 *   refused. IP literals in the URL are checked before sending, because `net.connect` skips the
 *   lookup for them;
 * - header names are tokens and header values hold no CR, LF or NUL;
 * - one deadline (`timeoutMs`, one timer per request) covers connect, headers and the whole body;
 * - the body is counted while it streams and cut at `maxBodyBytes`: it is never buffered first.
 *
 * Errors are `OutboundError`s with a stable `code` and a message that names the host only: never a
 * header value, a query string or a path, which may all carry credentials.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { OutboundError, OutboundErrorCode } from './outbound-error.js';
import { CALL_TIMEOUT_MS, MAX_UPSTREAM_BODY_BYTES } from '../limits.js';
import { Memo } from '../memo.js';
import { systemClock, type Clock } from '../clock.js';
import { checkHeaders, pickSafeHeaders, withoutContentType } from './outbound-headers.js';
import { addressRefused, connectFailed, guardedLookup } from './outbound-connect.js';
import {
  aborted,
  CappedResponse,
  Deadline,
  DUMP_LIMIT_BYTES,
  type OutboundResponse,
} from './outbound-response.js';
import {
  classifyAddress,
  compileUrlPolicy,
  type CompiledUrlPolicy,
  defaultPort,
  isAddressAllowed,
  isAllowListedHost,
  judgeUrl,
} from './url-policy.js';

/** Per-request deadline, covering connect, response headers and the whole body. */
export const DEFAULT_TIMEOUT_MS = CALL_TIMEOUT_MS;
/** Response bodies are cut here. */
export const DEFAULT_MAX_BODY_BYTES = MAX_UPSTREAM_BODY_BYTES;
/** Redirect hops followed per request; one more is `REDIRECT_REFUSED`. */
export const DEFAULT_MAX_REDIRECTS = 3;
/**
 * TCP + TLS handshake budget. Shorter than the request deadline on purpose: a connect that fails
 * is `CONNECT_FAILED` (provably never reached the server, so even a WRITE may be retried), while a
 * request that times out may have reached it.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000; // 5 seconds
/** Idle keep-alive sockets are closed after this long (undici's default). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000; // 4 seconds
/** How much of an unread body `dump()` drains to keep the socket reusable before destroying it. */

export { isOutboundError, OutboundError, OutboundErrorCode } from './outbound-error.js';
export { classifyAddress, isAddressAllowed } from './url-policy.js';
export type { OutboundResponse } from './outbound-response.js';

export interface OutboundOptions {
  /**
   * Hosts (`name`, `name:port`, `[v6]` or `[v6]:port`) allowed over `http://` and to any address,
   * private ones included. Config, for internal services the operator trusts.
   */
  allowHosts?: string[];
  /** Dev and test: loopback addresses, and `http://` to loopback hosts (`url-policy.ts`), are allowed. */
  allowLoopback?: boolean;
  /** Default per-request deadline in ms (connect + headers + body). */
  timeoutMs?: number;
  /** Default response body cap in bytes. */
  maxBodyBytes?: number;
  /** Default number of redirect hops followed. */
  maxRedirects?: number;
  /** TCP + TLS handshake budget in ms. */
  connectTimeoutMs?: number;
  /** Idle keep-alive sockets are closed after this many ms. */
  keepAliveTimeoutMs?: number;
  /** DNS lookup, injectable for tests. Every address it returns is checked. Defaults to `dns.lookup`. */
  lookup?: LookupFunction;
  /** The clock the per-request deadline runs on (src/clock.ts). Defaults to `systemClock`. */
  clock?: Clock;
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
  timeoutMs?: number;
  maxBodyBytes?: number;
  /**
   * Redirect hops followed; one more is `REDIRECT_REFUSED`. `0` follows none: a 3xx comes back
   * as it is, for callers that handle redirects themselves (OAuth).
   */
  maxRedirects?: number;
  signal?: AbortSignal;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Addresses kept parsed and checked per client (the table is emptied when full). */
const CHECKED_URLS_KEPT = 256;

/**
 * One undici `Agent` with keep-alive, shared by every request. Construct one per process and
 * `close()` it on shutdown.
 */
export class OutboundClient {
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  readonly maxRedirects: number;
  readonly allowLoopback: boolean;
  readonly #policy: CompiledUrlPolicy;
  readonly #agent: Agent;
  readonly #clock: Clock;
  /** Addresses that passed `checkUrl`, parsed (shared by requests: never changed). */
  readonly #checkedUrls = new Memo(CHECKED_URLS_KEPT, (input) => this.checkUrl(input));

  constructor(options: OutboundOptions = {}) {
    const {
      allowHosts = [],
      allowLoopback = false,
      timeoutMs = DEFAULT_TIMEOUT_MS,
      maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
      maxRedirects = DEFAULT_MAX_REDIRECTS,
      connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
      keepAliveTimeoutMs = DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      lookup = dnsLookup,
      clock = systemClock,
    } = options;
    this.timeoutMs = timeoutMs;
    this.#clock = clock;
    this.maxBodyBytes = maxBodyBytes;
    this.maxRedirects = maxRedirects;
    this.allowLoopback = allowLoopback;
    this.#policy = compileUrlPolicy({ allowHosts, allowLoopback });

    const strict = buildConnector({
      lookup: guardedLookup(lookup, allowLoopback),
      timeout: connectTimeoutMs,
    });
    // Allow-listed hosts may resolve to private addresses: that is what the list is for.
    const open =
      this.#policy.rules.length > 0 ? buildConnector({ lookup, timeout: connectTimeoutMs }) : strict;
    const connect: buildConnector.connector = (opts, callback) => {
      const host = opts.hostname;
      const allowListed = isAllowListedHost(this.#policy, host, opts.port || defaultPort(opts.protocol));
      // Defence in depth: IP literals never reach the lookup, and `request` checked them already.
      if (!allowListed && isIP(host) !== 0 && !isAddressAllowed(host, allowLoopback)) {
        callback(addressRefused(host, classifyAddress(host)), null);
        return;
      }
      (allowListed ? open : strict)(opts, (err, socket) => {
        if (err) callback(connectFailed(err, host), null);
        else callback(null, socket);
      });
    };
    this.#agent = new Agent({ connect, keepAliveTimeout: keepAliveTimeoutMs });
  }

  /**
   * Parses and checks a URL without sending anything: absolute `http(s)`, no credentials,
   * `https://` unless allowed, and an IP literal host must be allowed. Throws `URL_REFUSED` or
   * `ADDRESS_REFUSED`. Other modules use it to validate addresses at input time.
   */
  checkUrl(input: string | URL): URL {
    const verdict = judgeUrl(input, this.#policy);
    if (verdict.ok) return verdict.url;
    const host = verdict.host;
    switch (verdict.reason) {
      case 'INVALID':
        throw new OutboundError(OutboundErrorCode.URL_REFUSED, 'the address is not an absolute URL', {
          reachedServer: false,
        });
      case 'SCHEME':
        throw new OutboundError(
          OutboundErrorCode.URL_REFUSED,
          `only https:// addresses are allowed (${host})`,
          { reachedServer: false, data: { host, protocol: verdict.url?.protocol } },
        );
      case 'CREDENTIALS':
        throw new OutboundError(
          OutboundErrorCode.URL_REFUSED,
          `the address for ${host} must not carry credentials`,
          { reachedServer: false, data: { host } },
        );
      case 'HTTP':
        throw new OutboundError(
          OutboundErrorCode.URL_REFUSED,
          `http:// is not allowed for ${host}; use https://, or add the host to OUTBOUND_ALLOW_HOSTS`,
          { reachedServer: false, data: { host, protocol: 'http:' } },
        );
      case 'ADDRESS':
        throw addressRefused(host, verdict.range ?? 'invalid');
    }
  }

  /**
   * `checkUrl` for a request. The same few addresses are called again and again: each is parsed
   * and judged once. The verdict depends on the address and this client's options alone (names
   * are judged at connect time, after DNS, on every new connection).
   */
  #checkedUrl(input: string | URL): URL {
    return typeof input === 'string' ? this.#checkedUrls.get(input) : this.checkUrl(input);
  }

  /**
   * Sends one request and resolves once the response headers arrive, following redirects (each hop
   * re-checked; cross-origin hops drop every header but a few safe ones). Any status resolves: the
   * caller decides what a 4xx or 5xx means. The deadline keeps running while the body is read.
   */
  async request(url: string | URL, init: OutboundRequestInit = {}): Promise<OutboundResponse> {
    const target = this.#checkedUrl(url);
    const headers = init.headers ?? {};
    checkHeaders(headers, target.hostname);
    const method = init.method ?? 'GET';
    const body = init.body ?? null;
    const maxBodyBytes = init.maxBodyBytes ?? this.maxBodyBytes;
    const maxRedirects = init.maxRedirects ?? this.maxRedirects;
    const timeoutMs = init.timeoutMs ?? this.timeoutMs;

    if (init.signal?.aborted) throw aborted(target.hostname, init.signal.reason);
    const deadline = new Deadline(target.hostname, timeoutMs, init.signal, this.#clock);
    try {
      return await this.#follow(target, { method, headers, body, maxBodyBytes, maxRedirects }, deadline);
    } catch (err) {
      deadline.end();
      throw err;
    }
  }

  /** The hops of one request; resolves with the final answer, its body still to read. */
  async #follow(
    first: URL,
    init: {
      method: string;
      headers: Record<string, string>;
      body: string | Buffer | null;
      maxBodyBytes: number;
      maxRedirects: number;
    },
    deadline: Deadline,
  ): Promise<OutboundResponse> {
    let target = first;
    let { method, headers, body } = init;
    const { maxBodyBytes, maxRedirects } = init;
    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      const options: Dispatcher.RequestOptions = {
        origin: target.origin,
        path: target.pathname + target.search,
        method,
        headers,
        body,
        signal: deadline.signal,
      };
      try {
        // undici sees an abort only once the socket connects: the wait for headers races it.
        res = await deadline.race(this.#agent.request(options));
      } catch (err) {
        const translated = deadline.failure(err);
        throw hop > 0 && translated.code === OutboundErrorCode.ADDRESS_REFUSED
          ? redirectRefused(target.hostname, 'the redirect target address is refused', translated)
          : translated;
      }
      const location = res.headers.location;
      if (!REDIRECT_STATUSES.has(res.statusCode) || typeof location !== 'string' || maxRedirects === 0) {
        return new CappedResponse(res, target, maxBodyBytes, deadline);
      }
      await res.body.dump({ limit: DUMP_LIMIT_BYTES }).catch(() => undefined);
      const from = target.hostname;
      if (hop >= maxRedirects) throw redirectRefused(from, `more than ${maxRedirects} redirects`);
      let next: URL;
      try {
        next = this.checkUrl(new URL(location, target));
      } catch (err) {
        throw redirectRefused(from, 'the redirect target is refused', err);
      }
      if (next.origin !== target.origin) headers = pickSafeHeaders(headers);
      // Browsers turn a redirected POST into a GET for 301/302, and every non-HEAD method for 303.
      if (
        res.statusCode === 303
          ? method !== 'HEAD'
          : res.statusCode !== 307 && res.statusCode !== 308 && method === 'POST'
      ) {
        method = 'GET';
        body = null;
        headers = withoutContentType(headers);
      }
      target = next;
      deadline.host = next.hostname;
    }
  }

  /**
   * GET a URL and return its body as text, capped at `maxBytes`. Throws `HTTP_STATUS` (with
   * `data.status`) for a status outside 2xx, `BODY_TOO_LARGE` past the cap, and every other
   * `OutboundError` of `request`.
   */
  async fetchText(
    url: string | URL,
    maxBytes: number,
    init: Pick<OutboundRequestInit, 'headers' | 'timeoutMs' | 'signal'> = {},
  ): Promise<string> {
    const res = await this.request(url, { ...init, method: 'GET', maxBodyBytes: maxBytes });
    if (res.status < 200 || res.status >= 300) {
      await res.dump();
      throw new OutboundError(
        OutboundErrorCode.HTTP_STATUS,
        `${res.url.hostname} answered with HTTP ${res.status}`,
        { reachedServer: true, data: { host: res.url.hostname, status: res.status } },
      );
    }
    return res.text();
  }

  /** Closes idle sockets and refuses new requests. */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}

function redirectRefused(host: string, why: string, cause?: unknown): OutboundError {
  const data: Record<string, unknown> = { host };
  if (cause instanceof OutboundError) data.reason = cause.code;
  return new OutboundError(OutboundErrorCode.REDIRECT_REFUSED, `redirect from ${host} refused: ${why}`, {
    reachedServer: true,
    data,
    cause,
  });
}
