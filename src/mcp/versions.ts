/**
 * MCP protocol revisions: which we speak, how each era is recognised, and the wire pieces of the
 * modern (stateless) era. Pure: no I/O, no clock.
 *
 * Two eras (2026-07-28 basic/versioning.mdx):
 * - **Legacy** (`2025-11-25` and earlier): an `initialize` handshake negotiates the version, the
 *   server may give an `Mcp-Session-Id`, and later requests carry `MCP-Protocol-Version`.
 *   We ask for `2025-06-18` (the platform's contract) and accept any legacy revision in
 *   `LEGACY_VERSIONS`: their tool and result shapes are supersets of one another, and the fields
 *   we read (`name`, `title`, `description`, `inputSchema`, `annotations`, and `outputSchema`
 *   where a revision has it, kept for the review diff; `content`, `structuredContent`, `isError`)
 *   mean the same in each; other later additions (`icons`, `execution`, `_meta`) are ignored.
 * - **Modern** (`2026-07-28`): no handshake and no session. Every request carries
 *   `_meta["io.modelcontextprotocol/protocolVersion"]` and `…/clientCapabilities`, and on HTTP the
 *   headers `MCP-Protocol-Version`, `Mcp-Method` and (for `tools/call`) `Mcp-Name`. Results carry
 *   `resultType`.
 *
 * Choosing per connection (streamable-http.mdx, "Backward Compatibility"): send a modern request
 * first; a success or a recognised modern JSON-RPC error means a modern server, anything else on a
 * 4xx (an empty body, a legacy `-32000`, `-32601`) means a legacy server, which gets `initialize`.
 */
import { isObject } from '../operations/types.js';

/** What we ask for in `initialize` (the platform's contract). */
export const REQUESTED_LEGACY_VERSION = '2025-06-18';
/** Handshake revisions we accept from a server, newest first. */
export const LEGACY_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
/** Stateless revisions we speak, preferred first. */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];
/** Every revision we speak. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];

export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

/** Modern JSON-RPC error codes (2026-07-28 basic/index.mdx, "Error Codes"). */
export const ModernErrorCode = {
  HEADER_MISMATCH: -32020,
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

export type Era = 'modern' | 'legacy';

export function isModernVersion(version: string | null | undefined): boolean {
  return version !== null && version !== undefined && MODERN_VERSIONS.includes(version);
}

export function isLegacyVersion(version: string | null | undefined): boolean {
  return version !== null && version !== undefined && LEGACY_VERSIONS.includes(version);
}

/** The era a stored version says the connection speaks; `null` when nothing is known yet. */
export function eraOf(version: string | null | undefined): Era | null {
  if (isModernVersion(version)) return 'modern';
  if (isLegacyVersion(version)) return 'legacy';
  return null;
}

/** The `_meta` every modern request carries, merged over the caller's own `_meta` entries. */
export function modernMeta(
  version: string,
  clientInfo: { name: string; version: string },
  extra: Record<string, string> = {},
): Record<string, unknown> {
  return {
    ...extra,
    [PROTOCOL_VERSION_META_KEY]: version,
    [CLIENT_INFO_META_KEY]: clientInfo,
    // We declare no client capabilities: no sampling, elicitation or roots to offer a server.
    [CLIENT_CAPABILITIES_META_KEY]: {},
  };
}

/** A header value as is when it is plain visible ASCII, else the `=?base64?…?=` sentinel form. */
export function encodeHeaderValue(value: string): string {
  const plain =
    /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) &&
    !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** `Mcp-Method` and, for `tools/call`, `Mcp-Name` (streamable-http.mdx, "Standard Request Headers"). */
export function modernHeaders(version: string, method: string, name?: string): Record<string, string> {
  const h: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': method };
  if (name !== undefined) h['mcp-name'] = encodeHeaderValue(name);
  return h;
}

/** What a failed modern request says about the server. */
export type ModernVerdict =
  /** A modern server that does not speak our version: `supported` lists its versions. */
  | { kind: 'unsupported_version'; supported: string[] }
  /** A modern server refused the request for another protocol reason (header mismatch, capability). */
  | { kind: 'modern_error'; code: number; message: string }
  /** Not a recognised modern answer: the server is legacy (fall back to `initialize`). */
  | { kind: 'legacy' };

/**
 * Reads the JSON-RPC error of a failed modern request (its HTTP body, or the error of a 200
 * answer). Only the three modern codes identify a modern server; everything else is legacy.
 */
export function judgeModernError(error: unknown): ModernVerdict {
  if (!isObject(error) || typeof error.code !== 'number') return { kind: 'legacy' };
  const message = typeof error.message === 'string' ? error.message.slice(0, 200) : '';
  if (error.code === ModernErrorCode.UNSUPPORTED_PROTOCOL_VERSION) {
    const data = isObject(error.data) ? error.data : {};
    const supported = Array.isArray(data.supported)
      ? data.supported.filter((v): v is string => typeof v === 'string').slice(0, 32)
      : [];
    return { kind: 'unsupported_version', supported };
  }
  if (
    error.code === ModernErrorCode.HEADER_MISMATCH ||
    error.code === ModernErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
  )
    return { kind: 'modern_error', code: error.code, message };
  return { kind: 'legacy' };
}

/** Parses an error body excerpt (JSON text) into its JSON-RPC `error`, or `null`. */
export function errorOfBody(text: string): unknown {
  try {
    const body: unknown = JSON.parse(text);
    return isObject(body) ? body.error : null;
  } catch {
    return null;
  }
}

/** The version to use with a server that listed `supported`: ours first, modern before legacy. */
export function pickVersion(supported: readonly string[]): string | null {
  return SUPPORTED_VERSIONS.find((v) => supported.includes(v)) ?? null;
}

/** `resultType` (basic/index.mdx): absent means `complete`; an unknown value is invalid. */
export type ResultType = 'complete' | 'input_required' | { invalid: string };

export function resultTypeOf(result: Record<string, unknown>): ResultType {
  const t = result.resultType;
  if (t === undefined || t === 'complete') return 'complete';
  if (t === 'input_required') return 'input_required';
  return { invalid: typeof t === 'string' ? t.slice(0, 40) : typeof t };
}

/** Cache hints of a list result (server/utilities/caching.mdx). A negative or absent TTL is 0. */
export interface CacheHints {
  ttlMs: number;
  cacheScope: 'public' | 'private' | null;
}

export function cacheHintsOf(result: Record<string, unknown>): CacheHints {
  const ttl = result.ttlMs;
  const scope = result.cacheScope;
  return {
    ttlMs: typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? Math.floor(ttl) : 0,
    cacheScope: scope === 'public' || scope === 'private' ? scope : null,
  };
}

/** What an `input_required` result asks for, in a few words for the model (kinds only, never values). */
export function describeInputRequests(result: Record<string, unknown>): string {
  const requests = result.inputRequests;
  const kinds = new Set<string>();
  if (isObject(requests)) {
    for (const r of Object.values(requests)) {
      if (isObject(r) && typeof r.method === 'string') {
        if (r.method.startsWith('elicitation/')) kinds.add('an answer from the user');
        else if (r.method.startsWith('sampling/')) kinds.add('a model completion');
        else if (r.method.startsWith('roots/')) kinds.add('a list of folders');
        else kinds.add('more input');
      }
    }
  }
  return kinds.size > 0 ? [...kinds].join(' and ') : 'more input';
}

/** Revisions in which a server may ask the client to elicit input (client/elicitation.mdx). */
export const ELICITATION_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18'];

/** The kinds of input a server may ask the client for mid-call, by request method. */
export type ServerAsk = 'elicitation' | 'sampling' | 'roots';

/** The kind of input a server request asks for, or null (ping and the like). */
export function serverAskOf(method: string): ServerAsk | null {
  if (method === 'elicitation/create') return 'elicitation';
  if (method === 'sampling/createMessage') return 'sampling';
  if (method === 'roots/list') return 'roots';
  return null;
}

/** What a set of server requests asked for, in a few words for the model (as describeInputRequests). */
export function describeServerAsks(asks: Iterable<ServerAsk>): string {
  const words = {
    elicitation: 'an answer from the user',
    sampling: 'a model completion',
    roots: 'a list of folders',
  };
  const kinds = [...new Set(asks)].map((a) => words[a]);
  return kinds.length > 0 ? kinds.join(' and ') : 'more input';
}

/**
 * Our answer to a request a server sends on a call's stream, under the session's `version`. This
 * client has no person, model or folders to offer inside a turn (it declares no capabilities):
 * - `ping`: an empty result;
 * - `elicitation/create`: `{ action: "decline" }` in the revisions that have elicitation, whose
 *   servers expect it (2025-06-18 and 2025-11-25 client/elicitation.mdx, "Response Actions"); in
 *   earlier ones the method does not exist: -32601;
 * - `sampling/createMessage` and `roots/list`: -32601, as client/roots.mdx ("Error Handling") says
 *   for a client without the capability (sampling's -1 means a person rejected it, which no one did);
 * - anything else: -32601.
 */
export function serverRequestAnswer(
  method: string,
  version: string,
): { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } } {
  if (method === 'ping') return { result: {} };
  const ask = serverAskOf(method);
  if (ask === 'elicitation' && ELICITATION_VERSIONS.includes(version))
    return { result: { action: 'decline' } };
  if (ask === 'sampling' || ask === 'roots') {
    const what = ask === 'sampling' ? 'Sampling' : 'Roots';
    return {
      error: {
        code: -32601,
        message: `${what} not supported`,
        data: { reason: `Client does not have ${ask} capability` },
      },
    };
  }
  return { error: { code: -32601, message: 'Method not found' } };
}
