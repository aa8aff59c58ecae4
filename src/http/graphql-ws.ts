/**
 * GraphQL over WebSocket (graphql-ws on `/graphql`), on the adapter in `ws-adapter.ts`: the token
 * is checked at the upgrade (if it carries one), at `connection_init` and again at every
 * `subscribe`; the subscription quota, the document limits and the error mask apply as over HTTP.
 * A socket whose token is revoked is closed at once (the revocation NOTIFY), and every open
 * socket's token is checked again every `TOKEN_RECHECK_MS`, for expiry and a NOTIFY that never came.
 */
import {
  getOperationAST,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import type { IncomingMessage, Server } from 'node:http';
import { WebSocketServer, type VerifyClientCallbackAsync, type WebSocket } from 'ws';
import { Role } from '../auth/api-token.entity.js';
import { bearerToken } from '../auth/tokens.js';
import { createContext, type Context } from '../graphql/context.js';
import type { BoundedDocuments } from '../graphql/document-limits.js';
import { unauthenticated } from '../graphql/errors.js';
import { checkInputStrings } from '../graphql/input-strings.js';
import { SubscriptionQuota } from '../graphql/subscription-quota.js';
import type { Services } from '../services.js';
import { WS_UNACCEPTED_MAX_BYTES, wsMessageLimitFor } from './edge.js';
import type { FormatError } from './format-error.js';
import { connectionToken, tooManySubscriptions, validateForSocket } from './graphql-ws-rules.js';
import { SocketLog } from './request-log.js';
import { SocketTokens } from './socket-tokens.js';
import { useWsServer, type WsAdapter, type WsExtra } from './ws-adapter.js';

/**
 * A token in the upgrade's Authorization header is checked before the socket opens (and `vouch`ed
 * for); without one, connection_init must carry it, and the upgrade is refused while the instance
 * already holds as many unaccepted sockets as it may (`full`).
 */
function verifyUpgrade(
  services: Services,
  gate: { full: () => boolean; vouch: (request: IncomingMessage) => void },
): VerifyClientCallbackAsync {
  return (info, done) => {
    const header = info.req.headers.authorization;
    if (header === undefined)
      return gate.full() ? done(false, 503, 'Service Unavailable', { 'Retry-After': '1' }) : done(true);
    void services.auth.authenticate(services.orm.em.getConnection(), bearerToken(header)).then(
      (principal) => {
        if (!principal)
          return done(false, 401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
        gate.vouch(info.req);
        done(true);
      },
      () => done(false, 503, 'Service Unavailable'),
    );
  };
}

/** What a socket may carry once accepted. */
type SocketExtra = WsExtra & Partial<{ principal: Context['principal']; token: string }>;
type WsServerOptions = ServerOptions<Record<string, unknown>, SocketExtra>;

/**
 * Every `subscribe`: the token again, the document bounded, the subscription quota, then the
 * validation and input strings as over HTTP. Returns the errors to send, or the execution args.
 */
function subscribeChecks(
  services: Services,
  schema: GraphQLSchema,
  parts: {
    rules: readonly ValidationRule[];
    documents: BoundedDocuments;
    quota: SubscriptionQuota<object>;
    socketLog: SocketLog;
  },
): NonNullable<WsServerOptions['onSubscribe']> {
  const { rules, documents, quota, socketLog } = parts;
  return async (ctx, id, payload) => {
    // The token may have been revoked since the socket opened (cached for 10 s at most).
    const principal = await services.auth.authenticate(
      services.orm.em.getConnection(),
      ctx.extra.token ?? null,
    );
    if (!principal) return [unauthenticated('the API token is no longer valid')];
    const document = documents.parse(payload.query);
    if (document instanceof GraphQLError) return [document];
    // The quota before validation: a subscription over the cap costs no validation, so a
    // flood of them cannot hold the event loop.
    const operation = getOperationAST(document, payload.operationName);
    const subscribing = operation?.operation === 'subscription';
    if (subscribing) {
      const refused = quota.acquire(principal.tokenId, ctx.extra.socket, id);
      if (refused) return [tooManySubscriptions(refused, quota)];
    }
    const errors = validateForSocket(schema, document, rules);
    const bad = errors.length > 0 ? errors : checkInputStrings(schema, document, payload.variables);
    if (bad) {
      if (subscribing) quota.release(ctx.extra.socket, id);
      return Array.isArray(bad) ? bad : [bad];
    }
    socketLog.started(ctx.extra.socket, id, operation?.name?.value, subscribing);
    return {
      schema,
      document,
      operationName: payload.operationName,
      variableValues: payload.variables,
      contextValue: createContext(services, principal),
    };
  };
}

export interface GraphqlWs {
  /** Open sockets and subscriptions (for /metrics). */
  stats(): { sockets: number; subscriptions: number };
  /** Closes every socket (1001) and stops the token checks. */
  close(): Promise<void>;
}

export function serveGraphqlWs(
  services: Services,
  schema: GraphQLSchema,
  httpServer: Server,
  options: {
    path: string;
    rules: readonly ValidationRule[];
    documents: BoundedDocuments;
    formatError: FormatError;
  },
): GraphqlWs {
  const { logger } = services;
  const { rules, documents, formatError } = options;
  const { limits } = services.config;
  /** Upgrades whose Authorization header carried a valid token. */
  const vouched = new WeakSet<IncomingMessage>();
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: options.path,
    // Until accepted, `ws` refuses a larger frame at its header (1009), before buffering it.
    maxPayload: WS_UNACCEPTED_MAX_BYTES,
    verifyClient: verifyUpgrade(services, {
      full: (): boolean => adapter.full(),
      vouch: (request) => vouched.add(request),
    }),
  });
  const mask = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((e) => formatError(e.toJSON(), e));
  const quota = new SubscriptionQuota<object>(
    services.config.limits.subscriptionsPerToken,
    services.config.limits.subscriptionsPerSocket,
  );
  const socketLog = new SocketLog(logger);
  const tokens = new SocketTokens(async (token) =>
    Boolean(await services.auth.authenticate(services.orm.em.getConnection(), token)),
  );
  const stopRevocations = services.auth.onRevoked((tokenId) => tokens.revoked(tokenId));
  /** The role of each socket whose connection_init was accepted: its messages get that role's cap. */
  const acceptedRole = new WeakMap<WebSocket, Role>();
  const adapter: WsAdapter = useWsServer<
    Record<string, unknown>,
    { principal: Context['principal']; token: string }
  >(
    socketEvents(services, schema, {
      rules,
      documents,
      quota,
      socketLog,
      tokens,
      acceptedRole,
      mask,
      accept: (socket) => adapter.accept(socket),
    }),
    wsServer,
    {
      // Nothing of an unaccepted socket is parsed past a small cap; then its role's cap (docs/limits.md).
      maxMessageBytes: (socket) => wsMessageLimitFor(acceptedRole.get(socket) ?? null, limits),
      // The largest cap of any role: a role's own is checked per message, with 4413.
      acceptedFrameBytes: Math.max(limits.maxBodyBytesStaff, limits.maxBodyBytes),
      maxUnaccepted: limits.wsUnacceptedMax,
      vouched: (request) => vouched.has(request),
      onInternalError: (err) => logger.error({ err }, 'internal error on a graphql-ws socket'),
    },
  );
  // Long-lived subscriptions outlive token checks on subscribe: drop sockets whose token was revoked.
  const stopRecheck = tokens.recheckEvery(services.config.tokenRecheckMs);

  return {
    stats: () => ({ sockets: socketLog.sockets, subscriptions: socketLog.subscriptions }),
    close: async () => {
      for (const client of wsServer.clients) client.close(1001, 'server shutting down');
      stopRecheck();
      stopRevocations();
      await adapter.dispose();
      await new Promise<void>((r) => wsServer.close(() => r()));
    },
  };
}

/** What the hooks share with the server that owns the sockets. */
interface SocketEventDeps {
  rules: readonly ValidationRule[];
  documents: BoundedDocuments;
  quota: SubscriptionQuota<object>;
  socketLog: SocketLog;
  tokens: SocketTokens;
  /** The role of each socket whose connection_init was accepted: its messages get that role's cap. */
  acceptedRole: WeakMap<WebSocket, Role>;
  mask: (errors: readonly GraphQLError[]) => GraphQLFormattedError[];
  /** Tells the adapter that a socket's connection_init was accepted. */
  accept: (socket: WebSocket) => void;
}

/**
 * graphql-ws's hooks for our sockets: `connection_init` accepted for a valid token (never an MCP
 * client's), each subscription checked, errors masked as Apollo masks them, and every socket and
 * subscription logged, counted against its quota and its token watched for revocation.
 */
function socketEvents(services: Services, schema: GraphQLSchema, deps: SocketEventDeps): WsServerOptions {
  const { rules, documents, quota, socketLog, tokens, acceptedRole, mask, accept } = deps;
  return {
    schema,
    connectionInitWaitTimeout: services.config.limits.wsInitWaitMs,
    onConnect: async (ctx) => {
      const token = connectionToken(ctx.connectionParams, ctx.extra.request.headers.authorization);
      const principal = await services.auth.authenticate(services.orm.em.getConnection(), token);
      // An MCP client's token lists and calls one assistant's tools through /mcp, nothing else.
      if (!principal || !token || principal.role === Role.MCP_CLIENT) return false; // closes with 4403 Forbidden
      ctx.extra.principal = principal;
      ctx.extra.token = token;
      tokens.add(ctx.extra.socket, token, principal.tokenId);
      acceptedRole.set(ctx.extra.socket, principal.role);
      accept(ctx.extra.socket);
      socketLog.accepted(ctx.extra.socket, ctx.extra.request, principal);
      return true;
    },
    onClose: (ctx, code) => {
      socketLog.closed(ctx.extra.socket, code ?? 1005);
      tokens.delete(ctx.extra.socket);
      quota.releaseSocket(ctx.extra.socket);
    },
    onComplete: (ctx, id) => {
      socketLog.stopped(ctx.extra.socket, id, 'complete');
      quota.release(ctx.extra.socket, id);
    },
    onSubscribe: subscribeChecks(services, schema, { rules, documents, quota, socketLog }),
    // Apollo's formatError does not reach graphql-ws either: mask here the same way.
    onNext: (_ctx, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: mask(result.errors) } : result,
    onError: (ctx, id, _payload, errors) => {
      const masked = mask(errors);
      socketLog.stopped(
        ctx.extra.socket,
        id,
        'error',
        masked.map((e) => e.extensions?.code),
      );
      return masked;
    },
  };
}
