/**
 * `GET /healthz` (is the process alive and not draining) and `GET /readyz` (may it take traffic:
 * the database answers, no migration is pending, not draining). The rules are `liveness` and
 * `readiness`, pure; the routes ask the database and the embedded cluster.
 */
import { pendingMigrations } from '../db/orm.js';
import type { Services } from '../services.js';
import { sendJson } from './json-response.js';
import type { RouteHandler } from './route.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** An answer of a probe route: status and JSON body. */
export interface ProbeAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** What `/readyz` found out about the database. */
export type DatabaseProbe =
  /** The embedded cluster is restarting or gave up: the pool's answer would mean nothing. */
  | { state: 'restarting' | 'failed' }
  /** `select 1` or the migration check failed. */
  | { state: 'unreachable' }
  | { state: 'up'; pendingMigrations: number };

export function liveness(draining: boolean): ProbeAnswer {
  return draining ? { status: 503, body: { status: 'draining' } } : { status: 200, body: { status: 'ok' } };
}

export function readiness(database: DatabaseProbe, draining: boolean): ProbeAnswer {
  switch (database.state) {
    case 'restarting':
    case 'failed':
      return { status: 503, body: { status: 'not ready', database: database.state } };
    case 'unreachable':
      return { status: 503, body: { status: 'not ready', database: 'unreachable' } };
    case 'up':
      if (database.pendingMigrations > 0 || draining)
        return {
          status: 503,
          body: { status: 'not ready', pendingMigrations: database.pendingMigrations, draining },
        };
      return { status: 200, body: { status: 'ready' } };
  }
}

async function probeDatabase(services: Pick<Services, 'orm' | 'embedded'>): Promise<DatabaseProbe> {
  // The embedded cluster's own state first: while it restarts, the pool's answer means nothing.
  const embedded = services.embedded?.state() ?? 'external';
  if (embedded === 'restarting' || embedded === 'failed') return { state: embedded };
  try {
    await services.orm.em.getConnection().execute('select 1');
    return { state: 'up', pendingMigrations: await pendingMigrations(services.orm) };
  } catch {
    return { state: 'unreachable' };
  }
}

/** The probe routes; `draining` says whether the server has begun to close. */
export function healthRoutes(
  services: Pick<Services, 'orm' | 'embedded'>,
  draining: () => boolean,
): Record<string, RouteHandler> {
  const answer = (res: Parameters<RouteHandler>[1], { status, body }: ProbeAnswer): void =>
    sendJson(res, status, body);
  return {
    [HEALTH_PATH]: (_req, res) => {
      answer(res, liveness(draining()));
      return Promise.resolve();
    },
    [READY_PATH]: async (_req, res) => {
      const database = await probeDatabase(services);
      answer(res, readiness(database, draining()));
    },
  };
}
