/**
 * Discovery over MCP: `server/discover` to tell a modern server from a legacy one, then every page
 * of `tools/list` (following cursors, bounded in pages, tools and time), with a session of its own
 * for a legacy server. Throws `McpClientError`, or the `OutboundError` of a refusal as it is.
 */
import type { JsonObject } from '../operations/types.js';
import { replyError, transportError } from './failures.js';
import { asksForSession } from './outcome.js';
import type { McpSessions } from './session.js';
import { ToolCollector } from './tool-mapping.js';
import { isObject } from '../operations/types.js';
import type { McpTransport, Reply, Wire } from './transport.js';
import {
  McpClientError,
  McpErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  timeoutOf,
  type DiscoverResult,
  type InitializeResult,
  type ListStopReason,
  type ListToolsResult,
  type McpEndpoint,
  type McpSettings,
} from './types.js';
import {
  cacheHintsOf,
  errorOfBody,
  isLegacyVersion,
  isModernVersion,
  judgeModernError,
  MODERN_VERSIONS,
  modernHeaders,
  modernMeta,
  pickVersion,
  resultTypeOf,
  SERVER_INFO_META_KEY,
  type CacheHints,
} from './versions.js';
import { mayRetry } from '../operations/retry.js';

export class McpDiscovery {
  readonly #transport: McpTransport;
  readonly #sessions: McpSessions;
  readonly #settings: McpSettings;

  constructor(transport: McpTransport, sessions: McpSessions, settings: McpSettings) {
    this.#transport = transport;
    this.#sessions = sessions;
    this.#settings = settings;
  }

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
    const collector = new ToolCollector(this.#settings.maxTools);
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let cache: CacheHints | null = null;
    const wire: Wire | undefined = modern
      ? { version: version!, headers: modernHeaders(version!, 'tools/list') }
      : version === undefined
        ? undefined
        : { version };
    for (let pages = 1; ; pages++) {
      const remaining = Math.floor(deadline - this.#settings.clock.monotonic());
      if (remaining <= 0) {
        throw new McpClientError(
          McpErrorCode.TIMEOUT,
          `tools/list: discovery ran out of time after ${pages - 1} pages`,
          {
            timeoutMs: this.#settings.discoveryTimeoutMs,
          },
        );
      }
      const page = {
        sessionId,
        wire,
        cursor,
        modern,
        timeoutMs: Math.min(timeoutOf(this.#settings, ep), remaining),
      };
      const { result, next } = listPageOf(await this.#page(ep, page), modern);
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
      if (pages >= this.#settings.maxPages) return done('PAGE_LIMIT');
      cursors.add(next);
      cursor = next;
    }
  }

  /** One `tools/list` request and its result. Throws `McpClientError` or a refusal's `OutboundError`. */
  async #page(
    ep: McpEndpoint,
    page: {
      sessionId: string | undefined;
      wire: Wire | undefined;
      cursor: string | undefined;
      modern: boolean;
      timeoutMs: number;
    },
  ): Promise<unknown> {
    const id = this.#transport.newId();
    const params: Record<string, unknown> = page.cursor === undefined ? {} : { cursor: page.cursor };
    if (page.modern) params._meta = modernMeta(page.wire!.version, this.#settings.clientInfo);
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params });
    let reply: Reply;
    try {
      reply = await this.#transport.send(ep, page.sessionId, id, body, page.timeoutMs, undefined, page.wire);
    } catch (err) {
      throw transportError(err, 'tools/list');
    }
    if (reply.type !== 'result') throw replyError(reply, 'tools/list');
    return reply.result;
  }

  /**
   * Lists every tool with this process's session for the connection, running `initialize` first
   * when there is none. Throws `McpClientError` or a refusal's `OutboundError`.
   */
  async listTools(ep: McpEndpoint): Promise<ListToolsResult> {
    const deadline = this.#settings.clock.monotonic() + this.#settings.discoveryTimeoutMs;
    const held = this.#sessions.held(ep.id);
    let sessionId = held
      ? held.sessionId
      : await this.#sessions.ensure(ep, undefined, timeoutOf(this.#settings, ep));
    try {
      return await this.#listAll(ep, sessionId, deadline);
    } catch (err) {
      const status = err instanceof McpClientError ? err.data.status : undefined;
      if (typeof status !== 'number' || !asksForSession(status)) throw err;
      // The held session is gone: one new handshake, one more try (listing reads, so any risk is READ).
      const again = mayRetry({
        failure: 'refused_before_acting',
        attempts: 1,
        resends: 0,
        reachedServer: true,
        risk: 'READ',
        idempotent: true,
      });
      if (!again.retry) throw err;
      sessionId = await this.#sessions.ensure(ep, sessionId, timeoutOf(this.#settings, ep));
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
    const deadline = this.#settings.clock.monotonic() + this.#settings.discoveryTimeoutMs;
    const timeoutMs = Math.min(timeoutOf(this.#settings, ep), this.#settings.discoveryTimeoutMs);
    const modern = await this.#probeModern(ep, timeoutMs);
    if (modern !== null) {
      const listing = await this.#listAll(ep, undefined, deadline, modern.protocolVersion, true);
      return { initialize: modern, era: 'modern', ...listing };
    }
    const hs = await this.#sessions.handshake(ep, timeoutMs);
    try {
      const listing = await this.#listAll(ep, hs.sessionId, deadline, hs.result.protocolVersion);
      return { initialize: hs.result, era: 'legacy', ...listing, cache: null };
    } finally {
      if (hs.sessionId !== undefined)
        await this.#transport.deleteNow(ep, hs.sessionId, hs.result.protocolVersion);
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
      const id = this.#transport.newId();
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'server/discover',
        params: { _meta: modernMeta(version, this.#settings.clientInfo) },
      });
      let reply: Reply;
      try {
        reply = await this.#transport.send(ep, undefined, id, body, timeoutMs, undefined, {
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
}

/** A `tools/list` result checked: its tools array and next cursor. Throws `McpClientError`. */
function listPageOf(
  result: unknown,
  modern: boolean,
): { result: Record<string, unknown> & { tools: unknown[] }; next: string | null | undefined } {
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
    throw new McpClientError(McpErrorCode.UPSTREAM_PROTOCOL_ERROR, 'tools/list: nextCursor is not a string', {
      reason: 'INVALID_RESPONSE',
    });
  }
  if (modern && resultTypeOf(result) !== 'complete') {
    throw new McpClientError(
      McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
      'tools/list: the result is not complete (resultType must be "complete")',
      { reason: 'INVALID_RESULT_TYPE' },
    );
  }
  return { result: result as Record<string, unknown> & { tools: unknown[] }, next };
}
