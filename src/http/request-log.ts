/**
 * One log line per HTTP request (and per graphql-ws subscription start and stop): request id,
 * route, status, duration, the GraphQL operation name, the actor (token id, role and label, never
 * the secret) and the error codes answered. Never the query string, variables or body: GET queries
 * carry their variables in the URL, and arguments are the model's data.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/principal.js';
import type { Logger } from '../logger.js';

export const REQUEST_ID_HEADER = 'x-request-id';
/** A caller's request id is kept when it is 1–128 of these characters; otherwise one is made. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;
/** A GraphQL Name, as logged (longer names are cut). */
const MAX_OPERATION_NAME = 100;

/** The caller's `x-request-id` when it is a sane token, else a new UUID. */
export function requestIdOf(req: Pick<IncomingMessage, 'headers'>): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The routes /metrics counts by; anything else is `other`, so a scanner cannot add series. */
const FIXED_ROUTES = new Set(['/graphql', '/healthz', '/readyz', '/metrics', '/oauth/callback']);

export function routeOf(pathname: string): string {
  if (FIXED_ROUTES.has(pathname)) return pathname;
  if (pathname === '/debugger' || pathname.startsWith('/debugger/')) return '/debugger';
  if (pathname.startsWith('/graphiql/')) return '/graphiql';
  if (pathname.startsWith('/mcp/')) return '/mcp';
  if (pathname.startsWith('/.well-known/oauth-protected-resource/mcp/')) return '/.well-known/oauth-protected-resource/mcp';
  return 'other';
}

/** Who made a request, as logged. */
export interface Actor {
  tokenId: string;
  role: string;
  label: string;
}

export function actorOf(principal: Principal): Actor {
  return { tokenId: principal.tokenId, role: principal.role, label: principal.label };
}

/** Filled while a request runs, written once when it ends. */
export interface RequestLogRecord {
  reqId: string;
  actor?: Actor;
  operation?: string;
  /** `extensions.code` of every error answered, deduplicated, in order. */
  errors?: string[];
}

/** What the request line holds: its record, the method, the path (never the query), status, ms. */
export interface RequestLine extends RequestLogRecord {
  method: string | undefined;
  path: string;
  status: number;
  ms: number;
}

/**
 * The logger of the request line: `logger` without its redaction. The line's fields are fixed
 * ({@link RequestLine}: ids, the actor's token id, role and label, names, codes, numbers), none
 * of which `REDACT_PATHS` names, so redaction never changed it; walking every object of the line
 * under the `*.` paths was the largest cost of writing it, once per request. Anything else is
 * logged through `logger`, redacted.
 */
export function requestLineLogger(logger: Logger): { info(line: RequestLine, msg: 'request'): void } {
  return logger.child({}, { redact: [] });
}

export function addErrorCodes(record: RequestLogRecord, codes: Iterable<unknown>): void {
  for (const code of codes) {
    if (typeof code !== 'string') continue;
    record.errors ??= [];
    if (!record.errors.includes(code)) record.errors.push(code);
  }
}

export function operationNameOf(name: string | null | undefined): string | undefined {
  return name ? name.slice(0, MAX_OPERATION_NAME) : undefined;
}

/**
 * Copies the operation's name and the answered error codes into the request's log record (found
 * on the context as `requestLog`). The name is taken from the parsed document, which only holds
 * GraphQL names, never from the raw request.
 */
export function requestLogPlugin<C extends { requestLog?: RequestLogRecord }>(): ApolloServerPlugin<C> {
  return {
    requestDidStart: ({ contextValue }) => {
      const record = contextValue.requestLog;
      if (!record) return Promise.resolve();
      return Promise.resolve({
        didResolveOperation: ({ operation }) => {
          record.operation = operationNameOf(operation?.name?.value);
          return Promise.resolve();
        },
        willSendResponse: ({ response }) => {
          const errors =
            response.body.kind === 'single'
              ? response.body.singleResult.errors
              : response.body.initialResult.errors;
          if (errors)
            addErrorCodes(
              record,
              errors.map((e) => e.extensions?.code),
            );
          return Promise.resolve();
        },
      });
    },
  };
}

interface OpenOperation {
  operation: string | undefined;
  subscription: boolean;
  started: number;
}

interface SocketState {
  reqId: string;
  actor?: Actor;
  operations: Map<string, OpenOperation>;
}

/**
 * graphql-ws's log lines: a socket's acceptance and close, and each operation's start and stop,
 * under the request id of the socket's upgrade. Also counts what is open, for /metrics.
 */
export class SocketLog {
  readonly #sockets = new Map<object, SocketState>();
  #subscriptions = 0;

  constructor(private readonly logger: { info(obj: object, msg: string): void }) {}

  get sockets(): number {
    return this.#sockets.size;
  }

  get subscriptions(): number {
    return this.#subscriptions;
  }

  accepted(socket: object, request: Pick<IncomingMessage, 'headers'>, principal: Principal): void {
    const state: SocketState = {
      reqId: requestIdOf(request),
      actor: actorOf(principal),
      operations: new Map(),
    };
    this.#sockets.set(socket, state);
    this.logger.info({ reqId: state.reqId, actor: state.actor }, 'websocket accepted');
  }

  started(socket: object, id: string, operation: string | null | undefined, subscription: boolean): void {
    const state = this.#sockets.get(socket);
    if (!state || state.operations.has(id)) return;
    const open = { operation: operationNameOf(operation), subscription, started: performance.now() };
    state.operations.set(id, open);
    if (subscription) this.#subscriptions++;
    this.logger.info(
      { reqId: state.reqId, id, operation: open.operation, actor: state.actor },
      subscription ? 'subscription start' : 'websocket operation start',
    );
  }

  /** Logs and forgets operation `id`; `errors` are the codes it ended with, if any. */
  stopped(socket: object, id: string, reason: string, errors?: Iterable<unknown>): void {
    const state = this.#sockets.get(socket);
    if (!state) return;
    const record: RequestLogRecord = { reqId: state.reqId };
    if (errors) addErrorCodes(record, errors);
    const open = state.operations.get(id);
    if (!open) {
      // Refused before it started (limits, validation, quota): graphql-ws reports it as an error.
      if (record.errors)
        this.logger.info(
          { reqId: state.reqId, id, actor: state.actor, errors: record.errors },
          'websocket operation refused',
        );
      return;
    }
    state.operations.delete(id);
    if (open.subscription) this.#subscriptions--;
    this.logger.info(
      {
        reqId: state.reqId,
        id,
        operation: open.operation,
        actor: state.actor,
        reason,
        ms: Math.round(performance.now() - open.started),
        errors: record.errors,
      },
      open.subscription ? 'subscription stop' : 'websocket operation stop',
    );
  }

  closed(socket: object, code: number): void {
    const state = this.#sockets.get(socket);
    if (!state) return;
    for (const id of [...state.operations.keys()]) this.stopped(socket, id, `socket closed (${code})`);
    this.#sockets.delete(socket);
    this.logger.info({ reqId: state.reqId, actor: state.actor, code }, 'websocket closed');
  }
}
