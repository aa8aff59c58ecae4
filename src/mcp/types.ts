/**
 * The MCP client's vocabulary: endpoints, options, results and outcomes, the error it throws, and
 * the defaults every part shares. No I/O.
 */
import { AppError } from '../errors.js';
import type { Clock } from '../clock.js';
import type { OutboundErrorCode } from '../http/outbound.js';
import { CALL_TIMEOUT_MS } from '../limits.js';
import type { JsonObject, JsonValue, Risk } from '../operations/types.js';
import type { McpToolDefinition, SkippedTool } from './tool-mapping.js';
import { REQUESTED_LEGACY_VERSION, SUPPORTED_VERSIONS, type CacheHints, type Era } from './versions.js';

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
  /** The clock deadlines, pauses and durations run on (src/clock.ts). Defaults to `systemClock`. */
  clock?: Clock;
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

export interface OutcomeBase {
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
  | (OutcomeBase & {
      kind: 'input_required';
      needs: string;
      message: string;
      /**
       * A legacy server asked on the call's stream (elicitation, sampling, roots), was declined,
       * and then answered: what it said then, as text. Absent for a modern `input_required`.
       */
      said?: string;
    });

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

export type WithoutBase<T> = T extends unknown ? Omit<T, keyof OutcomeBase> : never;
/** An outcome before `attempts`, `resends` and `durationMs` are known. */
export type OutcomeBody = WithoutBase<CallToolOutcome>;

/** The client's options with every default filled in. */
export interface McpSettings {
  timeoutMs: number;
  maxBodyBytes: number;
  maxSseEvents: number;
  maxTools: number;
  maxPages: number;
  discoveryTimeoutMs: number;
  notifyTimeoutMs: number;
  clientInfo: { name: string; version: string };
  clock: Clock;
}

/** The per-attempt deadline of a request: the call's, else the endpoint's, else the client's. */
export function timeoutOf(settings: McpSettings, ep: McpEndpoint, override?: number): number {
  return override ?? ep.timeoutMs ?? settings.timeoutMs;
}
