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
import { EventEmitter } from 'node:events';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { OutboundError, OutboundErrorCode } from './outbound-error.js';
import { CALL_TIMEOUT_MS, FORBIDDEN_HEADER_CHARS, MAX_UPSTREAM_BODY_BYTES } from '../limits.js';
import { Memo } from '../memo.js';
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
const DUMP_LIMIT_BYTES = 64 * 1024; // 64 KiB

export { isOutboundError, OutboundError, OutboundErrorCode } from './outbound-error.js';
export { classifyAddress, isAddressAllowed } from './url-policy.js';

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

export interface OutboundResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The final URL, after redirects. */
  readonly url: URL;
  /**
   * The body as a stream, counted as it arrives: it throws `BODY_TOO_LARGE` past the cap. Read it at
   * most once, through this or through `text`/`json`/`dump`. Breaking out of the loop closes it.
   */
  readonly body: AsyncIterable<Buffer>;
  /** The whole body as UTF-8, capped. */
  text(): Promise<string>;
  /** The whole body parsed as JSON, capped; `INVALID_JSON` if it does not parse. */
  json(): Promise<unknown>;
  /** Discards the body. Never throws. Call it on every response whose body you don't read. */
  dump(): Promise<void>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers that undici or the transport set; a caller setting them could split or misroute a request. */
const RESERVED_HEADERS = new Set([
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
const CROSS_ORIGIN_SAFE_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-type',
  'user-agent',
  'mcp-protocol-version',
]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Addresses kept parsed and checked per client (the table is emptied when full). */
const CHECKED_URLS_KEPT = 256;

/**
 * Wraps a DNS lookup so that every address it yields is checked before `net.connect` uses it.
 * Node calls it with `all: true` when it races address families, so both callback shapes are served.
 */
function guardedLookup(base: LookupFunction, allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const wantAll = options.all === true;
    const opts: LookupOptions = { ...options, all: true };
    base(hostname, opts, (err, result, family) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list: LookupAddress[] =
        typeof result === 'string' ? [{ address: result, family: family ?? isIP(result) }] : result;
      if (list.length === 0) {
        const notFound: NodeJS.ErrnoException = new Error(`no addresses for ${hostname}`);
        notFound.code = 'ENOTFOUND';
        callback(notFound, '', 0);
        return;
      }
      for (const entry of list) {
        if (!isAddressAllowed(entry.address, allowLoopback)) {
          callback(addressRefused(hostname, classifyAddress(entry.address)), '', 0);
          return;
        }
      }
      const first = list[0] as LookupAddress;
      if (wantAll) callback(null, list);
      else callback(null, first.address, first.family);
    });
  };
}

function addressRefused(host: string, range: string): OutboundError {
  return new OutboundError(
    OutboundErrorCode.ADDRESS_REFUSED,
    `${host} is or resolves to a ${range} address, which is refused; if it is a server of yours that the service should reach, add it to OUTBOUND_ALLOW_HOSTS`,
    { reachedServer: false, data: { host, range } },
  );
}

function errorCodeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errorCodeOf(cause);
}

/** Everything the connector reports failed before a request byte was written. */
function connectFailed(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = errorCodeOf(err) ?? 'UNKNOWN';
  return new OutboundError(OutboundErrorCode.CONNECT_FAILED, `could not connect to ${host} (${code})`, {
    reachedServer: false,
    data: { host, cause: code },
    cause: err,
  });
}

function translateError(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = errorCodeOf(err) ?? 'UNKNOWN';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new OutboundError(OutboundErrorCode.TIMEOUT, `request to ${host} timed out`, {
      reachedServer: true,
      data: { host },
      cause: err,
    });
  }
  if (code === 'UND_ERR_INVALID_ARG') {
    // undici refused the request before sending it; our own checks should have caught it first.
    return new OutboundError(
      OutboundErrorCode.HEADER_INVALID,
      `request to ${host} was refused by the client`,
      {
        reachedServer: false,
        data: { host },
        cause: err,
      },
    );
  }
  return new OutboundError(OutboundErrorCode.TRANSPORT_ERROR, `connection to ${host} failed (${code})`, {
    reachedServer: true,
    data: { host, cause: code },
    cause: err,
  });
}

function checkHeaders(headers: Record<string, string>, host: string): void {
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
    } = options;
    this.timeoutMs = timeoutMs;
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
    const deadline = new Deadline(target.hostname, timeoutMs, init.signal);
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

function noop(): void {}

/**
 * What undici is given to abort a request: an `EventEmitter` (undici takes one in place of an
 * `AbortSignal`) that emits `abort` once. An `AbortSignal` (an `EventTarget`) and its listeners
 * cost a few microseconds more per request, on the path of every call.
 */
class DeadlineSignal extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * One request's deadline across its redirect hops: one timer, and the signal undici gets (it aborts
 * the connect wait, the headers and the body alike), which the caller's signal aborts too. It also
 * names what ended the request: the deadline is `TIMEOUT`, the caller's signal `ABORTED`, anything
 * else is translated by `translateError`.
 *
 * `end()` (the body read, drained or failed) stops the timer. `AbortSignal.timeout` would do the
 * same job, but costs more than a whole call's parsing to create (a weakly held timer per signal),
 * and each one fires at its deadline, long after the call, with a `DOMException` and its stack.
 */
class Deadline {
  /** The host of the current hop, for messages. */
  host: string;
  readonly timeoutMs: number;
  readonly signal = new DeadlineSignal();
  readonly #timer: NodeJS.Timeout;
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort: (() => void) | undefined;
  #timedOut = false;

  constructor(host: string, timeoutMs: number, caller: AbortSignal | undefined) {
    this.host = host;
    this.timeoutMs = timeoutMs;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.signal.abort();
    }, timeoutMs).unref();
    this.#caller = caller;
    if (caller) {
      this.#onCallerAbort = () => this.signal.abort();
      caller.addEventListener('abort', this.#onCallerAbort, { once: true });
    }
  }

  /** The request is over (its body read, drained or failed): the timer and the caller's listener go. */
  end(): void {
    clearTimeout(this.#timer);
    if (this.#onCallerAbort) this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }

  /** The failure an error stands for, given what (if anything) aborted the request. Ends the request. */
  failure(err: unknown): OutboundError {
    this.end();
    if (this.#timedOut) {
      return new OutboundError(
        OutboundErrorCode.TIMEOUT,
        `request to ${this.host} timed out after ${this.timeoutMs} ms`,
        { reachedServer: true, data: { host: this.host, timeoutMs: this.timeoutMs } },
      );
    }
    if (this.#caller?.aborted) return aborted(this.host, this.#caller.reason);
    return translateError(err, this.host);
  }

  /** Settles with `promise`, or rejects as soon as the signal aborts; rejects with an `OutboundError`. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(this.failure(undefined));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.failure(undefined));
      signal.once('abort', onAbort);
      promise.then(
        (value) => {
          signal.removeListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeListener('abort', onAbort);
          reject(this.failure(err));
        },
      );
    });
  }
}

function aborted(host: string, reason: unknown): OutboundError {
  return new OutboundError(OutboundErrorCode.ABORTED, `request to ${host} was aborted`, {
    reachedServer: true,
    data: { host },
    cause: reason,
  });
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

function pickSafeHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (CROSS_ORIGIN_SAFE_HEADERS.has(name.toLowerCase())) out[name] = headers[name] as string;
  }
  return out;
}

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (name.toLowerCase() !== 'content-type') out[name] = headers[name] as string;
  }
  return out;
}

class CappedResponse implements OutboundResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly url: URL;
  readonly #raw: Dispatcher.ResponseData['body'];
  readonly #cap: number;
  readonly #deadline: Deadline;

  constructor(res: Dispatcher.ResponseData, url: URL, cap: number, deadline: Deadline) {
    this.status = res.statusCode;
    this.headers = res.headers;
    this.url = url;
    this.#raw = res.body;
    this.#cap = cap;
    this.#deadline = deadline;
  }

  get body(): AsyncIterable<Buffer> {
    return this.#iterate();
  }

  #tooLarge(): OutboundError {
    const host = this.url.hostname;
    return new OutboundError(
      OutboundErrorCode.BODY_TOO_LARGE,
      `the response from ${host} is larger than ${this.#cap} bytes`,
      { reachedServer: true, data: { host, limitBytes: this.#cap } },
    );
  }

  /** A declared length over the cap fails before a byte is read. */
  #declaredLength(): number | null {
    const raw = this.headers['content-length'];
    if (typeof raw !== 'string') return null;
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  }

  async *#iterate(): AsyncGenerator<Buffer, void, undefined> {
    const raw = this.#raw;
    let complete = false;
    try {
      const declared = this.#declaredLength();
      if (declared !== null && declared > this.#cap) throw this.#tooLarge();
      let total = 0;
      try {
        for await (const chunk of raw as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > this.#cap) throw this.#tooLarge();
          yield chunk;
        }
      } catch (err) {
        throw this.#deadline.failure(err);
      }
      complete = true;
    } finally {
      this.#deadline.end();
      // Without a listener, undici reports the destroy as an uncaught 'error'.
      if (!complete) raw.on('error', noop).destroy();
    }
  }

  async text(): Promise<string> {
    const declared = this.#declaredLength();
    if (declared !== null && declared <= this.#cap) {
      // The HTTP parser enforces Content-Length, so this cannot exceed the cap: take undici's fast path.
      try {
        return await this.#raw.text();
      } catch (err) {
        throw this.#deadline.failure(err);
      } finally {
        this.#deadline.end();
      }
    }
    const chunks: Buffer[] = [];
    for await (const chunk of this.#iterate()) chunks.push(chunk);
    return chunks.length === 1
      ? (chunks[0] as Buffer).toString('utf8')
      : Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    const text = await this.text();
    try {
      return JSON.parse(text) as unknown;
    } catch (cause) {
      throw new OutboundError(
        OutboundErrorCode.INVALID_JSON,
        `the response from ${this.url.hostname} is not JSON`,
        {
          reachedServer: true,
          data: { host: this.url.hostname },
          cause,
        },
      );
    }
  }

  async dump(): Promise<void> {
    try {
      await this.#raw.dump({ limit: DUMP_LIMIT_BYTES });
    } catch {
      // Draining is best effort: a body that fails here is already gone.
    } finally {
      this.#deadline.end();
    }
  }
}
