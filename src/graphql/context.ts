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

export function createContext(services: Services, principal: Principal | null): Context {
  const em = services.orm.em.fork();
  return { principal, em, loaders: createLoaders(em), services };
}
