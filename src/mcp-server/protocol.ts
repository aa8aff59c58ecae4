/**
 * The MCP endpoint's pure parts (issue 27): the revisions it speaks, signed session ids, the
 * conversation a request records on, `tools/list` pages and cursors, and a call's answer as an MCP
 * `CallToolResult`. No I/O here; src/mcp-server/endpoint.ts does the HTTP and the SDK.
 */
import type { JsonObject, JsonValue } from '../operations/types.js';
import type { CallResult } from '../turns/result.js';
import type { DialectTool } from '../turns/dialects/declarations.js';

/** The revisions the endpoint speaks through the SDK 1.32 server classes, newest first. */
export const SERVED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ServedVersion = (typeof SERVED_VERSIONS)[number];
/** Without an `MCP-Protocol-Version` header, the transport spec says to assume this one. */
export const DEFAULT_HEADER_VERSION: ServedVersion = '2025-03-26';

export function isServedVersion(v: unknown): v is ServedVersion {
  return typeof v === 'string' && (SERVED_VERSIONS as readonly string[]).includes(v);
}

/** The stateless revisions the endpoint speaks through the SDK 2.4 server (modern.ts). */
export const MODERN_SERVED_VERSIONS = ['2026-07-28'] as const;
/** The `_meta` key of a modern request's protocol version (2026-07-28 basic/index.mdx). */
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** How long a 2026-07-28 client may keep a `tools/list` answer: a change shows within this. */
export const LIST_TTL_MS = 1000;

function isModernServed(v: string): boolean {
  return (MODERN_SERVED_VERSIONS as readonly string[]).includes(v);
}

/** The `MCP-Protocol-Version` header's refusal, naming what is served (null: the header is fine). */
export function versionHeaderProblem(header: string | undefined): string | null {
  if (header === undefined || isServedVersion(header) || isModernServed(header)) return null;
  return `Bad Request: unsupported protocol version ${JSON.stringify(header.slice(0, 64))}; supported versions: ${[...MODERN_SERVED_VERSIONS, ...SERVED_VERSIONS].join(', ')}`;
}

/**
 * Whether a POST is of the stateless revision (modern.ts answers it, errors included): its one
 * message claims a protocol version in `_meta` (any version: an unsupported one gets that
 * revision's own error), or its `MCP-Protocol-Version` header names a modern revision (a missing
 * `_meta` version is then that revision's error). Batches and everything else are legacy.
 */
export function isModernRequest(headerVersion: string | undefined, parsed: unknown): boolean {
  if (Array.isArray(parsed)) return false;
  if (headerVersion !== undefined && isModernServed(headerVersion)) return true;
  if (parsed === null || typeof parsed !== 'object') return false;
  const params = (parsed as { params?: unknown }).params;
  if (params === null || typeof params !== 'object') return false;
  const meta = (params as { _meta?: unknown })._meta;
  return meta !== null && typeof meta === 'object' && Object.hasOwn(meta, PROTOCOL_VERSION_META);
}

/**
 * What `initialize` is answered with: the client's version when served, else our newest (the
 * lifecycle's negotiation: the client then decides whether it can speak it).
 */
export function negotiatedVersion(requested: unknown): ServedVersion {
  return isServedVersion(requested) ? requested : SERVED_VERSIONS[0];
}

/** The `_meta` key a sessionless client names its conversation with. */
export const CONVERSATION_META = 'io.connected-tools/conversationId';
/** What a client's conversation id may be: visible ASCII, at most this long. */
export const CONVERSATION_ID_MAX = 128;

/**
 * A session, self-contained and signed, so that any instance can continue it: the assistant, the
 * token it was begun with, the negotiated version and a random conversation key. `mac` is the
 * caller's keyed digest (SecretBox.fingerprint): a session id cannot be forged or moved to
 * another token or assistant.
 */
export interface SessionClaims {
  assistantId: string;
  tokenId: string;
  version: ServedVersion;
  key: string;
}

export type Mac = (parts: readonly string[]) => string;
const SESSION_PREFIX = 'cts1';
/** Hex digits of the digest kept in the id: 128 bits. */
const MAC_CHARS = 32;

export function sessionId(claims: SessionClaims, mac: Mac): string {
  const parts = [SESSION_PREFIX, claims.assistantId, claims.tokenId, claims.version, claims.key];
  return `${parts.join('.')}.${mac(parts).slice(0, MAC_CHARS)}`;
}

/** The session's claims, or null when it is not one of ours (malformed, forged, altered). */
export function readSessionId(id: string, mac: Mac): SessionClaims | null {
  if (id.length > 300 || !/^[\x21-\x7e]+$/.test(id)) return null;
  const parts = id.split('.');
  if (parts.length !== 6 || parts[0] !== SESSION_PREFIX) return null;
  const [, assistantId, tokenId, version, key, given] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!isServedVersion(version) || !/^[A-Za-z0-9_-]{16,64}$/.test(key)) return null;
  const expected = mac(parts.slice(0, 5)).slice(0, MAC_CHARS);
  if (!timingSafeEqualText(expected, given)) return null;
  return { assistantId, tokenId, version, key };
}

function timingSafeEqualText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The Turn's conversation id a request records on (the `turn.conversation_id` column, 200 chars):
 * - a session: its own conversation, `mcp:s:<key>`;
 * - no session, `_meta["io.connected-tools/conversationId"]` given: `mcp:<tokenId>:c:<id>`;
 * - neither: one conversation per token, `mcp:<tokenId>`.
 * Keyed by the token: two tokens never share a conversation. Null: the given id is unusable.
 */
export function conversationOf(
  tokenId: string,
  session: SessionClaims | null,
  meta: unknown,
): { ok: true; conversationId: string } | { ok: false; message: string } {
  if (session) return { ok: true, conversationId: `mcp:s:${session.key}` };
  const given =
    meta !== null && typeof meta === 'object'
      ? (meta as Record<string, unknown>)[CONVERSATION_META]
      : undefined;
  if (given === undefined) return { ok: true, conversationId: `mcp:${tokenId}` };
  if (
    typeof given !== 'string' ||
    given.length === 0 ||
    given.length > CONVERSATION_ID_MAX ||
    !/^[\x21-\x7e]+$/.test(given)
  )
    return {
      ok: false,
      message: `_meta["${CONVERSATION_META}"] must be 1 to ${CONVERSATION_ID_MAX} visible ASCII characters`,
    };
  return { ok: true, conversationId: `mcp:${tokenId}:c:${given}` };
}

/** An MCP `Tool` from a GENERIC declaration: its name, description and input schema. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/**
 * One page of the tools a turn would declare. The cursor is opaque to clients: the offset and a
 * digest of the names, so a cursor of a list that changed since is refused rather than skipping
 * or repeating tools (the client lists again from the start).
 */
export function toolsPage(
  tools: readonly DialectTool[],
  cursor: string | undefined,
  pageSize: number,
): { ok: true; tools: McpTool[]; nextCursor?: string } | { ok: false; message: string } {
  const stamp = listStamp(tools);
  let start = 0;
  if (cursor !== undefined) {
    const m = /^([0-9]{1,7})\.([0-9a-f]{8})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
    if (!m || m[2] !== stamp || Number(m[1]) > tools.length)
      return {
        ok: false,
        message: 'Invalid cursor: the tool list changed or the cursor is not ours; list again from the start',
      };
    start = Number(m[1]);
  }
  const end = Math.min(tools.length, start + pageSize);
  const page = tools
    .slice(start, end)
    .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  return end < tools.length
    ? { ok: true, tools: page, nextCursor: Buffer.from(`${end}.${stamp}`, 'latin1').toString('base64url') }
    : { ok: true, tools: page };
}

/** A short digest (FNV-1a, 32 bits) of the names, in order: enough to notice a changed list. */
function listStamp(tools: readonly DialectTool[]): string {
  let h = 0x811c9dc5;
  for (const t of tools) {
    for (let i = 0; i < t.name.length; i++) h = Math.imul(h ^ t.name.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0x2c, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** What `tools/call` answers: the tool's content, or for any failure `isError` and the model's message. */
export interface McpCallResult {
  [key: string]: unknown;
  content: JsonValue[];
  structuredContent?: JsonObject;
  isError?: boolean;
}

export function mcpCallResult(result: CallResult): McpCallResult {
  if (result.ok) {
    const out: McpCallResult = { content: result.content };
    if (result.structuredContent !== null) out.structuredContent = result.structuredContent;
    return out;
  }
  // The message written for the model, the same text callTool gives it.
  return { content: [{ type: 'text', text: result.message ?? 'The call failed.' }], isError: true };
}

/**
 * Whether a request's `Origin` may reach the endpoint (the transport spec: servers MUST validate
 * it, against DNS rebinding). No `Origin`: a client that is not a browser, allowed. Otherwise it
 * must be the service's own public origin or one configured (MCP_ALLOWED_ORIGINS); `null` (an
 * opaque origin, a sandboxed page or a file) is never allowed.
 */
export function originAllowed(
  origin: string | undefined,
  publicUrl: string,
  allowed: readonly string[],
): boolean {
  if (origin === undefined) return true;
  let given: string;
  try {
    const u = new URL(origin);
    // Exactly an origin, as browsers send it: no path, nothing the parser would drop.
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== origin.toLowerCase())
      return false;
    given = u.origin;
  } catch {
    return false;
  }
  return given === new URL(publicUrl).origin || allowed.includes(given);
}
