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

/**
 * The entity manager is forked, and the loaders made, when a resolver first asks for them: the
 * runtime's beginTurn and callTool never do, and both cost more than the rest of the context.
 * Do not spread a context (that would make both at once): pass `extra` instead.
 */
export function createContext(
  services: Services,
  principal: Principal | null,
  extra: Pick<Context, 'requestLog' | 'trace'> = {},
): Context {
  let em: EntityManager | null = null;
  let loaders: Loaders | null = null;
  return {
    principal,
    services,
    ...extra,
    get em(): EntityManager {
      em ??= services.orm.em.fork();
      return em;
    },
    get loaders(): Loaders {
      loaders ??= createLoaders(this.em);
      return loaders;
    },
  };
}
