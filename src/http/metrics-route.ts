/**
 * `GET /metrics`: Prometheus text format. `METRICS` decides who may read it: `off` (404, as any
 * unknown path), `open` (anyone who can reach the port: put it behind a network boundary), or
 * `token` (the default: an ADMIN or OPERATOR API token, `Authorization: Bearer …`).
 */
import { isStaff } from '../auth/scope.js';
import { bearerToken } from '../auth/tokens.js';
import type { Services } from '../services.js';
import { errorBody, refuseEarly, refuseUnauthenticated } from './edge.js';
import type { RouteHandler } from './route.js';

export const METRICS_PATH = '/metrics';

export function metricsRoutes(services: Services): Record<string, RouteHandler> {
  const access = services.config.metrics;
  if (access === 'off') return {};
  const handler: RouteHandler = async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return refuseEarly(req, res, 405, errorBody('BAD_USER_INPUT', 'use GET /metrics'), {
        allow: 'GET, HEAD',
      });
    }
    if (access === 'token') {
      const principal = await services.auth.authenticate(
        services.orm.em.getConnection(),
        bearerToken(req.headers.authorization),
      );
      if (!principal) return refuseUnauthenticated(req, res, req.headers.authorization !== undefined);
      if (!isStaff(principal.role)) {
        return refuseEarly(
          req,
          res,
          403,
          errorBody('FORBIDDEN', '/metrics needs an ADMIN or OPERATOR token (or METRICS=open)'),
        );
      }
    }
    const { contentType, body } = await services.metrics.render();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  return { [METRICS_PATH]: handler };
}
