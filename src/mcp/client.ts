/**
 * MCP client over Streamable HTTP, for discovery and for the turn path. It speaks the legacy
 * handshake revisions (asking for 2025-06-18, accepting 2025-11-25, 2025-03-26 and 2024-11-05)
 * and the stateless 2026-07-28 revision; `versions.ts` holds the rules of each and how the era is
 * chosen per connection, `docs/mcp-versions.md` how the session rule maps onto each. All I/O goes through the shared `OutboundClient`; validation of listed tools is the pure
 * `tool-mapping.ts`, and event streams are parsed by the pure `sse.ts`.
 *
 * Transport: one JSON-RPC message per POST, always with `Accept: application/json,
 * text/event-stream`, `Content-Type: application/json`, `MCP-Protocol-Version` (the negotiated or
 * stored version) and the credential; modern requests add `Mcp-Method`, `Mcp-Name` and `_meta`. An answer is plain JSON or an event stream; on a stream we take the message with our
 * id, skip notifications, empty events and other ids, answer the server's `ping`, and stop reading
 * once our answer arrives. Every answer is bounded in time (per attempt), bytes, events and line
 * length. A stream the server ends before our answer, after giving an event id, is resumed with a
 * GET carrying `Last-Event-ID` after the server's `retry:` wait (2025-11-25 "Resumability and
 * Redelivery"), at most `MAX_SSE_RESUMPTIONS` times and within the same per-attempt deadline.
 *
 * Sessions (DESIGN.md rule 6): this process keeps at most one session per connection id. A call
 * uses it when held, else goes without one; on 400 or 404 it runs `initialize` +
 * `notifications/initialized` once (shared by every call waiting at that moment), keeps the
 * `Mcp-Session-Id`, and sends the call once more: a re-send of a refused request, counted in the
 * outcome's `resends`, not in `attempts`. Discovery uses a session of its own and DELETEs it at the end.
 *
 * Retries (DESIGN.md rule 7), decided by `mayRetry` (`operations/retry.ts`): besides the session
 * re-send, at most one retry after a failure: after a timeout or a broken connection only for READ
 * or idempotent tools; after a failed connect (the request provably never reached the server) for
 * any tool, so that no side effect happens twice. Every attempt has a new JSON-RPC id, and an
 * abandoned id gets a best-effort `notifications/cancelled`.
 *
 * Failures (DESIGN.md rule 8): `callTool` never throws for an upstream problem; it returns a
 * `CallToolOutcome`. Discovery (`initialize`, `listTools`, `discover`) throws `McpClientError`, or
 * the `OutboundError` of a refusal (`URL_REFUSED`, `ADDRESS_REFUSED`, `HEADER_INVALID`,
 * `REDIRECT_REFUSED`, `BODY_TOO_LARGE`) as it is.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { TRANSPORT_HEADER_NAMES } from '../connections/headers.js';
import { AppError } from '../errors.js';
import {
  OutboundError,
  OutboundErrorCode,
  type OutboundClient,
  type OutboundResponse,
} from '../http/outbound.js';
import { failureOfOutboundCode, mayRetry } from '../operations/retry.js';
import type { JsonObject, JsonValue, Risk } from '../operations/types.js';
import { paramHeaderValues, paramHeadersOf } from './param-headers.js';
import { parseSse, SseLimitError, type SseResumeState } from './sse.js';
import {
  cacheHintsOf,
  describeInputRequests,
  errorOfBody,
  isLegacyVersion,
  isModernVersion,
  judgeModernError,
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  modernHeaders,
  modernMeta,
  pickVersion,
  REQUESTED_LEGACY_VERSION,
  resultTypeOf,
  SERVER_INFO_META_KEY,
  SUPPORTED_VERSIONS,
  type CacheHints,
  type Era,
} from './versions.js';
import {
  DEFAULT_MAX_TOOLS,
  ToolCollector,
  type McpToolDefinition,
  type SkippedTool,
} from './tool-mapping.js';
import { CALL_TIMEOUT_MS } from '../limits.js';

/** The revision we ask for in `initialize` (the contract's); see `versions.ts` for the others. */
export const MCP_PROTOCOL_VERSION = REQUESTED_LEGACY_VERSION;
/** Every revision we speak; a server answering `initialize` with another is `UNSUPPORTED_PROTOCOL_VERSION`. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = SUPPORTED_VERSIONS;

/** Per-attempt deadline of every request, unless the endpoint or the call says otherwise. */
export const DEFAULT_MCP_TIMEOUT_MS = CALL_TIMEOUT_MS;
/** `tools/list` pages followed per listing. */
export const DEFAULT_MAX_PAGES = 100;
/** Events read from one answer stream before giving up on it. */
export const DEFAULT_MAX_SSE_EVENTS = 1_000;
/** Budget of a whole discovery: initialize, every page and the DELETE. */
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 60_000; // 60 seconds
/** Deadline of best-effort messages: `notifications/cancelled`, `ping` answers, session DELETE. */
export const DEFAULT_NOTIFY_TIMEOUT_MS = 2_000; // 2 seconds
/** Bytes of an error body read for its excerpt; the rest is discarded. */
const EXCERPT_READ_BYTES = 4 * 1024; // 4 KiB
/** Characters of an error body kept in `bodyExcerpt`. */
const EXCERPT_CHARS = 500;
/** `Mcp-Session-Id` must be visible ASCII (0x21–0x7E); we also bound its length. */
const SESSION_ID = /^[\x21-\x7e]{1,4096}$/;
const ACCEPT = 'application/json, text/event-stream';
/** Server requests (such as `ping`) answered per answer stream; more are ignored. */
const MAX_SERVER_REQUESTS_ANSWERED = 8;
/**
 * Resumptions of one answer stream (2025-11-25 transports, "Resumability and Redelivery"): after a
 * server closes the stream before our answer, having given an event id, we GET the endpoint with
 * `Last-Event-ID` at most this many times, within the request's own deadline.
 */
export const MAX_SSE_RESUMPTIONS = 3;
/** Wait before resuming when the server gave no `retry:`. */
export const DEFAULT_SSE_RETRY_MS = 1_000; // 1 second
/** A server's `retry:` is honoured up to this; longer waits are cut to it (the deadline still rules). */
export const MAX_SSE_RETRY_MS = 30_000; // 30 seconds

export type McpAuth =
  { kind: 'none' } | { kind: 'bearer'; token: string } | { kind: 'header'; name: string; value: string };

/** One MCP connection, as both discovery and the turn path see it. */
export interface McpEndpoint {
  /** The connection id: the key of this process's session state. */
  id: string;
  url: string;
  auth: McpAuth;
  /** Per-attempt deadline for this connection, in ms. */
  timeoutMs?: number;
  /**
   * The protocol version stored for the connection at its last discovery: a modern one makes
   * calls stateless (`_meta` and headers, no session); a legacy one is sent in
   * `MCP-Protocol-Version` until this process holds a session of its own.
   */
  protocolVersion?: string | null;
  /**
   * Extra headers resolved before every request, after `auth`, such as an OAuth bearer that the
   * OAuth module renews. If it rejects, the call ends as `auth_required`, discovery as
   * `AUTH_REQUIRED`.
   */
  getAuthHeaders?: () => Promise<Record<string, string>>;
}

export interface McpClientOptions {
  /** Per-attempt deadline in ms, when the endpoint and the call give none. */
  timeoutMs?: number;
  /** Body cap per answer in bytes; defaults to the outbound client's. */
  maxBodyBytes?: number;
  maxSseEvents?: number;
  maxTools?: number;
  maxPages?: number;
  discoveryTimeoutMs?: number;
  notifyTimeoutMs?: number;
  clientInfo?: { name: string; version: string };
}

export interface InitializeResult {
  protocolVersion: string;
  serverInfo: JsonObject;
  capabilities: JsonObject;
  instructions: string | null;
}

/**
 * Why a listing stopped: the server said it ended (`END`), we hold `maxTools` tools (`TOOL_LIMIT`),
 * we read `maxPages` pages (`PAGE_LIMIT`), or a cursor came back (`REPEATED_CURSOR`).
 */
export type ListStopReason = 'END' | 'TOOL_LIMIT' | 'PAGE_LIMIT' | 'REPEATED_CURSOR';

export interface ListToolsResult {
  tools: McpToolDefinition[];
  skipped: SkippedTool[];
  stopReason: ListStopReason;
  pages: number;
  /** True when the listing stopped at the tool limit with more pages left unread (their tools are unknown). */
  unreadPages?: boolean;
}

export interface DiscoverResult extends ListToolsResult {
  /** The legacy handshake's result, or its modern equivalent from `server/discover`. */
  initialize: InitializeResult;
  era: Era;
  /** Cache hints of the first `tools/list` page (modern servers); `null` from legacy ones. */
  cache: CacheHints | null;
}

export interface CallToolOptions {
  risk: Risk;
  /** `annotations.idempotentHint`: a timed-out call may be repeated. */
  idempotent: boolean;
  /** Per-attempt deadline in ms, over the endpoint's. */
  timeoutMs?: number;
  /** Aborting ends the call as `cancelled` and sends `notifications/cancelled`. */
  signal?: AbortSignal;
  /**
   * W3C trace context to pass on, already validated: sent as the `traceparent`/`tracestate`
   * headers and as `_meta.traceparent`/`_meta.tracestate` (SEP-414).
   */
  trace?: { traceparent: string; tracestate?: string };
  /**
   * The tool's input schema, for its `x-mcp-header` parameters: a modern (2026-07-28) call mirrors
   * them into `Mcp-Param-*` headers (`param-headers.ts`).
   */
  inputSchema?: JsonObject;
  /**
   * Notifications the server sends on the call's stream before its answer (`notifications/progress`,
   * `notifications/message`), as they arrive; untrusted and unbounded, so the receiver bounds them.
   * When set, the call carries a `progressToken` in `_meta` so that servers report progress.
   */
  onNotification?: (notification: ServerNotification) => void;
}

/** A notification a server sent during a call; `params` is whatever it sent (untrusted). */
export interface ServerNotification {
  method: string;
  params: unknown;
  /** The progress token this call sent, to match `notifications/progress` against. */
  progressToken: string;
}

/** Stable codes of `protocol_error` outcomes and of `UPSTREAM_PROTOCOL_ERROR`'s `data.reason`. */
export type ProtocolProblem =
  /** The server answered with a JSON-RPC `error`; `rpcError` holds it. */
  | 'JSONRPC_ERROR'
  /** The body, or an event's data, is not JSON. */
  | 'INVALID_JSON'
  /** JSON, but not a JSON-RPC response, or a result of the wrong shape. */
  | 'INVALID_RESPONSE'
  /** A plain-JSON answer carries another request's id. */
  | 'RESPONSE_ID_MISMATCH'
  /** A 2xx answer that is neither JSON nor an event stream (such as HTML). */
  | 'UNEXPECTED_CONTENT_TYPE'
  /** The stream (or a bodiless 2xx) ended without the answer to our id. */
  | 'NO_RESPONSE'
  /** The stream passed its line, event or byte bound. */
  | 'SSE_LIMIT_EXCEEDED'
  /** `Mcp-Session-Id` is not visible ASCII; refused. */
  | 'SESSION_ID_INVALID'
  /** The session handshake of a call found a server speaking another protocol revision. */
  | 'UNSUPPORTED_PROTOCOL_VERSION'
  /** A modern result with a `resultType` we do not know. */
  | 'INVALID_RESULT_TYPE';

export interface RpcErrorInfo {
  code: number;
  message: string;
  data?: JsonValue;
}

interface OutcomeBase {
  /**
   * Attempts at the call: 1, or 2 after a retry (a timeout or broken connection, rule 7). A request
   * the server refused before acting on it (400/404 for want of a session) and that was sent again
   * after `initialize` is the same attempt: it counts in `resends`, not here.
   */
  attempts: number;
  /** Requests sent again after the server refused them without acting (a new session: 0 or 1). */
  resends: number;
  /** Wall time of the whole call, session handshake and retries included. */
  durationMs: number;
}

/** The result of `callTool`. Every failure is one of these kinds, never an exception. */
export type CallToolOutcome =
  | (OutcomeBase & { kind: 'success'; content: JsonValue[]; structuredContent: JsonObject | null })
  /** The tool ran and said `isError: true`. */
  | (OutcomeBase & { kind: 'tool_error'; content: JsonValue[]; structuredContent: JsonObject | null })
  | (OutcomeBase & {
      kind: 'protocol_error';
      code: ProtocolProblem;
      message: string;
      rpcError: RpcErrorInfo | null;
    })
  /** `wwwAuthenticate` is kept for a 403 `insufficient_scope` (OAuth step-up). */
  | (OutcomeBase & {
      kind: 'http_error';
      status: number;
      bodyExcerpt: string;
      wwwAuthenticate: string | null;
      message: string;
    })
  | (OutcomeBase & { kind: 'timeout'; timeoutMs: number; message: string })
  /** `code` is the `OutboundError` code: `CONNECT_FAILED`, `TRANSPORT_ERROR`, `BODY_TOO_LARGE` or a refusal. */
  | (OutcomeBase & {
      kind: 'transport_error';
      code: OutboundErrorCode;
      reachedServer: boolean;
      message: string;
    })
  /** HTTP 401, or `getAuthHeaders` failed; `wwwAuthenticate` is kept for the OAuth flow. */
  | (OutcomeBase & { kind: 'auth_required'; wwwAuthenticate: string | null; message: string })
  /** The caller's signal aborted the call. */
  | (OutcomeBase & { kind: 'cancelled'; message: string })
  /**
   * A modern server answered `resultType: "input_required"`: the tool needs input (a person's
   * answer, a completion) that this client does not provide. `needs` says what, in a few words.
   */
  | (OutcomeBase & { kind: 'input_required'; needs: string; message: string });

/** Stable codes of `McpClientError`. */
export const McpErrorCode = {
  /** The server could not be reached, or the connection broke. `cause` is the `OutboundError`. */
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  /** The server answered, but not with a usable result: `data.reason` is a `ProtocolProblem`, `data.rpcError` the JSON-RPC error if any. */
  UPSTREAM_PROTOCOL_ERROR: 'UPSTREAM_PROTOCOL_ERROR',
  /** The server answered with an HTTP status outside 2xx (not 401): `data.status`, `data.bodyExcerpt`. */
  UPSTREAM_HTTP_ERROR: 'UPSTREAM_HTTP_ERROR',
  /** `initialize` came back with a protocol revision we do not speak: `data.protocolVersion`. */
  UNSUPPORTED_PROTOCOL_VERSION: 'UNSUPPORTED_PROTOCOL_VERSION',
  /** HTTP 401, or `getAuthHeaders` failed: `data.wwwAuthenticate` (or `null`). */
  AUTH_REQUIRED: 'AUTH_REQUIRED',
  /** A request, or the whole discovery, ran out of time: `data.timeoutMs`. */
  TIMEOUT: 'TIMEOUT',
} as const;
export type McpErrorCode = (typeof McpErrorCode)[keyof typeof McpErrorCode];

export class McpClientError extends AppError {
  override readonly name = 'McpClientError';
  declare readonly code: McpErrorCode;
  constructor(code: McpErrorCode, message: string, data: Record<string, unknown> = {}, cause?: unknown) {
    super(code, message, { data, cause });
  }
}

type WithoutBase<T> = T extends unknown ? Omit<T, keyof OutcomeBase> : never;
/** An outcome before `attempts`, `resends` and `durationMs` are known. */
type OutcomeBody = WithoutBase<CallToolOutcome>;

type Reply =
  | { type: 'result'; result: unknown; response: OutboundResponse }
  | { type: 'rpc_error'; error: RpcErrorInfo }
  | { type: 'http'; status: number; bodyExcerpt: string; wwwAuthenticate: string | null }
  | { type: 'protocol'; problem: ProtocolProblem; detail: string };

interface SessionState {
  sessionId: string | undefined;
  /** The version the handshake negotiated. */
  version: string;
  /** A handshake completed for this state: `sessionId` is what the server gave (maybe none). */
  ready: boolean;
  /** The handshake in flight, shared by every call that needs it. */
  pending: Promise<string | undefined> | null;
}

interface Handshake {
  result: InitializeResult;
  sessionId: string | undefined;
}

/** How one request goes on the wire beyond the session: its version and extra headers. */
interface Wire {
  version: string;
  headers?: Record<string, string>;
}

/** Raised inside the client when `getAuthHeaders` rejects. */
class AuthHeadersFailed extends Error {}

/** Requests of one call so far: attempts, and re-sends of a refused request. */
interface Tally {
  attempts: number;
  resends: number;
}

/** Completes an outcome with its attempts, re-sends and wall time. */
function withBase(outcome: OutcomeBody, tally: Tally, started: number): CallToolOutcome {
  return {
    ...outcome,
    attempts: tally.attempts,
    resends: tally.resends,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function headerValue(res: OutboundResponse, name: string): string | null {
  const v = res.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : null;
}

function mediaType(res: OutboundResponse): string {
  const ct = headerValue(res, 'content-type');
  if (ct === null) return '';
  const semi = ct.indexOf(';');
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

/** Reads at most a few KiB of an error body, as one printable line. Never throws. */
async function readExcerpt(res: OutboundResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= EXCERPT_READ_BYTES) break;
    }
  } catch {
    // An excerpt is a courtesy: a body that fails to arrive leaves what we have.
  }
  const text = Buffer.concat(chunks, total).subarray(0, EXCERPT_READ_BYTES).toString('utf8');
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

function parseRpcError(value: unknown): RpcErrorInfo | null {
  if (!isObject(value) || typeof value.code !== 'number' || typeof value.message !== 'string') return null;
  const info: RpcErrorInfo = { code: value.code, message: value.message };
  if (value.data !== undefined) info.data = value.data as JsonValue;
  return info;
}

/** Interprets one JSON-RPC message as the answer to `id`. */
function toReply(message: unknown, id: number, response: OutboundResponse): Reply {
  if (Array.isArray(message)) {
    return {
      type: 'protocol',
      problem: 'INVALID_RESPONSE',
      detail: 'a batch answer, which 2025-06-18 does not allow',
    };
  }
  if (!isObject(message) || message.jsonrpc !== '2.0') {
    return {
      type: 'protocol',
      problem: 'INVALID_RESPONSE',
      detail: 'the answer is not a JSON-RPC 2.0 message',
    };
  }
  if (message.id !== id) {
    return {
      type: 'protocol',
      problem: 'RESPONSE_ID_MISMATCH',
      detail: `the answer is for id ${JSON.stringify(message.id) ?? 'undefined'}, expected ${id}`,
    };
  }
  if ('error' in message) {
    const error = parseRpcError(message.error);
    return error
      ? { type: 'rpc_error', error }
      : {
          type: 'protocol',
          problem: 'INVALID_RESPONSE',
          detail: 'the JSON-RPC error has no numeric code or no message',
        };
  }
  if ('result' in message) return { type: 'result', result: message.result, response };
  return { type: 'protocol', problem: 'INVALID_RESPONSE', detail: 'the answer has neither result nor error' };
}

function replyError(reply: Exclude<Reply, { type: 'result' }>, what: string): McpClientError {
  switch (reply.type) {
    case 'http':
      if (reply.status === 401) {
        return new McpClientError(
          McpErrorCode.AUTH_REQUIRED,
          `${what}: the server requires authorization (HTTP 401)`,
          {
            wwwAuthenticate: reply.wwwAuthenticate,
          },
        );
      }
      return new McpClientError(
        McpErrorCode.UPSTREAM_HTTP_ERROR,
        reply.status === 404 || reply.status === 405
          ? `${what}: the server answered HTTP ${reply.status}, so there is no MCP endpoint at this address; check the path of endpointUrl (MCP servers usually answer at …/mcp)`
          : `${what}: the server answered HTTP ${reply.status}`,
        {
          status: reply.status,
          bodyExcerpt: reply.bodyExcerpt,
          wwwAuthenticate: reply.wwwAuthenticate,
        },
      );
    case 'rpc_error':
      return new McpClientError(
        McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
        `${what}: the server returned JSON-RPC error ${reply.error.code}`,
        { reason: 'JSONRPC_ERROR', rpcError: reply.error },
      );
    case 'protocol':
      return new McpClientError(McpErrorCode.UPSTREAM_PROTOCOL_ERROR, `${what}: ${reply.detail}`, {
        reason: reply.problem,
      });
  }
}

/** Translates a transport failure for discovery: refusals stay as they are. */
function transportError(err: unknown, what: string): AppError {
  if (err instanceof AuthHeadersFailed) {
    return new McpClientError(
      McpErrorCode.AUTH_REQUIRED,
      `${what}: credentials could not be obtained`,
      { wwwAuthenticate: null },
      err.cause,
    );
  }
  if (err instanceof OutboundError) {
    if (err.code === OutboundErrorCode.TIMEOUT) {
      return new McpClientError(
        McpErrorCode.TIMEOUT,
        `${what}: ${err.message}`,
        { timeoutMs: err.data.timeoutMs ?? null },
        err,
      );
    }
    if (
      err.code === OutboundErrorCode.CONNECT_FAILED ||
      err.code === OutboundErrorCode.TRANSPORT_ERROR ||
      err.code === OutboundErrorCode.ABORTED
    ) {
      return new McpClientError(
        McpErrorCode.UPSTREAM_UNAVAILABLE,
        `${what}: ${err.message}`,
        { reachedServer: err.reachedServer },
        err,
      );
    }
    return err;
  }
  if (err instanceof AppError) return err;
  return new McpClientError(McpErrorCode.UPSTREAM_UNAVAILABLE, `${what}: unexpected failure`, {}, err);
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void =>
      reject(new OutboundError(OutboundErrorCode.ABORTED, 'the call was aborted', { reachedServer: true }));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

export class McpClient {
  readonly #outbound: OutboundClient;
  readonly #timeoutMs: number;
  readonly #maxBodyBytes: number;
  readonly #maxSseEvents: number;
  readonly #maxTools: number;
  readonly #maxPages: number;
  readonly #discoveryTimeoutMs: number;
  readonly #notifyTimeoutMs: number;
  readonly #clientInfo: { name: string; version: string };
  readonly #sessions = new Map<string, SessionState>();
  readonly #background = new Set<Promise<void>>();
  /** One counter for the process: ids are never reused within a session. */
  #nextId = 1;

  constructor(outbound: OutboundClient, options: McpClientOptions = {}) {
    const {
      timeoutMs = DEFAULT_MCP_TIMEOUT_MS,
      maxBodyBytes = outbound.maxBodyBytes,
      maxSseEvents = DEFAULT_MAX_SSE_EVENTS,
      maxTools = DEFAULT_MAX_TOOLS,
      maxPages = DEFAULT_MAX_PAGES,
      discoveryTimeoutMs = DEFAULT_DISCOVERY_TIMEOUT_MS,
      notifyTimeoutMs = DEFAULT_NOTIFY_TIMEOUT_MS,
      clientInfo = { name: 'connected-tools', version: '0.1.0' },
    } = options;
    this.#outbound = outbound;
    this.#timeoutMs = timeoutMs;
    this.#maxBodyBytes = maxBodyBytes;
    this.#maxSseEvents = maxSseEvents;
    this.#maxTools = maxTools;
    this.#maxPages = maxPages;
    this.#discoveryTimeoutMs = discoveryTimeoutMs;
    this.#notifyTimeoutMs = notifyTimeoutMs;
    this.#clientInfo = clientInfo;
  }

  // ---------------------------------------------------------------- transport

  /**
   * The version a legacy request carries: the session's negotiated one, else the one stored for
   * the connection, else the one we ask for.
   */
  #versionFor(ep: McpEndpoint, sessionId: string | undefined): string {
    const state = this.#sessions.get(ep.id);
    if (state?.ready && state.sessionId === sessionId) return state.version;
    return isLegacyVersion(ep.protocolVersion) ? ep.protocolVersion! : MCP_PROTOCOL_VERSION;
  }

  async #headers(
    ep: McpEndpoint,
    sessionId: string | undefined,
    wire?: Wire,
  ): Promise<Record<string, string>> {
    const h: Record<string, string> = {};
    const auth = ep.auth;
    if (auth.kind === 'bearer') h.authorization = `Bearer ${auth.token}`;
    else if (auth.kind === 'header') h[auth.name.toLowerCase()] = auth.value;
    if (ep.getAuthHeaders) {
      let extra: Record<string, string>;
      try {
        extra = await ep.getAuthHeaders();
      } catch (cause) {
        throw new AuthHeadersFailed('getAuthHeaders failed', { cause });
      }
      for (const name in extra) h[name.toLowerCase()] = extra[name] as string;
    }
    for (const name in h) {
      if (TRANSPORT_HEADER_NAMES.has(name)) {
        throw new OutboundError(
          OutboundErrorCode.HEADER_INVALID,
          `the credential header "${name}" is a transport header`,
          {
            reachedServer: false,
            data: { header: name },
          },
        );
      }
    }
    h.accept = ACCEPT;
    h['content-type'] = 'application/json';
    h['mcp-protocol-version'] = wire?.version ?? this.#versionFor(ep, sessionId);
    if (wire?.headers) Object.assign(h, wire.headers);
    if (sessionId !== undefined) h['mcp-session-id'] = sessionId;
    return h;
  }

  /**
   * POSTs one JSON-RPC request and reads its answer. Resolves with what the server said; rejects
   * with an `OutboundError` (or `AuthHeadersFailed`) when there was no answer.
   */
  async #send(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    body: string,
    timeoutMs: number,
    signal?: AbortSignal,
    wire?: Wire,
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply> {
    const deadline = performance.now() + timeoutMs;
    const headers = await this.#headers(ep, sessionId, wire);
    const res = await this.#outbound.request(ep.url, {
      method: 'POST',
      headers,
      body,
      timeoutMs,
      maxBodyBytes: this.#maxBodyBytes,
      signal,
    });
    if (res.status < 200 || res.status >= 300) {
      const wwwAuthenticate = headerValue(res, 'www-authenticate');
      return { type: 'http', status: res.status, bodyExcerpt: await readExcerpt(res), wwwAuthenticate };
    }
    const type = mediaType(res);
    if (type === 'application/json' || type.endsWith('+json')) {
      const text = await res.text();
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return { type: 'protocol', problem: 'INVALID_JSON', detail: 'the answer is not valid JSON' };
      }
      return toReply(message, id, res);
    }
    if (type === 'text/event-stream')
      return this.#readStream(ep, sessionId, id, res, { deadline, signal, wire }, onNotification);
    await res.dump();
    if (type === '' && (res.status === 202 || res.status === 204)) {
      return { type: 'protocol', problem: 'NO_RESPONSE', detail: `HTTP ${res.status} without an answer` };
    }
    return {
      type: 'protocol',
      problem: 'UNEXPECTED_CONTENT_TYPE',
      detail: `the answer is ${type === '' ? 'without a content type' : JSON.stringify(type.slice(0, 60))}, not JSON or an event stream`,
    };
  }

  /**
   * Reads an answer stream until our answer. A stream the server ends before it, after giving an
   * event id, is resumed: after the server's `retry:` (or `DEFAULT_SSE_RETRY_MS`), a GET with
   * `Last-Event-ID` and the same session, whose stream is read the same way, at most
   * `MAX_SSE_RESUMPTIONS` times and never past the request's deadline.
   */
  async #readStream(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    first: OutboundResponse,
    request: { deadline: number; signal: AbortSignal | undefined; wire: Wire | undefined },
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply> {
    const resume: SseResumeState = { lastEventId: undefined, reconnectMs: undefined };
    const answered = { count: 0 };
    let res = first;
    for (let resumptions = 0; ; resumptions++) {
      const reply = await this.#readEvents(ep, sessionId, id, res, resume, answered, onNotification);
      if (reply !== null) return reply;
      const ended = `the stream ended without the answer to id ${id}`;
      if (resume.lastEventId === undefined)
        return { type: 'protocol', problem: 'NO_RESPONSE', detail: ended };
      if (resumptions >= MAX_SSE_RESUMPTIONS) {
        return {
          type: 'protocol',
          problem: 'NO_RESPONSE',
          detail: `${ended}, after ${MAX_SSE_RESUMPTIONS} resumptions`,
        };
      }
      const next = await this.#resumeStream(ep, sessionId, resume, request);
      if (typeof next === 'string') {
        return { type: 'protocol', problem: 'NO_RESPONSE', detail: `${ended}, and ${next}` };
      }
      res = next;
    }
  }

  /** The GET that resumes a stream, or why it could not. Throws `OutboundError` (timeout, abort). */
  async #resumeStream(
    ep: McpEndpoint,
    sessionId: string | undefined,
    resume: SseResumeState,
    request: { deadline: number; signal: AbortSignal | undefined; wire: Wire | undefined },
  ): Promise<OutboundResponse | string> {
    const wait = Math.min(resume.reconnectMs ?? DEFAULT_SSE_RETRY_MS, MAX_SSE_RETRY_MS);
    const host = new URL(ep.url).hostname;
    if (performance.now() + wait >= request.deadline) {
      throw new OutboundError(
        OutboundErrorCode.TIMEOUT,
        `${host} closed the answer stream and asked to resume it after ${wait} ms, past the request's deadline`,
        { reachedServer: true, data: { timeoutMs: Math.round(request.deadline - performance.now()) } },
      );
    }
    try {
      await sleep(wait, undefined, { signal: request.signal });
    } catch {
      throw new OutboundError(OutboundErrorCode.ABORTED, 'the call was aborted', { reachedServer: true });
    }
    const headers = await this.#headers(ep, sessionId, request.wire && { version: request.wire.version });
    delete headers['content-type'];
    headers.accept = 'text/event-stream';
    headers['last-event-id'] = resume.lastEventId!;
    const res = await this.#outbound.request(ep.url, {
      method: 'GET',
      headers,
      timeoutMs: Math.max(1, Math.floor(request.deadline - performance.now())),
      maxBodyBytes: this.#maxBodyBytes,
      signal: request.signal,
    });
    if (res.status < 200 || res.status >= 300) {
      await res.dump();
      return `resuming it with GET was answered HTTP ${res.status}`;
    }
    if (mediaType(res) !== 'text/event-stream') {
      await res.dump();
      return 'resuming it with GET was not answered with an event stream';
    }
    return res;
  }

  /** One stream's events: our answer, or null when the stream ended without it. */
  async #readEvents(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    res: OutboundResponse,
    resume: SseResumeState,
    answered: { count: number },
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply | null> {
    try {
      const events = parseSse(
        res.body,
        {
          maxLineBytes: this.#maxBodyBytes,
          maxBytes: this.#maxBodyBytes,
          maxEvents: this.#maxSseEvents,
        },
        resume,
      );
      for await (const event of events) {
        // Priming events and keep-alives carry no data.
        if (event.data === '') continue;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch {
          return {
            type: 'protocol',
            problem: 'INVALID_JSON',
            detail: 'an event of the stream is not valid JSON',
          };
        }
        if (!isObject(message)) {
          return {
            type: 'protocol',
            problem: 'INVALID_RESPONSE',
            detail: 'an event of the stream is not a JSON-RPC message',
          };
        }
        if (typeof message.method === 'string') {
          // A request from the server: answer it so that it does not wait on us (a few per
          // stream, so a hostile stream cannot make us flood it). Notifications are skipped.
          if (
            message.id !== undefined &&
            message.id !== null &&
            answered.count < MAX_SERVER_REQUESTS_ANSWERED
          ) {
            answered.count++;
            this.#answerServerRequest(ep, sessionId, message);
          } else if (message.id === undefined && onNotification) {
            try {
              onNotification(message.method, message.params);
            } catch {
              // The receiver's problem must not end the call.
            }
          }
          continue;
        }
        if (message.id === id) return toReply(message, id, res);
        // An answer to another request of ours: not this one.
      }
      return null;
    } catch (err) {
      if (err instanceof SseLimitError) {
        return { type: 'protocol', problem: 'SSE_LIMIT_EXCEEDED', detail: err.message };
      }
      throw err;
    }
  }

  #answerServerRequest(
    ep: McpEndpoint,
    sessionId: string | undefined,
    request: Record<string, unknown>,
  ): void {
    const answer =
      request.method === 'ping'
        ? { jsonrpc: '2.0', id: request.id, result: {} }
        : { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } };
    this.#post(ep, sessionId, JSON.stringify(answer));
  }

  /** Best effort, in the background: notifications and answers to server requests. */
  #post(ep: McpEndpoint, sessionId: string | undefined, body: string): void {
    this.#track(async () => {
      const headers = await this.#headers(ep, sessionId);
      const res = await this.#outbound.request(ep.url, {
        method: 'POST',
        headers,
        body,
        timeoutMs: this.#notifyTimeoutMs,
        maxBodyBytes: this.#maxBodyBytes,
      });
      await res.dump();
    });
  }

  #cancel(ep: McpEndpoint, sessionId: string | undefined, requestId: number, reason: string): void {
    this.#post(
      ep,
      sessionId,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } }),
    );
  }

  #track(task: () => Promise<void>): void {
    const p = task().catch(() => undefined);
    this.#background.add(p);
    void p.finally(() => this.#background.delete(p));
  }

  /** Resolves once every best-effort message sent so far has settled. For tests and shutdown. */
  async whenIdle(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }

  // ---------------------------------------------------------------- lifecycle

  #timeout(ep: McpEndpoint, override?: number): number {
    return override ?? ep.timeoutMs ?? this.#timeoutMs;
  }

  /** `initialize` + `notifications/initialized`. Throws like discovery does. */
  async #handshake(ep: McpEndpoint, timeoutMs: number): Promise<Handshake> {
    const id = this.#nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: this.#clientInfo },
    });
    let reply: Reply;
    try {
      reply = await this.#send(ep, undefined, id, body, timeoutMs);
    } catch (err) {
      throw transportError(err, 'initialize');
    }
    if (reply.type !== 'result') throw replyError(reply, 'initialize');
    const result = reply.result;
    if (!isObject(result) || typeof result.protocolVersion !== 'string') {
      throw new McpClientError(
        McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
        'initialize: the result has no protocolVersion',
        {
          reason: 'INVALID_RESPONSE',
        },
      );
    }
    const sessionHeader = reply.response.headers['mcp-session-id'];
    let sessionId: string | undefined;
    if (sessionHeader !== undefined) {
      if (typeof sessionHeader !== 'string' || !SESSION_ID.test(sessionHeader)) {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          'initialize: the Mcp-Session-Id is not visible ASCII (0x21-0x7E); refused',
          { reason: 'SESSION_ID_INVALID' },
        );
      }
      sessionId = sessionHeader;
    }
    const version = result.protocolVersion;
    if (!LEGACY_VERSIONS.includes(version)) {
      if (sessionId !== undefined) this.#delete(ep, sessionId, REQUESTED_LEGACY_VERSION);
      throw new McpClientError(
        McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
        `initialize: we asked for protocol ${MCP_PROTOCOL_VERSION} and the server answered ${JSON.stringify(version.slice(0, 40))}, which this client does not speak (it speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        { protocolVersion: version.slice(0, 40), requested: MCP_PROTOCOL_VERSION },
      );
    }
    let initialized: Exclude<Reply, { type: 'result' }> | null;
    try {
      initialized = await this.#notify(ep, sessionId, 'notifications/initialized', timeoutMs, version);
    } catch (err) {
      if (sessionId !== undefined) this.#delete(ep, sessionId, version);
      throw err;
    }
    if (initialized !== null) {
      if (sessionId !== undefined) this.#delete(ep, sessionId, version);
      throw replyError(initialized, 'notifications/initialized');
    }
    return {
      sessionId,
      result: {
        protocolVersion: result.protocolVersion,
        serverInfo: isObject(result.serverInfo) ? (result.serverInfo as JsonObject) : {},
        capabilities: isObject(result.capabilities) ? (result.capabilities as JsonObject) : {},
        instructions: typeof result.instructions === 'string' ? result.instructions : null,
      },
    };
  }

  /** Sends a notification and waits for its 202 (or a 200 with a body). Null when accepted. */
  async #notify(
    ep: McpEndpoint,
    sessionId: string | undefined,
    method: string,
    timeoutMs: number,
    version: string,
  ): Promise<Exclude<Reply, { type: 'result' }> | null> {
    try {
      const headers = await this.#headers(ep, sessionId, { version });
      const res = await this.#outbound.request(ep.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', method }),
        timeoutMs,
        maxBodyBytes: this.#maxBodyBytes,
      });
      if (res.status >= 200 && res.status < 300) {
        await res.dump();
        return null;
      }
      return {
        type: 'http',
        status: res.status,
        bodyExcerpt: await readExcerpt(res),
        wwwAuthenticate: headerValue(res, 'www-authenticate'),
      };
    } catch (err) {
      throw transportError(err, method);
    }
  }

  /** Ends a session on the server, best effort, in the background. A 405 is fine. */
  #delete(ep: McpEndpoint, sessionId: string, version?: string): void {
    this.#track(() => this.#deleteNow(ep, sessionId, version));
  }

  async #deleteNow(ep: McpEndpoint, sessionId: string, version?: string): Promise<void> {
    try {
      const headers = await this.#headers(ep, sessionId, version === undefined ? undefined : { version });
      delete headers['content-type'];
      const res = await this.#outbound.request(ep.url, {
        method: 'DELETE',
        headers,
        timeoutMs: this.#notifyTimeoutMs,
        maxBodyBytes: this.#maxBodyBytes,
      });
      await res.dump();
    } catch {
      // Best effort: an undeleted session expires on the server.
    }
  }

  /**
   * Returns a usable session id for the connection (or `undefined` for a server without
   * sessions), running at most one handshake at a time per connection. `stale` is the id the
   * caller just saw refused: if another call already replaced it, that replacement is used.
   */
  #ensureSession(ep: McpEndpoint, stale: string | undefined, timeoutMs: number): Promise<string | undefined> {
    let state = this.#sessions.get(ep.id);
    if (state?.pending) return state.pending;
    if (state?.ready && state.sessionId !== stale) return Promise.resolve(state.sessionId);
    if (!state) {
      state = { sessionId: undefined, version: MCP_PROTOCOL_VERSION, ready: false, pending: null };
      this.#sessions.set(ep.id, state);
    }
    const s = state;
    s.ready = false;
    s.sessionId = undefined;
    s.pending = this.#handshake(ep, timeoutMs).then(
      (hs) => {
        s.sessionId = hs.sessionId;
        s.version = hs.result.protocolVersion;
        s.ready = true;
        s.pending = null;
        return hs.sessionId;
      },
      (err: unknown) => {
        s.pending = null;
        throw err;
      },
    );
    return s.pending;
  }

  /** Runs `initialize` and keeps the session for this connection's later calls. */
  async initialize(ep: McpEndpoint): Promise<InitializeResult> {
    const hs = await this.#handshake(ep, this.#timeout(ep));
    const previous = this.#sessions.get(ep.id);
    if (previous?.ready && previous.sessionId !== undefined && previous.sessionId !== hs.sessionId) {
      this.#delete(ep, previous.sessionId, previous.version);
    }
    this.#sessions.set(ep.id, {
      sessionId: hs.sessionId,
      version: hs.result.protocolVersion,
      ready: true,
      pending: null,
    });
    return hs.result;
  }

  /** Drops this process's session for a connection, without telling the server. */
  forgetSession(connectionId: string): void {
    this.#sessions.delete(connectionId);
  }

  /** DELETEs this process's session for a connection (best effort) and forgets it. */
  async endSession(ep: McpEndpoint): Promise<void> {
    const state = this.#sessions.get(ep.id);
    this.#sessions.delete(ep.id);
    if (state?.ready && state.sessionId !== undefined)
      await this.#deleteNow(ep, state.sessionId, state.version);
  }

  // ---------------------------------------------------------------- discovery

  /**
   * Every page of `tools/list`. With `modern` set, each request carries the modern `_meta` and
   * headers (no session), and the first page's cache hints are returned.
   */
  async #listAll(
    ep: McpEndpoint,
    sessionId: string | undefined,
    deadline: number,
    version?: string,
    modern = false,
  ): Promise<ListToolsResult & { cache: CacheHints | null }> {
    const collector = new ToolCollector(this.#maxTools);
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let cache: CacheHints | null = null;
    const wire: Wire | undefined = modern
      ? { version: version!, headers: modernHeaders(version!, 'tools/list') }
      : version === undefined
        ? undefined
        : { version };
    for (let pages = 1; ; pages++) {
      const remaining = Math.floor(deadline - performance.now());
      if (remaining <= 0) {
        throw new McpClientError(
          McpErrorCode.TIMEOUT,
          `tools/list: discovery ran out of time after ${pages - 1} pages`,
          {
            timeoutMs: this.#discoveryTimeoutMs,
          },
        );
      }
      const id = this.#nextId++;
      const params: Record<string, unknown> = cursor === undefined ? {} : { cursor };
      if (modern) params._meta = modernMeta(version!, this.#clientInfo);
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params });
      let reply: Reply;
      try {
        reply = await this.#send(
          ep,
          sessionId,
          id,
          body,
          Math.min(this.#timeout(ep), remaining),
          undefined,
          wire,
        );
      } catch (err) {
        throw transportError(err, 'tools/list');
      }
      if (reply.type !== 'result') throw replyError(reply, 'tools/list');
      const result = reply.result;
      if (!isObject(result) || !Array.isArray(result.tools)) {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          'tools/list: the result has no tools array',
          {
            reason: 'INVALID_RESPONSE',
          },
        );
      }
      const next = result.nextCursor;
      if (next !== undefined && next !== null && typeof next !== 'string') {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          'tools/list: nextCursor is not a string',
          {
            reason: 'INVALID_RESPONSE',
          },
        );
      }
      if (modern && resultTypeOf(result) !== 'complete') {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          'tools/list: the result is not complete (resultType must be "complete")',
          { reason: 'INVALID_RESULT_TYPE' },
        );
      }
      if (modern && pages === 1) cache = cacheHintsOf(result);
      collector.add(result.tools);
      const done = (stopReason: ListStopReason): ListToolsResult & { cache: CacheHints | null } => ({
        tools: collector.tools,
        skipped: collector.skipped,
        stopReason,
        pages,
        cache,
      });
      // Absent or null ends the listing; an empty string is a cursor like any other.
      if (next === undefined || next === null)
        return done(
          collector.full && collector.skipped.some((s) => s.reason === 'TOOL_LIMIT') ? 'TOOL_LIMIT' : 'END',
        );
      if (collector.full) return { ...done('TOOL_LIMIT'), unreadPages: true };
      if (cursors.has(next)) return done('REPEATED_CURSOR');
      if (pages >= this.#maxPages) return done('PAGE_LIMIT');
      cursors.add(next);
      cursor = next;
    }
  }

  /**
   * Lists every tool with this process's session for the connection, running `initialize` first
   * when there is none. Throws `McpClientError` or a refusal's `OutboundError`.
   */
  async listTools(ep: McpEndpoint): Promise<ListToolsResult> {
    const deadline = performance.now() + this.#discoveryTimeoutMs;
    const state = this.#sessions.get(ep.id);
    let sessionId =
      state?.ready && !state.pending
        ? state.sessionId
        : await this.#ensureSession(ep, undefined, this.#timeout(ep));
    try {
      return await this.#listAll(ep, sessionId, deadline);
    } catch (err) {
      const status = err instanceof McpClientError ? err.data.status : undefined;
      if (status !== 400 && status !== 404) throw err;
      // The held session is gone: one new handshake, one more try.
      sessionId = await this.#ensureSession(ep, sessionId, this.#timeout(ep));
      return this.#listAll(ep, sessionId, deadline);
    }
  }

  /**
   * A whole discovery. The era is chosen the way 2026-07-28 says (streamable-http.mdx,
   * "Backward Compatibility"): a modern `server/discover` first, without a session; a result or a
   * recognised modern error means a modern server, read with stateless `tools/list`; anything else
   * means a legacy server, read with a session of its own (`initialize`, every page, then DELETE,
   * a 405 being fine) that never touches the sessions calls use. Throws `McpClientError` or a
   * refusal's `OutboundError`.
   */
  async discover(ep: McpEndpoint): Promise<DiscoverResult> {
    const deadline = performance.now() + this.#discoveryTimeoutMs;
    const timeoutMs = Math.min(this.#timeout(ep), this.#discoveryTimeoutMs);
    const modern = await this.#probeModern(ep, timeoutMs);
    if (modern !== null) {
      const listing = await this.#listAll(ep, undefined, deadline, modern.protocolVersion, true);
      return { initialize: modern, era: 'modern', ...listing };
    }
    const hs = await this.#handshake(ep, timeoutMs);
    try {
      const listing = await this.#listAll(ep, hs.sessionId, deadline, hs.result.protocolVersion);
      return { initialize: hs.result, era: 'legacy', ...listing, cache: null };
    } finally {
      if (hs.sessionId !== undefined) await this.#deleteNow(ep, hs.sessionId, hs.result.protocolVersion);
    }
  }

  /**
   * `server/discover` with our preferred modern version (and once more with another modern
   * version the server lists). Resolves with the server's identity when it is modern, `null`
   * when it is legacy. Throws for a 401, a transport failure, or a modern server we cannot speak to.
   */
  async #probeModern(ep: McpEndpoint, timeoutMs: number): Promise<InitializeResult | null> {
    let version = MODERN_VERSIONS[0]!;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const id = this.#nextId++;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'server/discover',
        params: { _meta: modernMeta(version, this.#clientInfo) },
      });
      let reply: Reply;
      try {
        reply = await this.#send(ep, undefined, id, body, timeoutMs, undefined, {
          version,
          headers: modernHeaders(version, 'server/discover'),
        });
      } catch (err) {
        throw transportError(err, 'server/discover');
      }
      if (reply.type === 'result') {
        const result = reply.result;
        if (!isObject(result) || resultTypeOf(result) !== 'complete') return null;
        const supported = Array.isArray(result.supportedVersions)
          ? result.supportedVersions.filter((v): v is string => typeof v === 'string')
          : [];
        // A server that lists no modern version we speak is read the legacy way.
        const chosen = supported.includes(version) ? version : pickVersion(supported);
        if (chosen === null || !isModernVersion(chosen)) return null;
        if (chosen !== version && attempt === 1) {
          version = chosen;
          continue;
        }
        const meta = isObject(result._meta) ? result._meta : {};
        const serverInfo = isObject(meta[SERVER_INFO_META_KEY])
          ? meta[SERVER_INFO_META_KEY]
          : isObject(result.serverInfo)
            ? result.serverInfo
            : {};
        return {
          protocolVersion: chosen,
          serverInfo: serverInfo as JsonObject,
          capabilities: isObject(result.capabilities) ? (result.capabilities as JsonObject) : {},
          instructions: typeof result.instructions === 'string' ? result.instructions : null,
        };
      }
      if (reply.type === 'http' && reply.status === 401) throw replyError(reply, 'server/discover');
      const error =
        reply.type === 'rpc_error'
          ? reply.error
          : reply.type === 'http'
            ? errorOfBody(reply.bodyExcerpt)
            : null;
      const verdict = judgeModernError(error);
      if (verdict.kind === 'legacy') return null;
      if (verdict.kind === 'modern_error') {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          `server/discover: the server refused the request (${verdict.code}: ${verdict.message})`,
          { reason: 'JSONRPC_ERROR', rpcError: { code: verdict.code, message: verdict.message } },
        );
      }
      const chosen = pickVersion(verdict.supported);
      if (chosen !== null && isModernVersion(chosen) && chosen !== version && attempt === 1) {
        version = chosen;
        continue;
      }
      if (chosen !== null && isLegacyVersion(chosen)) return null;
      throw new McpClientError(
        McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
        `server/discover: we asked for protocol ${version} and the server supports ${verdict.supported.map((v) => JSON.stringify(v.slice(0, 40))).join(', ') || 'no version it names'}; this client speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
        { protocolVersion: verdict.supported[0]?.slice(0, 40) ?? null, requested: version },
      );
    }
    return null;
  }

  // ---------------------------------------------------------------- turn path

  /**
   * Calls one tool. Never throws for an upstream problem: every failure is an outcome. See the
   * module comment for the session and retry rules.
   */
  async callTool(
    ep: McpEndpoint,
    name: string,
    args: JsonObject,
    options: CallToolOptions,
  ): Promise<CallToolOutcome> {
    const started = performance.now();
    const timeoutMs = this.#timeout(ep, options.timeoutMs);
    const { signal } = options;
    const retryBase = { risk: options.risk, idempotent: options.idempotent };
    const traceMeta: Record<string, string> = {};
    const traceHeaders: Record<string, string> = {};
    if (options.trace) {
      traceMeta.traceparent = traceHeaders.traceparent = options.trace.traceparent;
      if (options.trace.tracestate !== undefined)
        traceMeta.tracestate = traceHeaders.tracestate = options.trace.tracestate;
    }
    const hasTrace = options.trace !== undefined;
    // A receiver of notifications gets a progress token in `_meta`, so servers report progress.
    const { onNotification } = options;
    const progressToken = `ct-${this.#nextId}-${Math.floor(performance.now())}`;
    if (onNotification) traceMeta.progressToken = progressToken;
    const notify = onNotification
      ? (method: string, p: unknown) => onNotification({ method, params: p, progressToken })
      : undefined;
    const params = JSON.stringify(
      hasTrace || onNotification ? { name, arguments: args, _meta: traceMeta } : { name, arguments: args },
    );
    // A connection discovered as modern is called statelessly, until an answer shows a legacy server.
    let modern = isModernVersion(ep.protocolVersion);
    const modernVersion = ep.protocolVersion ?? MODERN_VERSIONS[0]!;
    const modernParams = modern
      ? JSON.stringify({
          name,
          arguments: args,
          _meta: modernMeta(modernVersion, this.#clientInfo, traceMeta),
        })
      : '';
    const mirrored = modern && options.inputSchema ? paramHeadersOf(options.inputSchema) : null;
    const paramHeaders = mirrored?.ok ? paramHeaderValues(mirrored.headers, args) : {};
    const tally: Tally = { attempts: 0, resends: 0 };
    /** The server refused the request before acting: may it be sent once more (not an attempt)? */
    const mayResend = (): boolean =>
      mayRetry({
        ...retryBase,
        attempts: tally.attempts,
        resends: tally.resends,
        failure: 'refused_before_acting',
        reachedServer: true,
      }).retry;
    const state = this.#sessions.get(ep.id);
    let sessionId = state?.ready && !modern ? state.sessionId : undefined;

    for (;;) {
      tally.attempts++;
      const id = this.#nextId++;
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${modern ? modernParams : params}}`;
      const wire: Wire | undefined = modern
        ? {
            version: modernVersion,
            headers: {
              ...traceHeaders,
              ...paramHeaders,
              ...modernHeaders(modernVersion, 'tools/call', name),
            },
          }
        : hasTrace
          ? { version: this.#versionFor(ep, sessionId), headers: traceHeaders }
          : undefined;
      let reply: Reply;
      try {
        reply = await this.#send(ep, sessionId, id, body, timeoutMs, signal, wire, notify);
      } catch (err) {
        if (err instanceof AuthHeadersFailed) {
          return withBase(
            {
              kind: 'auth_required',
              wwwAuthenticate: null,
              message: 'credentials for the tool server could not be obtained',
            },
            tally,
            started,
          );
        }
        const failure =
          err instanceof OutboundError
            ? err
            : new OutboundError(OutboundErrorCode.TRANSPORT_ERROR, 'the call failed unexpectedly', {
                reachedServer: true,
                cause: err,
              });
        // On a modern connection the closed stream is the cancellation (no notification exists).
        if (failure.reachedServer && !modern)
          this.#cancel(
            ep,
            sessionId,
            id,
            failure.code === OutboundErrorCode.ABORTED ? 'cancelled' : 'abandoned',
          );
        const again = mayRetry({
          ...retryBase,
          attempts: tally.attempts,
          resends: tally.resends,
          failure: failureOfOutboundCode(failure.code),
          reachedServer: failure.reachedServer,
        });
        if (again.retry) continue;
        if (failure.code === OutboundErrorCode.ABORTED)
          return withBase({ kind: 'cancelled', message: 'the call was cancelled' }, tally, started);
        if (failure.code === OutboundErrorCode.TIMEOUT) {
          return withBase(
            {
              kind: 'timeout',
              timeoutMs,
              message: `the tool server did not answer within ${timeoutMs} ms`,
            },
            tally,
            started,
          );
        }
        // No retry: the same outcome as any other transport failure.
        return withBase(
          {
            kind: 'transport_error',
            code: failure.code,
            reachedServer: failure.reachedServer,
            message: failure.message,
          },
          tally,
          started,
        );
      }

      // A modern request refused in a way no modern server refuses: the server is legacy (or was
      // replaced by one). It gets the legacy path: initialize, then the call once more.
      const legacyAnswer =
        modern &&
        mayResend() &&
        ((reply.type === 'http' &&
          reply.status !== 401 &&
          reply.status >= 400 &&
          reply.status < 500 &&
          this.#answersLegacy(errorOfBody(reply.bodyExcerpt))) ||
          (reply.type === 'rpc_error' && this.#answersLegacy(reply.error)));
      if (legacyAnswer) {
        modern = false;
        try {
          sessionId = await raceSignal(this.#ensureSession(ep, undefined, timeoutMs), signal);
        } catch (err) {
          return withBase(this.#handshakeFailure(err), tally, started);
        }
        // The refused request did nothing: sending it again is the same attempt.
        tally.attempts--;
        tally.resends++;
        continue;
      }
      switch (reply.type) {
        case 'result':
          return withBase(
            modern ? this.#modernToolResult(reply.result) : this.#toolResult(reply.result),
            tally,
            started,
          );
        case 'rpc_error':
          return withBase(
            {
              kind: 'protocol_error',
              code: 'JSONRPC_ERROR',
              rpcError: reply.error,
              message: `the tool server returned JSON-RPC error ${reply.error.code}`,
            },
            tally,
            started,
          );
        case 'protocol':
          return withBase(
            { kind: 'protocol_error', code: reply.problem, rpcError: null, message: reply.detail },
            tally,
            started,
          );
        case 'http': {
          if ((reply.status === 400 || reply.status === 404) && mayResend()) {
            // The server wants a session, or ours ended: one handshake (shared), then one re-send.
            try {
              sessionId = await raceSignal(this.#ensureSession(ep, sessionId, timeoutMs), signal);
            } catch (err) {
              return withBase(this.#handshakeFailure(err), tally, started);
            }
            // The refused request did nothing: sending it again is the same attempt.
            tally.attempts--;
            tally.resends++;
            continue;
          }
          if (reply.status === 401) {
            return withBase(
              {
                kind: 'auth_required',
                wwwAuthenticate: reply.wwwAuthenticate,
                message: 'the tool server requires authorization (HTTP 401)',
              },
              tally,
              started,
            );
          }
          return withBase(
            {
              kind: 'http_error',
              status: reply.status,
              bodyExcerpt: reply.bodyExcerpt,
              wwwAuthenticate: reply.wwwAuthenticate,
              message: `the tool server answered HTTP ${reply.status}`,
            },
            tally,
            started,
          );
        }
      }
    }
  }

  /** Whether a modern request's error shows a legacy server (or one that speaks only legacy versions). */
  #answersLegacy(error: unknown): boolean {
    const verdict = judgeModernError(error);
    if (verdict.kind === 'legacy') return true;
    return verdict.kind === 'unsupported_version' && isLegacyVersion(pickVersion(verdict.supported));
  }

  /** A modern `tools/call` result: `resultType` first (absent means complete). */
  #modernToolResult(result: unknown): OutcomeBody {
    if (isObject(result)) {
      const type = resultTypeOf(result);
      if (type === 'input_required') {
        const needs = describeInputRequests(result);
        return {
          kind: 'input_required',
          needs,
          message: `the tool needs ${needs} before it can finish, which this platform cannot provide`,
        };
      }
      if (type !== 'complete') {
        return {
          kind: 'protocol_error',
          code: 'INVALID_RESULT_TYPE',
          rpcError: null,
          message: `the tools/call result has an unknown resultType ${JSON.stringify(type.invalid)}`,
        };
      }
    }
    return this.#toolResult(result);
  }

  #toolResult(result: unknown): OutcomeBody {
    if (!isObject(result) || (result.content !== undefined && !Array.isArray(result.content))) {
      return {
        kind: 'protocol_error',
        code: 'INVALID_RESPONSE',
        rpcError: null,
        message: 'the tools/call result is not an object with a content array',
      };
    }
    return {
      kind: result.isError === true ? 'tool_error' : 'success',
      content: (result.content ?? []) as JsonValue[],
      structuredContent: isObject(result.structuredContent) ? (result.structuredContent as JsonObject) : null,
    };
  }

  /** Maps a failed session handshake inside a call to an outcome (without the base fields). */
  #handshakeFailure(err: unknown): OutcomeBody {
    if (err instanceof OutboundError) {
      if (err.code === OutboundErrorCode.ABORTED)
        return { kind: 'cancelled', message: 'the call was cancelled' };
      return {
        kind: 'transport_error',
        code: err.code,
        reachedServer: err.reachedServer,
        message: `initialize: ${err.message}`,
      };
    }
    if (err instanceof McpClientError) {
      const d = err.data;
      switch (err.code) {
        case McpErrorCode.AUTH_REQUIRED:
          return {
            kind: 'auth_required',
            wwwAuthenticate: (d.wwwAuthenticate as string | null) ?? null,
            message: err.message,
          };
        case McpErrorCode.UPSTREAM_HTTP_ERROR:
          return {
            kind: 'http_error',
            status: d.status as number,
            bodyExcerpt: d.bodyExcerpt as string,
            wwwAuthenticate: (d.wwwAuthenticate as string | null | undefined) ?? null,
            message: err.message,
          };
        case McpErrorCode.TIMEOUT:
          return { kind: 'timeout', timeoutMs: d.timeoutMs as number, message: err.message };
        case McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
          return {
            kind: 'protocol_error',
            code: 'UNSUPPORTED_PROTOCOL_VERSION',
            rpcError: null,
            message: err.message,
          };
        case McpErrorCode.UPSTREAM_PROTOCOL_ERROR:
          return {
            kind: 'protocol_error',
            code: d.reason as ProtocolProblem,
            rpcError: (d.rpcError as RpcErrorInfo | undefined) ?? null,
            message: err.message,
          };
        case McpErrorCode.UPSTREAM_UNAVAILABLE: {
          const cause = err.cause instanceof OutboundError ? err.cause : null;
          return {
            kind: 'transport_error',
            code: cause?.code ?? OutboundErrorCode.TRANSPORT_ERROR,
            reachedServer: cause?.reachedServer ?? true,
            message: err.message,
          };
        }
      }
    }
    return {
      kind: 'transport_error',
      code: OutboundErrorCode.TRANSPORT_ERROR,
      reachedServer: true,
      message: 'initialize failed unexpectedly',
    };
  }
}
