import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { RequestLogRecord } from '../http/request-log.js';
import type { Services } from '../services.js';
import type { TraceContext } from '../turns/trace.js';
import { createLoaders, type Loaders } from './loaders.js';

/** Per request (HTTP) or per operation (WebSocket): a forked entity manager and fresh loaders. */
export interface Context {
  principal: Principal | null;
  em: EntityManager;
  loaders: Loaders;
  services: Services;
  /** The HTTP request's log line, filled by the request-log plugin (absent on graphql-ws). */
  requestLog?: RequestLogRecord;
  /** The request's W3C trace context, validated (absent on graphql-ws). */
  trace?: TraceContext | null;
}

/** The lazily made parts of one context, shared by every shallow copy of it. */
interface LazyParts {
  em: EntityManager | null;
  loaders: Loaders | null;
}

/**
 * The entity manager is forked, and the loaders made, when a resolver first asks for them: the
 * runtime's beginTurn and callTool never do, and both cost more than the rest of the context.
 *
 * Apollo hands resolvers a shallow copy of the context (`Object.assign` onto an object with the
 * same prototype). Getters written on the object itself would be read by that copy, making both
 * on every request; here they live on the prototype, and the copy shares `lazy` by reference, so
 * the original and its copies fork at most once between them. Do not spread a context (that would
 * make both at once): pass `extra` instead.
 */
class RequestContext implements Context {
  readonly requestLog?: RequestLogRecord;
  readonly trace?: TraceContext | null;
  private readonly lazy: LazyParts = { em: null, loaders: null };

  constructor(
    readonly services: Services,
    readonly principal: Principal | null,
    extra: Pick<Context, 'requestLog' | 'trace'>,
  ) {
    this.requestLog = extra.requestLog;
    this.trace = extra.trace;
  }

  get em(): EntityManager {
    this.lazy.em ??= this.services.orm.em.fork();
    return this.lazy.em;
  }

  get loaders(): Loaders {
    this.lazy.loaders ??= createLoaders(this.em);
    return this.lazy.loaders;
  }
}

export function createContext(
  services: Services,
  principal: Principal | null,
  extra: Pick<Context, 'requestLog' | 'trace'> = {},
): Context {
  return new RequestContext(services, principal, extra);
}
