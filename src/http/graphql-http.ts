/**
 * GraphQL over HTTP (`POST` and `GET /graphql`): the token first, from the headers alone; then the
 * body under its caller's cap; then the document bounded before Apollo validates it; then Apollo.
 * Nothing of an unauthenticated request is read or parsed (`edge.ts`).
 */
import { ApolloServer, HeaderMap, type HTTPGraphQLRequest } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Role } from '../auth/api-token.entity.js';
import { bearerToken } from '../auth/tokens.js';
import { createContext, type Context } from '../graphql/context.js';
import type { BoundedDocuments } from '../graphql/document-limits.js';
import { checkInputStrings } from '../graphql/input-strings.js';
import type { Services } from '../services.js';
import { parseTraceContext } from '../turns/trace.js';
import { bodyLimitFor, errorBody, readBody, refuseEarly, refuseUnauthenticated } from './edge.js';
import type { FormatError } from './format-error.js';
import { sendJson } from './json-response.js';
import { actorOf, addErrorCodes, requestLogPlugin, type RequestLogRecord } from './request-log.js';

/** Where GraphQL is served, over HTTP and WebSocket. */
export const GRAPHQL_PATH = '/graphql';

/**
 * Apollo, started, for `graphqlHttpHandler`. Its drain plugin owns `httpServer`'s shutdown:
 * `apollo.stop()` stops accepting, lets in-flight requests finish, then closes.
 */
export async function startApollo(
  services: Services,
  schema: GraphQLSchema,
  httpServer: Server,
  options: { rules: ValidationRule[]; formatError: FormatError },
): Promise<ApolloServer<Context>> {
  const apollo = new ApolloServer<Context>({
    schema,
    validationRules: options.rules,
    // The HTTP handler has bounded the document already (BoundedDocuments); this keeps Apollo's own parse bounded too.
    parseOptions: { maxTokens: services.config.limits.maxTokens },
    formatError: options.formatError,
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
      // No cache hints exist here: its hook on every resolved field (302 declared tools: over 900
      // fields) only ever concluded `no-store`, which the handler now sets itself.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
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
  return apollo;
}

export type GraphqlHttpHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  record: RequestLogRecord,
) => Promise<void>;

/** Apollo's request from ours: headers joined, the body parsed (undefined when there is none). */
function apolloRequest(req: IncomingMessage, url: URL, body: unknown): HTTPGraphQLRequest {
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  return { method: req.method ?? 'GET', headers, search: url.search, body };
}

/** The query of a request: the body's `query` for a POST, the `query` parameter for a GET. */
function queryOf(method: string | undefined, body: unknown, url: URL): unknown {
  if (method !== 'POST') return url.searchParams.get('query');
  return typeof body === 'object' && body !== null && 'query' in body ? body.query : undefined;
}

export function graphqlHttpHandler(
  services: Services,
  apollo: ApolloServer<Context>,
  documents: BoundedDocuments,
  formatError: FormatError,
): GraphqlHttpHandler {
  return async (req, res, url, record) => {
    // The token first, from the headers alone: nothing of an unauthenticated request is read or parsed.
    const token = bearerToken(req.headers.authorization);
    const principal = await services.auth.authenticate(services.orm.em.getConnection(), token);
    if (!principal) {
      addErrorCodes(record, ['UNAUTHENTICATED']);
      return refuseUnauthenticated(req, res, req.headers.authorization !== undefined);
    }
    record.actor = actorOf(principal);
    if (principal.role === Role.MCP_CLIENT) {
      addErrorCodes(record, ['FORBIDDEN']);
      return refuseEarly(
        req,
        res,
        403,
        errorBody('FORBIDDEN', 'an MCP_CLIENT token lists and calls its assistant\'s tools through /mcp/{assistantId} only'),
      );
    }
    const limit = bodyLimitFor(principal.role, services.config.limits);
    const body = req.method === 'POST' ? await readBody(req, limit) : '';
    if (body === null) {
      addErrorCodes(record, ['BAD_USER_INPUT']);
      return refuseEarly(req, res, 413, errorBody('BAD_USER_INPUT', `request body over ${limit} bytes`));
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
    const query = queryOf(req.method, parsedBody, url);
    if (typeof query === 'string') {
      const checked = documents.parse(query);
      if (checked instanceof GraphQLError) {
        const formatted = formatError(checked.toJSON(), checked);
        addErrorCodes(record, [formatted.extensions?.code]);
        return sendJson(res, 400, { errors: [formatted] });
      }
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: apolloRequest(req, url, parsedBody),
      context: () =>
        Promise.resolve(
          createContext(services, principal, {
            requestLog: record,
            trace: parseTraceContext(req.headers.traceparent, req.headers.tracestate),
          }),
        ),
    });
    // Nothing this API answers may be cached (answers carry customer data).
    res.setHeader('cache-control', 'no-store');
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };
}
