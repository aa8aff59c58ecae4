/**
 * An assistant's connected tools as a remote MCP server (issue 27): `POST`, `GET` and `DELETE`
 * on `/mcp/{assistantId}`, MCP Streamable HTTP. A POST's JSON-RPC goes through the hand-written
 * dispatcher of rpc.ts (the SDK 1.32 `Server` + `StreamableHTTPServerTransport` built per request
 * cost too much: docs/mcp-clients.md, "How it is served"); the GET stream still uses the SDK
 * classes. Nothing of a session is kept in an instance, so any instance answers any request.
 *
 * - Who: an MCP_CLIENT token bound to that assistant, decided from the headers alone (401 with the
 *   protected-resource metadata, 403 for another assistant's token or another role).
 * - Sessions: `initialize` answers a signed, self-contained `Mcp-Session-Id` (protocol.ts); later
 *   requests may carry it, and any instance checks it. A session is a conversation.
 * - `tools/list`: the GENERIC tools `beginTurn` would declare now (both gates, from the tool
 *   cache, which every instance refreshes by NOTIFY), without built-ins or finish_turn, in pages.
 * - `tools/call`: the call path of `callTool` (src/turns/call-path.ts), on the conversation's
 *   Turn (conversations.ts). Every failure is an `isError` result with the model's message.
 * - `GET`: a stream that gets `notifications/tools/list_changed`; bounded per instance, closed
 *   when the token is revoked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { Role } from '../auth/api-token.entity.js';
import type { Principal } from '../auth/principal.js';
import { bearerToken } from '../auth/tokens.js';
import { readBody } from '../http/edge.js';
import { sendJson } from '../http/json-response.js';
import type { RequestLogRecord } from '../http/request-log.js';
import { actorOf, addErrorCodes } from '../http/request-log.js';
import type { JsonObject } from '../operations/types.js';
import type { Services } from '../services.js';
import { FINISHED_MESSAGE, type CallLive } from '../turns/call-path.js';
import { dialectToolsOf } from '../turns/tool-cache.js';
import { failure } from '../turns/result.js';
import { CallStatus } from '../turns/call-status.js';
import type { ProgressLine } from '../turns/progress.js';
import { McpConversations } from './conversations.js';
import { EndedSessions } from './ended-sessions.js';
import {
  answer,
  postHeadersProblem,
  readBatch,
  RPC,
  RpcFault,
  sseEvent,
  progressNotification,
  type RpcHandlers,
  type RpcMessage,
  type RpcRequest,
} from './rpc.js';
import { ModernMcp, type McpTools } from './modern.js';
import { assistantOf, header, modernWantsSse, refuseUnauthenticated, rpcError, wantsSse } from './request.js';
import {
  conversationOf,
  DEFAULT_HEADER_VERSION,
  isModernRequest,
  LIST_TTL_MS,
  mcpCallResult,
  negotiatedVersion,
  originAllowed,
  readSessionId,
  sessionId,
  toolsPage,
  versionHeaderProblem,
  type Mac,
  type McpCallResult,
  type McpTool,
  type SessionClaims,
} from './protocol.js';

export const MCP_PATH_PREFIX = '/mcp/';
export const RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource/mcp/';
/** The most messages in one 2025-03-26 batch. */
export const MCP_BATCH_MAX = 32;
const SERVER_INFO = { name: 'connected-tools', version: '1.0.0' };
const SERVER = { serverInfo: SERVER_INFO };

/** Who sent a POST, to which assistant, in which session, and its version header's problem if any. */
interface PostContext {
  principal: Principal;
  assistantId: string;
  session: SessionClaims | null;
  versionProblem: string | null;
}

export class McpEndpoint {
  readonly conversations: McpConversations;
  readonly #ended: EndedSessions;
  readonly #mac: Mac;
  /** Calls in flight per token (on this instance). */
  readonly #inFlight = new Map<string, number>();
  /** Open GET streams: their token and assistant, to close or notify them. */
  readonly #streams = new Map<Server, { tokenId: string; workspaceId: string | null; close: () => void }>();
  readonly #stops: (() => void)[] = [];
  /**
   * Calls in flight on this instance that a `notifications/cancelled` may stop, keyed by the
   * token, the session (or none) and the request id: one client cannot cancel another's call.
   */
  readonly #cancellable = new Map<string, AbortController>();
  /** Protocol 2026-07-28 (modern.ts), on the same list and call. */
  readonly #modern: ModernMcp;

  constructor(private readonly services: Services) {
    const { config } = services;
    this.conversations = new McpConversations(
      services.orm,
      services.turns,
      services.logger,
      config.mcpServer,
      services.clock,
    );
    this.#ended = new EndedSessions(
      () => services.orm.em.getConnection(),
      services.notifier,
      config.mcpServer.conversationsMax,
    );
    this.#mac = (parts) => services.secrets.fingerprint(['mcp-session', ...parts]);
    const tools: McpTools = {
      list: (assistantId, cursor) => this.#list(assistantId, cursor),
      call: async (principal, assistantId, meta, name, args) => {
        const conversation = conversationOf(principal.tokenId, null, meta);
        if (!conversation.ok) return conversation;
        const result = await this.#call(principal, assistantId, conversation.conversationId, name, args);
        return { ok: true, result };
      },
    };
    this.#modern = new ModernMcp(tools, {
      listTtlMs: LIST_TTL_MS,
      streamsMax: config.mcpServer.streamsMax,
      maxBodyBytes: config.mcpServer.maxBodyBytes,
    });
    // A revoked token's open streams close at once (the revocation reaches every instance by NOTIFY).
    this.#stops.push(
      services.auth.onRevoked((tokenId) => {
        for (const [, s] of this.#streams) if (s.tokenId === tokenId) s.close();
        this.#modern.revoked(tokenId);
      }),
    );
    // Tool changes: every stream of the workspace's assistants is told to list again.
    this.#stops.push(
      services.toolCache.onInvalidate((workspaceId) => {
        for (const [server, s] of this.#streams) {
          if (workspaceId !== null && s.workspaceId !== workspaceId) continue;
          void server.sendToolListChanged().catch(() => undefined);
        }
        this.#modern.toolsChanged();
      }),
    );
  }

  start(): void {
    this.conversations.start();
  }

  close(): void {
    this.conversations.close();
    this.#ended.close();
    for (const stop of this.#stops) stop();
    for (const [, s] of this.#streams) s.close();
    void this.#modern.close();
  }

  stats(): { streams: number } {
    return { streams: this.#streams.size + this.#modern.stats().streams };
  }

  /** `GET /.well-known/oauth-protected-resource/mcp/{assistantId}` (RFC 9728). */
  resourceMetadata = async (_req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const assistant = assistantOf(url.pathname, RESOURCE_METADATA_PREFIX);
    if (!assistant) return sendJson(res, 404, { error: 'not found' });
    res.setHeader('cache-control', 'public, max-age=300');
    return sendJson(res, 200, {
      resource: this.#resourceUrl(assistant.globalId),
      bearer_methods_supported: ['header'],
      resource_name: 'Connected tools of one assistant',
      resource_documentation: `${this.services.config.publicUrl}/docs/mcp-clients.md`,
    });
  };

  #resourceUrl(globalId: string): string {
    return `${this.services.config.publicUrl}${MCP_PATH_PREFIX}${encodeURIComponent(globalId)}`;
  }

  handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    record: RequestLogRecord,
  ): Promise<void> => {
    const assistant = assistantOf(url.pathname, MCP_PATH_PREFIX);
    if (!assistant) return sendJson(res, 404, { error: 'not found' });
    // A browser's page from elsewhere (DNS rebinding) is refused before anything else.
    const { publicUrl, mcpServer } = this.services.config;
    if (!originAllowed(header(req, 'origin'), publicUrl, mcpServer.allowedOrigins)) {
      addErrorCodes(record, ['FORBIDDEN']);
      return rpcError(res, req, 403, -32001, 'Forbidden: this Origin may not use the MCP endpoint');
    }
    // The token first, from the headers alone: nothing of a refused request is read or parsed.
    const token = bearerToken(req.headers.authorization);
    const principal = await this.services.auth.authenticate(this.services.orm.em.getConnection(), token);
    if (!principal) {
      addErrorCodes(record, ['UNAUTHENTICATED']);
      const metadata = `${this.services.config.publicUrl}${RESOURCE_METADATA_PREFIX}${encodeURIComponent(assistant.globalId)}`;
      return refuseUnauthenticated(req, res, metadata);
    }
    record.actor = actorOf(principal);
    if (principal.role !== Role.MCP_CLIENT || principal.assistantId !== assistant.id) {
      addErrorCodes(record, ['FORBIDDEN']);
      return rpcError(res, req, 403, -32001, 'this token is not an MCP_CLIENT token of this assistant');
    }
    // A POST of 2026-07-28 is answered with that revision's own version error (below, once parsed).
    const versionProblem = versionHeaderProblem(header(req, 'mcp-protocol-version'));
    if (versionProblem && req.method !== 'POST')
      return rpcError(res, req, 400, ErrorCode.InvalidRequest, versionProblem);

    const session = await this.#session(req, principal, assistant.id);
    if (session === 'unknown')
      return rpcError(res, req, 404, -32001, 'Session not found: initialize again without a session id');

    if (req.method === 'DELETE') {
      if (!session)
        return rpcError(res, req, 400, ErrorCode.InvalidRequest, 'DELETE needs the Mcp-Session-Id to end');
      await this.#endSession(principal, assistant.id, session);
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'GET') return this.#stream(req, res, principal);
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
      return;
    }
    return this.#post(req, res, url, { principal, assistantId: assistant.id, session, versionProblem });
  };

  /**
   * A session, where the client uses one: ours, of this token and assistant, and not ended by its
   * DELETE (here or on another instance); `unknown` otherwise (404: initialize again).
   */
  async #session(
    req: IncomingMessage,
    principal: Principal,
    assistantId: string,
  ): Promise<SessionClaims | null | 'unknown'> {
    const sessionHeader = header(req, 'mcp-session-id');
    if (sessionHeader === undefined) return null;
    const session = readSessionId(sessionHeader, this.#mac);
    // Ended by its DELETE, here or on another instance: as unknown as a session never begun.
    if (
      !session ||
      session.tokenId !== principal.tokenId ||
      session.assistantId !== assistantId ||
      (await this.#ended.isEnded(session.key))
    )
      return 'unknown';
    return session;
  }

  /** A `POST`: its body read and parsed, then served by the 2026-07-28 revision or as a legacy batch. */
  async #post(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    { principal, assistantId, session, versionProblem }: PostContext,
  ): Promise<void> {
    const problem = postHeadersProblem(header(req, 'accept'), header(req, 'content-type'));
    if (problem) return rpcError(res, req, problem.status, RPC.TRANSPORT, problem.message);
    const limit = this.services.config.mcpServer.maxBodyBytes;
    const body = await readBody(req, limit);
    if (body === null)
      return rpcError(res, req, 413, ErrorCode.InvalidRequest, `request body over ${limit} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return rpcError(res, req, 400, ErrorCode.ParseError, 'Parse error: the body is not JSON');
    }
    if (isModernRequest(header(req, 'mcp-protocol-version'), parsed))
      return this.#modern.serve(
        req,
        res,
        url,
        body,
        parsed,
        modernWantsSse(header(req, 'accept'), parsed),
        principal,
        assistantId,
      );
    if (versionProblem) return rpcError(res, req, 400, ErrorCode.InvalidRequest, versionProblem);
    // Batches were removed in 2025-06-18: only a 2025-03-26 client (or one that names no version,
    // which the transport spec reads as 2025-03-26) may send one, of at most MCP_BATCH_MAX messages.
    const version = session?.version ?? header(req, 'mcp-protocol-version') ?? DEFAULT_HEADER_VERSION;
    const read = readBatch(parsed, version === '2025-03-26', MCP_BATCH_MAX, version);
    if (!read.ok) return rpcError(res, req, 400, read.code, read.message);
    return this.#answerBatch(req, res, read.messages, read.batch, { principal, assistantId, session });
  }

  /** A legacy POST's messages: `initialize` begins a session; requests are answered as JSON or SSE. */
  async #answerBatch(
    req: IncomingMessage,
    res: ServerResponse,
    messages: readonly RpcMessage[],
    batch: boolean,
    { principal, assistantId, session }: Omit<PostContext, 'versionProblem'>,
  ): Promise<void> {
    // `initialize` negotiates among the versions served here, and begins a session.
    for (const m of messages) {
      if (m.kind === 'request' && m.request.method === 'initialize') {
        const newSession = sessionId(
          {
            assistantId,
            tokenId: principal.tokenId,
            version: negotiatedVersion(m.request.params.protocolVersion),
            key: randomBytes(18).toString('base64url'),
          },
          this.#mac,
        );
        res.setHeader('mcp-session-id', newSession);
      }
    }
    const requests: RpcRequest[] = [];
    const sse = wantsSse(header(req, 'accept'), messages);
    // On SSE, progress goes out before the result; on JSON there is nowhere to send it.
    const emit = sse ? (message: unknown) => void (res.writableEnded || res.write(sseEvent(message))) : null;
    const cancelled = new Set<RpcRequest['id']>();
    const handlers = this.#handlers(principal, assistantId, session, emit, cancelled);
    for (const m of messages) {
      if (m.kind === 'request') requests.push(m.request);
      else if (m.kind === 'notification') handlers.notify?.(m.notification);
    }
    // Only notifications or responses: 202 Accepted, no body.
    if (requests.length === 0) {
      res.writeHead(202).end();
      return;
    }
    if (sse) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
      });
      await Promise.all(
        requests.map(async (r) => {
          const response = await answer(r, handlers, SERVER);
          // A cancelled request gets no response (the spec's cancellation utility).
          if (!cancelled.has(r.id)) emit!(response);
        }),
      );
      res.end();
      return;
    }
    const answered = await Promise.all(requests.map((r) => answer(r, handlers, SERVER)));
    const responses = answered.filter((r) => r.id === null || !cancelled.has(r.id));
    // Every request was cancelled: nothing to answer, as for a POST of notifications.
    if (responses.length === 0) {
      res.writeHead(202).end();
      return;
    }
    const text = JSON.stringify(batch ? responses : responses[0]);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
  }

  /** This request's tools/list and tools/call on this assistant, for the dispatcher (rpc.ts). */
  #handlers(
    principal: Principal,
    assistantId: string,
    session: SessionClaims | null,
    emit: ((message: unknown) => void) | null,
    cancelled: Set<RpcRequest['id']>,
  ): RpcHandlers {
    const scope = `${principal.tokenId}\u0000${session?.key ?? ''}\u0000`;
    return {
      notify: (n) => {
        if (n.method !== 'notifications/cancelled') return;
        const id = n.params.requestId;
        if (typeof id !== 'string' && typeof id !== 'number') return;
        this.#cancellable.get(scope + JSON.stringify(id))?.abort();
      },
      listTools: async (cursor) => {
        const page = await this.#list(assistantId, cursor);
        if (!page.ok) throw new RpcFault(ErrorCode.InvalidParams, page.message);
        return page.nextCursor === undefined
          ? { tools: page.tools }
          : { tools: page.tools, nextCursor: page.nextCursor };
      },
      callTool: async (params, id) => {
        const conversation = conversationOf(principal.tokenId, session, params.meta);
        if (!conversation.ok) throw new RpcFault(ErrorCode.InvalidParams, conversation.message);
        const token = params.progressToken;
        let onProgress: ((line: ProgressLine) => void) | null = null;
        if (token !== undefined && emit !== null) {
          let last: number | null = null;
          onProgress = (line) => {
            const n = progressNotification(token, line, last);
            if (n === null) return;
            last = line.progress;
            emit(n);
          };
        }
        const key = scope + JSON.stringify(id);
        // A second call with the id of one in flight is not cancellable: the first keeps its key.
        const controller = this.#cancellable.has(key) ? null : new AbortController();
        if (controller) this.#cancellable.set(key, controller);
        try {
          return await this.#call(
            principal,
            assistantId,
            conversation.conversationId,
            params.name,
            params.arguments,
            {
              ...(onProgress ? { onProgress } : {}),
              ...(controller ? { signal: controller.signal } : {}),
            },
          );
        } finally {
          if (controller) {
            this.#cancellable.delete(key);
            if (controller.signal.aborted) cancelled.add(id);
          }
        }
      },
    };
  }

  /** A page of the GENERIC tools `beginTurn` would declare now, less built-ins and finish_turn. */
  async #list(
    assistantId: string,
    cursor: string | undefined,
  ): Promise<{ ok: true; tools: McpTool[]; nextCursor?: string } | { ok: false; message: string }> {
    const tools = await this.services.toolCache.get(assistantId);
    if (!tools) return { ok: false, message: 'the assistant does not exist' };
    const list = dialectToolsOf(tools, 'GENERIC');
    // Exactly what beginTurn declares, less what the platform handles: built-ins and finish_turn.
    const callable = list.tools.filter((t) => Object.hasOwn(list.map, t.name));
    return toolsPage(callable, cursor, this.services.config.mcpServer.pageSize);
  }

  async #call(
    principal: Principal,
    assistantId: string,
    conversationId: string,
    name: string,
    args: JsonObject,
    live: CallLive | null = null,
  ): Promise<McpCallResult> {
    const cap = this.services.config.mcpServer.callsPerToken;
    const running = this.#inFlight.get(principal.tokenId) ?? 0;
    if (running >= cap)
      return mcpCallResult(
        failure(
          CallStatus.RATE_LIMITED,
          `Too many calls at once through this MCP client (at most ${cap}). Nothing was done; try again when an earlier call has answered.`,
        ),
      );
    this.#inFlight.set(principal.tokenId, running + 1);
    try {
      for (let attempt = 0; ; attempt++) {
        const turnId = await this.conversations.turnOf(principal, assistantId, conversationId);
        const result = await this.services.turns.call(principal, turnId, name, args, null, live);
        // The conversation's Turn was finished (idle, elsewhere) and nothing was sent: on a new one.
        if (result.callId === null && result.message === FINISHED_MESSAGE && attempt === 0) {
          this.conversations.forget(assistantId, conversationId);
          continue;
        }
        return mcpCallResult(result);
      }
    } finally {
      const left = (this.#inFlight.get(principal.tokenId) ?? 1) - 1;
      if (left <= 0) this.#inFlight.delete(principal.tokenId);
      else this.#inFlight.set(principal.tokenId, left);
    }
  }

  /** `DELETE`: the session's conversation ends with its Turn. */
  async #endSession(principal: Principal, assistantId: string, session: SessionClaims): Promise<void> {
    const conversationId = conversationOf(principal.tokenId, session, undefined);
    if (!conversationId.ok) return;
    await this.#ended.end(session.key, principal.tokenId);
    const turnId = await this.conversations.turnOf(principal, assistantId, conversationId.conversationId);
    this.conversations.forget(assistantId, conversationId.conversationId);
    await this.services.turns.finish(principal, turnId);
  }

  /** `GET`: a stream for `notifications/tools/list_changed`, bounded per instance. */
  async #stream(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> {
    if (this.#streams.size >= this.services.config.mcpServer.streamsMax) {
      res.writeHead(503, { 'retry-after': '5' }).end();
      return;
    }
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: true } } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const close = () => {
      this.#streams.delete(server);
      void server.close().catch(() => undefined);
      res.destroy();
    };
    this.#streams.set(server, { tokenId: principal.tokenId, workspaceId: principal.workspaceId, close });
    res.on('close', () => {
      this.#streams.delete(server);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
}
