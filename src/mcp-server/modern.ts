/**
 * The endpoint in protocol revision 2026-07-28 (issue 27), through the SDK 2.4 server
 * (`@modelcontextprotocol/server` `createMcpHandler`, modern only: `legacy: 'reject'`; the legacy
 * revisions stay in endpoint.ts). endpoint.ts authenticates, caps and parses the body, then hands
 * a request here when `isModernRequest` (protocol.ts) says it is of this revision.
 *
 * What the SDK does for us, as the revision says: `server/discover`; the `_meta` envelope
 * (protocol version, client capabilities) of each request; the `MCP-Protocol-Version`, `Mcp-Method`
 * and `Mcp-Name` headers checked against the body (`-32020` HeaderMismatch); an unsupported version
 * (`-32022`, with the supported ones); `resultType` on every result; `ttlMs` and `cacheScope` on
 * `tools/list`; and `subscriptions/listen`, the revision's stream of `notifications/tools/list_changed`.
 *
 * What is ours: the tools and the calls (the endpoint's `McpTools`, the same code the legacy
 * revisions use), and which listen streams exist (bounded by `MCP_STREAMS_MAX`, closed when their
 * token is revoked).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  InMemoryServerEventBus,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.js';
import type { JsonObject } from '../operations/types.js';
import type { McpCallResult, McpTool } from './protocol.js';

/** What a modern request may do: the endpoint's own list and call, for this principal. */
export interface McpTools {
  list(
    assistantId: string,
    cursor: string | undefined,
  ): Promise<{ ok: true; tools: McpTool[]; nextCursor?: string } | { ok: false; message: string }>;
  call(
    principal: Principal,
    assistantId: string,
    meta: unknown,
    name: string,
    args: JsonObject,
  ): Promise<{ ok: true; result: McpCallResult } | { ok: false; message: string }>;
}

export interface ModernLimits {
  /** How long a client may keep a `tools/list` answer (the `ttlMs` hint). */
  listTtlMs: number;
  /** Open `subscriptions/listen` streams on this instance. */
  streamsMax: number;
  maxBodyBytes: number;
}

const SERVER_INFO = { name: 'connected-tools', version: '1.0.0' };

/** Who a request is, handed to the per-request server through the SDK's pass-through AuthInfo. */
interface Caller extends AuthInfo {
  principal: Principal;
  assistantId: string;
}

export class ModernMcp {
  /** Answers as JSON (an event stream only when something comes before the result)… */
  readonly #handler: McpHttpHandler;
  /** …and always as an event stream, when the client prefers one; the two share one listen bus. */
  readonly #sseHandler: McpHttpHandler;
  /** Open responses that stream (listen streams, SSE answers), with their token: closed on revocation. */
  readonly #open = new Map<ServerResponse, string>();

  constructor(
    private readonly tools: McpTools,
    limits: ModernLimits,
  ) {
    const factory = (ctx: McpRequestContext) => this.#server(ctx.authInfo as Caller, limits);
    const options = {
      legacy: 'reject',
      maxSubscriptions: limits.streamsMax,
      maxRequestBodySize: limits.maxBodyBytes,
      bus: new InMemoryServerEventBus(),
    } as const;
    this.#handler = createMcpHandler(factory, options);
    this.#sseHandler = createMcpHandler(factory, { ...options, responseMode: 'sse' });
  }

  /** Every open listen stream is told to list again (the streams are not filtered by workspace). */
  toolsChanged(): void {
    this.#handler.notify.toolsChanged();
  }

  /** The token was revoked: its open streams close now. */
  revoked(tokenId: string): void {
    for (const [res, t] of this.#open) if (t === tokenId) res.destroy();
  }

  stats(): { streams: number } {
    return { streams: this.#open.size };
  }

  async close(): Promise<void> {
    for (const [res] of this.#open) res.destroy();
    await Promise.all([this.#handler.close(), this.#sseHandler.close()]);
  }

  /**
   * One POST of this revision: the body already read (`body`) and parsed (`parsed`); `sse`, the
   * client prefers an event stream (endpoint.ts wantsSse).
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    parsed: unknown,
    sse: boolean,
    principal: Principal,
    assistantId: string,
  ): Promise<void> {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const request = new Request(url, { method: 'POST', headers, body, signal: abort.signal });
    const caller: Caller = {
      token: '',
      clientId: principal.tokenId,
      scopes: [],
      principal,
      assistantId,
    };
    const answer = await (sse ? this.#sseHandler : this.#handler).fetch(request, {
      authInfo: caller,
      parsedBody: parsed,
    });
    await this.#pipe(answer, res, principal.tokenId);
  }

  /** The web Response onto the Node one; a stream stays registered while it is open. */
  async #pipe(answer: Response, res: ServerResponse, tokenId: string): Promise<void> {
    const headers: Record<string, string> = {};
    answer.headers.forEach((v, k) => (headers[k] = v));
    res.writeHead(answer.status, headers);
    if (!answer.body) {
      res.end();
      return;
    }
    const reader = answer.body.getReader();
    const streaming = (headers['content-type'] ?? '').startsWith('text/event-stream');
    if (streaming) {
      this.#open.set(res, tokenId);
      res.flushHeaders();
    }
    res.on('close', () => {
      this.#open.delete(res);
      void reader.cancel().catch(() => undefined);
    });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    } catch {
      res.destroy();
    } finally {
      this.#open.delete(res);
    }
  }

  /** The per-request server: tools/list and tools/call of the caller's assistant. */
  #server(caller: Caller, limits: ModernLimits): Server {
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      cacheHints: { 'tools/list': { ttlMs: limits.listTtlMs, cacheScope: 'private' } },
    });
    server.setRequestHandler('tools/list', async (request) => {
      const page = await this.tools.list(caller.assistantId, request.params?.cursor);
      if (!page.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, page.message);
      // Our schemas are the GENERIC declarations (objects), as the SDK 1.32 path serves them.
      const answer =
        page.nextCursor === undefined
          ? { tools: page.tools }
          : { tools: page.tools, nextCursor: page.nextCursor };
      return answer as never;
    });
    server.setRequestHandler('tools/call', async (request) => {
      const called = await this.tools.call(
        caller.principal,
        caller.assistantId,
        request.params._meta,
        request.params.name,
        (request.params.arguments ?? {}) as JsonObject,
      );
      if (!called.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, called.message);
      return called.result as never;
    });
    return server;
  }
}
