import { ApolloServer, HeaderMap, type HTTPGraphQLRequest } from '@apollo/server';
import { parseTraceContext } from '../turns/trace.js';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import {
  getOperationAST,
  GraphQLError,
  specifiedRules,
  validate,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Role } from '../auth/api-token.entity.js';
import { bearerToken } from '../auth/tokens.js';
import { createContext, type Context } from '../graphql/context.js';
import { unauthenticated } from '../graphql/errors.js';
import { limitRules } from '../graphql/limits.js';
import { pendingMigrations } from '../db/orm.js';
import { BoundedDocuments } from '../graphql/document-limits.js';
import { checkInputStrings } from '../graphql/input-strings.js';
import { SubscriptionQuota, type QuotaRefusal } from '../graphql/subscription-quota.js';
import {
  bodyLimitFor,
  errorBody,
  readBody,
  refuseEarly,
  refuseUnauthenticated,
  wsMessageLimitFor,
} from './edge.js';
import { useWsServer } from './ws-adapter.js';
import type { Services } from '../services.js';
import { wantsExplorer } from './explorer-routes.js';
import { isAppError, PUBLIC_ERROR_CODES } from '../errors.js';
import {
  actorOf,
  addErrorCodes,
  REQUEST_ID_HEADER,
  requestIdOf,
  requestLogPlugin,
  routeOf,
  SocketLog,
  type RequestLogRecord,
} from './request-log.js';

const GRAPHQL_PATH = '/graphql';

/** Extra routes (such as the OAuth callback) mounted by app.ts. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

const PASSTHROUGH_CODES = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'TOO_MANY_SUBSCRIPTIONS',
]);
/** Domain failures (AppError codes) a caller sees as they are: services throw these, not GraphQL errors. */
const PUBLIC_APP_CODES: ReadonlySet<string> = new Set(PUBLIC_ERROR_CODES);
/** Coded failures of a live stream (AppError codes), shown to the subscriber as they are. */
const STREAM_CODES = new Set(['REPLAY_LIMIT_EXCEEDED', 'SUBSCRIBER_TOO_SLOW']);

function tooManySubscriptions(refused: QuotaRefusal, quota: SubscriptionQuota<object>): GraphQLError {
  const message =
    refused === 'PER_SOCKET'
      ? `this socket already has ${quota.perSocket} subscriptions open; complete one first`
      : `this API token already has ${quota.perToken} subscriptions open; complete one first`;
  return new GraphQLError(message, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } });
}
const INPUT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** The start of Apollo's CSRF-prevention refusal, replaced by a message that says what to send. */
const CSRF_BLOCKED = 'This operation has been blocked as a potential Cross-Site Request Forgery';
const CSRF_MESSAGE =
  'GET queries (and POSTs whose content-type is not application/json) need the header "apollo-require-preflight: true" (any non-empty value): a browser cannot send it cross-site without asking first, so another site cannot make your browser run queries';

/**
 * Masks everything that is not one of our coded errors: internal messages (driver text, stack
 * traces, upstream bodies) are logged, never shown.
 */
export function formatErrorFor(services: Pick<Services, 'logger'>) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code as string | undefined;
    if (code && PASSTHROUGH_CODES.has(code)) {
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code },
      };
    }
    if (code && INPUT_CODES.has(code)) {
      return {
        message: formatted.message.startsWith(CSRF_BLOCKED) ? CSRF_MESSAGE : formatted.message,
        locations: formatted.locations,
        extensions: { code: 'BAD_USER_INPUT' },
      };
    }
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (isAppError(original) && PUBLIC_APP_CODES.has(original.code)) {
      return {
        message: original.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: original.code },
      };
    }
    if (isAppError(original) && STREAM_CODES.has(original.code)) {
      return { message: original.message, path: formatted.path, extensions: { code: original.code } };
    }
    services.logger.error({ err: original, path: formatted.path }, 'internal error in a GraphQL request');
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL' } };
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export interface HttpServer {
  server: Server;
  url: string;
  wsUrl: string;
  /** Open graphql-ws sockets and subscriptions (for /metrics). */
  stats(): { sockets: number; subscriptions: number };
  close(): Promise<void>;
}

/** The port is taken, or the address cannot be bound: one line naming the setting to change. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE')
    return new ListenError(
      `port ${port} on ${host} is already in use (another copy of this service?): stop that process or set PORT to a free port (PORT=0 picks any)`,
      { cause: err },
    );
  if (err.code === 'EACCES')
    return new ListenError(
      `not allowed to listen on port ${port} (ports under 1024 need privileges): set PORT`,
      {
        cause: err,
      },
    );
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND')
    return new ListenError(
      `cannot listen on ${host}: no such local address; set HOST (127.0.0.1 or 0.0.0.0)`,
      {
        cause: err,
      },
    );
  return err;
}

export async function startHttpServer(
  services: Services,
  schema: GraphQLSchema,
  options: {
    port: number;
    host: string;
    routes?: Record<string, RouteHandler>;
    /** The explorer page, answered before the token check to a browser's `GET /graphql` (wantsExplorer). */
    explorer?: RouteHandler;
  },
): Promise<HttpServer> {
  const { logger } = services;
  const httpServer = createServer();
  // The port is bound first, before the WebSocketServer is attached: it would re-emit a listen
  // failure as graphql-ws's "Internal error" stack instead of the one line of listenError.
  let onRequest: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  httpServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (onRequest) onRequest(req, res);
    else sendJson(res, 503, { error: 'starting' });
  });
  try {
    await new Promise<void>((resolveListen, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(options.port, options.host, () => {
        httpServer.off('error', reject);
        resolveListen();
      });
    });
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, options.host, options.port);
  }
  const rules = limitRules(services.config.limits);
  const documents = new BoundedDocuments(services.config.limits);
  const apollo = new ApolloServer<Context>({
    schema,
    validationRules: rules,
    // The HTTP handler has bounded the document already (BoundedDocuments); this keeps Apollo's own parse bounded too.
    parseOptions: { maxTokens: services.config.limits.maxTokens },
    formatError: formatErrorFor(services),
    includeStacktraceInErrorResponses: false,
    introspection: true,
    csrfPrevention: true,
    // main.ts owns the signals: it drains HTTP, then closes the database, in that order.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({
        httpServer,
        stopGracePeriodMillis: services.config.shutdownGraceMs,
      }),
      ApolloServerPluginLandingPageDisabled(),
      requestLogPlugin<Context>(),
      {
        // Strings PostgreSQL cannot store are refused once, here, rather than deep in a resolver.
        requestDidStart: () =>
          Promise.resolve({
            didResolveOperation: ({ document, request }) => {
              const bad = checkInputStrings(schema, document, request.variables);
              return bad ? Promise.reject(bad) : Promise.resolve();
            },
          }),
      },
    ],
  });
  await apollo.start();
  const { metrics } = services;

  const wsServer = new WebSocketServer({
    server: httpServer,
    path: GRAPHQL_PATH,
    maxPayload: services.config.limits.maxBodyBytesStaff,
    // A token in the upgrade's Authorization header is checked before the socket opens; without
    // one, connection_init must carry it.
    verifyClient: (info, done) => {
      const header = info.req.headers.authorization;
      if (header === undefined) return done(true);
      void services.auth.authenticate(services.orm.em.fork(), bearerToken(header)).then(
        (principal) =>
          principal
            ? done(true)
            : done(false, 401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer error="invalid_token"' }),
        () => done(false, 503, 'Service Unavailable'),
      );
    },
  });
  const formatError = formatErrorFor(services);
  const mask = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((e) => formatError(e.toJSON(), e));
  /** Open sockets and their tokens, re-checked so that a revoked token loses its socket too. */
  const sockets = new Map<{ close(code: number, reason: string): void }, string>();
  const quota = new SubscriptionQuota<object>(
    services.config.limits.subscriptionsPerToken,
    services.config.limits.subscriptionsPerSocket,
  );
  /** Which token each socket was opened with, so a revocation (NOTIFY) closes its sockets at once. */
  const socketTokens = new Map<{ close(code: number, reason: string): void }, string>();
  const socketLog = new SocketLog(logger);
  const stopRevocations = services.auth.onRevoked((tokenId) => {
    for (const [socket, id] of socketTokens) {
      if (id !== tokenId) continue;
      sockets.delete(socket);
      socketTokens.delete(socket);
      socket.close(4403, 'Forbidden: the API token is no longer valid');
    }
  });
  /** The role of each socket whose connection_init was accepted: its messages get that role's cap. */
  const acceptedRole = new WeakMap<WebSocket, Role>();
  const wsCleanup = useWsServer<
    Record<string, unknown>,
    { principal?: Context['principal']; token?: string }
  >(
    {
      schema,
      onConnect: async (ctx) => {
        const raw =
          ctx.connectionParams?.authorization ??
          ctx.connectionParams?.Authorization ??
          ctx.connectionParams?.token ??
          ctx.extra.request.headers.authorization;
        const token = typeof raw === 'string' ? (bearerToken(raw) ?? raw) : null;
        const principal = await services.auth.authenticate(services.orm.em.fork(), token);
        if (!principal || !token) return false; // closes with 4403 Forbidden
        ctx.extra.principal = principal;
        ctx.extra.token = token;
        sockets.set(ctx.extra.socket, token);
        socketTokens.set(ctx.extra.socket, principal.tokenId);
        acceptedRole.set(ctx.extra.socket, principal.role);
        socketLog.accepted(ctx.extra.socket, ctx.extra.request, principal);
        return true;
      },
      onClose: (ctx, code) => {
        socketLog.closed(ctx.extra.socket, code ?? 1005);
        sockets.delete(ctx.extra.socket);
        quota.releaseSocket(ctx.extra.socket);
        socketTokens.delete(ctx.extra.socket);
      },
      onComplete: (ctx, id) => {
        socketLog.stopped(ctx.extra.socket, id, 'complete');
        quota.release(ctx.extra.socket, id);
      },
      onSubscribe: async (ctx, id, payload) => {
        // The token may have been revoked since the socket opened (cached for 10 s at most).
        const principal = await services.auth.authenticate(services.orm.em.fork(), ctx.extra.token ?? null);
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
        // Apollo's validationRules do not reach graphql-ws: apply the same limits here.
        // Coded as Apollo codes them over HTTP, so that the mask shows them rather than INTERNAL.
        const errors = validate(schema, document, [...specifiedRules, ...rules]).map((e) =>
          e.extensions.code
            ? e
            : new GraphQLError(e.message, {
                nodes: e.nodes,
                extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
              }),
        );
        const bad = errors.length > 0 ? errors : checkInputStrings(schema, document, payload.variables);
        if (bad) {
          if (subscribing) quota.release(ctx.extra.socket, id);
          return Array.isArray(bad) ? bad : [bad];
        }
        socketLog.started(
          ctx.extra.socket,
          id,
          operation?.name?.value,
          operation?.operation === 'subscription',
        );
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: createContext(services, principal),
        };
      },
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
    },
    wsServer,
    {
      // Nothing of an unaccepted socket is parsed past a small cap; then its role's cap (README, "Limits").
      maxMessageBytes: (socket) =>
        wsMessageLimitFor(acceptedRole.get(socket) ?? null, services.config.limits),
      onInternalError: (err) => logger.error({ err }, 'internal error on a graphql-ws socket'),
    },
  );
  // Long-lived subscriptions outlive token checks on subscribe: drop sockets whose token was revoked.
  const revocationSweep = setInterval(() => {
    for (const [socket, token] of sockets) {
      void services.auth.authenticate(services.orm.em.fork(), token).then(
        (principal) => {
          if (!principal) {
            sockets.delete(socket);
            socket.close(4403, 'Forbidden: the API token is no longer valid');
          }
        },
        () => undefined,
      );
    }
  }, services.config.tokenRecheckMs);
  revocationSweep.unref();

  const routes = options.routes ?? {};
  let draining = false;

  onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://internal');
    const record: RequestLogRecord = { reqId: requestIdOf(req) };
    res.setHeader(REQUEST_ID_HEADER, record.reqId);
    // 'close' also covers a caller that went away before the answer was complete.
    res.on('close', () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const status = res.writableFinished ? res.statusCode : 499;
      metrics.httpRequest(routeOf(url.pathname), status, ms);
      // Never the query string: GET queries carry their variables there.
      logger.info({ ...record, method: req.method, path: url.pathname, status, ms }, 'request');
    });
    void handle(req, res, url, record).catch((err: unknown) => {
      logger.error({ err }, 'unhandled error in request');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    record: RequestLogRecord,
  ): Promise<void> {
    if (url.pathname === '/healthz')
      return sendJson(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ok' });
    if (url.pathname === '/readyz') {
      // The embedded cluster's own state first: while it restarts, the pool's answer means nothing.
      const embedded = services.embedded?.state() ?? 'external';
      if (embedded === 'restarting' || embedded === 'failed')
        return sendJson(res, 503, { status: 'not ready', database: embedded });
      try {
        await services.orm.em.getConnection().execute('select 1');
        const pending = await pendingMigrations(services.orm);
        if (pending > 0 || draining)
          return sendJson(res, 503, { status: 'not ready', pendingMigrations: pending, draining });
        return sendJson(res, 200, { status: 'ready' });
      } catch {
        return sendJson(res, 503, { status: 'not ready', database: 'unreachable' });
      }
    }
    const route = routes[url.pathname];
    if (route) return route(req, res, url);
    if (url.pathname !== GRAPHQL_PATH) return sendJson(res, 404, { error: 'not found' });
    // A static page: nothing of the request is executed, and a GET that names a query goes on below.
    if (options.explorer && wantsExplorer(req.method, req.headers.accept, url.searchParams))
      return options.explorer(req, res, url);

    // The token first, from the headers alone: nothing of an unauthenticated request is read or parsed.
    const token = bearerToken(req.headers.authorization);
    const principal = await services.auth.authenticate(services.orm.em.fork(), token);
    if (!principal) {
      addErrorCodes(record, ['UNAUTHENTICATED']);
      return refuseUnauthenticated(req, res, req.headers.authorization !== undefined);
    }
    record.actor = actorOf(principal);
    const limit = bodyLimitFor(principal.role, services.config.limits);
    const body = req.method === 'POST' ? await readBody(req, limit) : '';
    if (body === null) {
      addErrorCodes(record, ['BAD_USER_INPUT']);
      return refuseEarly(req, res, 413, errorBody('BAD_USER_INPUT', `request body over ${limit} bytes`));
    }
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    let parsedBody: unknown = undefined;
    if (body !== '') {
      try {
        parsedBody = JSON.parse(body);
      } catch {
        addErrorCodes(record, ['BAD_USER_INPUT']);
        return sendJson(res, 400, {
          errors: [{ message: 'the request body is not valid JSON', extensions: { code: 'BAD_USER_INPUT' } }],
        });
      }
    }
    // Bound the document before Apollo validates it (its rules are not all linear).
    const query =
      req.method === 'POST'
        ? typeof parsedBody === 'object' && parsedBody !== null && 'query' in parsedBody
          ? parsedBody.query
          : undefined
        : url.searchParams.get('query');
    if (typeof query === 'string') {
      const checked = documents.parse(query);
      if (checked instanceof GraphQLError) {
        const formatted = formatError(checked.toJSON(), checked);
        addErrorCodes(record, [formatted.extensions?.code]);
        return sendJson(res, 400, { errors: [formatted] });
      }
    }
    const httpGraphQLRequest: HTTPGraphQLRequest = {
      method: req.method ?? 'GET',
      headers,
      search: url.search,
      body: parsedBody,
    };
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest,
      context: () =>
        Promise.resolve({
          ...createContext(services, principal),
          requestLog: record,
          trace: parseTraceContext(req.headers.traceparent, req.headers.tracestate),
        }),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  }

  const address = httpServer.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}`;

  let closing: Promise<void> | null = null;
  return {
    server: httpServer,
    url: `${base}${GRAPHQL_PATH}`,
    wsUrl: `ws://${host}:${address.port}${GRAPHQL_PATH}`,
    stats: () => ({ sockets: socketLog.sockets, subscriptions: socketLog.subscriptions }),
    close: () => {
      closing ??= (async () => {
        draining = true;
        for (const client of wsServer.clients) client.close(1001, 'server shutting down');
        clearInterval(revocationSweep);
        stopRevocations();
        await wsCleanup.dispose();
        await new Promise<void>((r) => wsServer.close(() => r()));
        // Apollo's drain plugin stops accepting, lets in-flight requests finish, then closes.
        await apollo.stop();
      })();
      return closing;
    },
  };
}
