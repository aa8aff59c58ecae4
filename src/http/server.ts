/**
 * The HTTP server, assembled: binds the port, then mounts the probe routes (`health-routes.ts`),
 * the routes app.ts gives (OAuth callback, metrics, debugger, explorer assets), the explorer page,
 * GraphQL over HTTP (`graphql-http.ts`) and over WebSocket (`graphql-ws.ts`). Every request gets
 * a request id, a log line and a metric; closing drains sockets, then in-flight requests.
 */
import type { GraphQLSchema } from 'graphql';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BoundedDocuments } from '../graphql/document-limits.js';
import { limitRules } from '../graphql/limits.js';
import type { Services } from '../services.js';
import { wantsExplorer } from './explorer-routes.js';
import { formatErrorFor } from './format-error.js';
import { GRAPHQL_PATH, graphqlHttpHandler, startApollo } from './graphql-http.js';
import { serveGraphqlWs } from './graphql-ws.js';
import { healthRoutes } from './health-routes.js';
import { sendJson } from './json-response.js';
import type { RouteHandler } from './route.js';
import { listen } from './listen.js';
import {
  REQUEST_ID_HEADER,
  requestIdOf,
  requestLineLogger,
  routeOf,
  type RequestLine,
  type RequestLogRecord,
} from './request-log.js';

/** A route under a path prefix; it gets the request's log record to add its actor and codes. */
export type PrefixRouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  record: RequestLogRecord,
) => Promise<void>;

export interface HttpServer {
  server: Server;
  url: string;
  wsUrl: string;
  /** Open graphql-ws sockets and subscriptions (for /metrics). */
  stats(): { sockets: number; subscriptions: number };
  close(): Promise<void>;
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
    /** Routes by path prefix (the MCP endpoint, `/mcp/{assistantId}`), after the exact ones. */
    prefixRoutes?: [prefix: string, handler: PrefixRouteHandler][];
  },
): Promise<HttpServer> {
  const requestLog = requestLineLogger(services.logger);
  const httpServer = createServer();
  // The port is bound first, before the WebSocketServer is attached: it would re-emit a listen
  // failure as graphql-ws's "Internal error" stack instead of the one line of listenError.
  let onRequest: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  httpServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (onRequest) onRequest(req, res);
    else sendJson(res, 503, { error: 'starting' });
  });
  await listen(httpServer, options.port, options.host);

  const rules = limitRules(services.config.limits);
  const formatError = formatErrorFor(services);
  // One cache of bounded documents for both transports: the runtime sends the same few on every call.
  const documents = new BoundedDocuments(services.config.limits);
  const apollo = await startApollo(services, schema, httpServer, { rules, formatError });
  const ws = serveGraphqlWs(services, schema, httpServer, {
    path: GRAPHQL_PATH,
    rules,
    documents,
    formatError,
  });
  const graphql = graphqlHttpHandler(services, apollo, documents, formatError);

  let draining = false;
  // The probes first: no route of app.ts can shadow them.
  const routes = { ...options.routes, ...healthRoutes(services, () => draining) };

  const handle = router(routes, options, graphql);
  onRequest = withRequestLog(services, requestLog, handle);

  const address = httpServer.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}`;

  let closing: Promise<void> | null = null;
  return {
    server: httpServer,
    url: `${base}${GRAPHQL_PATH}`,
    wsUrl: `ws://${host}:${address.port}${GRAPHQL_PATH}`,
    stats: () => ws.stats(),
    close: () => {
      closing ??= (async () => {
        draining = true;
        await ws.close();
        // Apollo's drain plugin stops accepting, lets in-flight requests finish, then closes.
        await apollo.stop();
      })();
      return closing;
    },
  };
}

type Handle = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  record: RequestLogRecord,
) => Promise<void>;

/** Exact routes first, then prefixes, then the explorer page and GraphQL at GRAPHQL_PATH; else 404. */
function router(
  routes: Record<string, RouteHandler>,
  options: { explorer?: RouteHandler; prefixRoutes?: [prefix: string, handler: PrefixRouteHandler][] },
  graphql: Handle,
): Handle {
  return async (req, res, url, record) => {
    const route = routes[url.pathname];
    if (route) return route(req, res, url);
    for (const [prefix, handler] of options.prefixRoutes ?? [])
      if (url.pathname.startsWith(prefix)) return handler(req, res, url, record);
    if (url.pathname !== GRAPHQL_PATH) return sendJson(res, 404, { error: 'not found' });
    // A static page: nothing of the request is executed, and a GET that names a query goes on below.
    if (options.explorer && wantsExplorer(req.method, req.headers.accept, url.searchParams))
      return options.explorer(req, res, url);
    return graphql(req, res, url, record);
  };
}

/**
 * `handle` with a request id (answered in REQUEST_ID_HEADER), a log line and a metric for every
 * request once it closes, and a 500 (never our error's text) for what it throws.
 */
function withRequestLog(
  { logger, metrics }: Pick<Services, 'logger' | 'metrics'>,
  requestLog: ReturnType<typeof requestLineLogger>,
  handle: Handle,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
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
      // The record becomes the line (property by property: V8 on Node 20 takes microseconds over
      // `{ ...record, more }`); nothing reads the record after its request has closed.
      const line = record as RequestLine;
      line.method = req.method;
      line.path = url.pathname;
      line.status = status;
      line.ms = ms;
      requestLog.info(line, 'request');
    });
    void handle(req, res, url, record).catch((err: unknown) => {
      logger.error({ err }, 'unhandled error in request');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };
}
