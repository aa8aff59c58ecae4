/**
 * The explorer: GraphiQL at `GET /graphql` for a browser, served by the service itself from npm
 * packages (graphiql's UMD build with React 18's), nothing from a CDN. The page is static and
 * public, so it is answered before the token check; every query it sends carries the token from
 * its Authorization header, prefilled from the debugger page's sign-in (session storage).
 *
 * Only a GET or HEAD that asks for HTML and carries no `query` parameter gets the page: a GET that
 * names an operation still goes to the token check and to Apollo's CSRF prevention, unchanged.
 * `GRAPHIQL=off` (the default when NODE_ENV=production) mounts none of this.
 */
import { join } from 'node:path';
import { PROJECT_ROOT } from '../project-root.js';
import { DEBUGGER_CSP, file, packageFile, serve } from './debugger-routes.js';
import type { RouteHandler } from './route.js';

const WEB = join(PROJECT_ROOT, 'web', 'explorer');

/**
 * GraphiQL and its editors set style attributes at run time, so styles may be inline; scripts may
 * not (no inline code, no eval), and nothing loads from elsewhere.
 */
export const EXPLORER_CSP = DEBUGGER_CSP.replace(
  "style-src 'self'",
  "style-src 'self' 'unsafe-inline'; font-src 'self' data:",
);

/** Does this request want the explorer page rather than a GraphQL answer? (Pure.) */
export function wantsExplorer(
  method: string | undefined,
  accept: string | undefined,
  search: URLSearchParams,
): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (search.has('query') || search.has('extensions')) return false;
  return /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept ?? '');
}

export interface Explorer {
  /** `GET /graphql` when `wantsExplorer`. */
  page: RouteHandler;
  /** Its assets, under `/graphiql/`. */
  routes: Record<string, RouteHandler>;
}

export function explorer(): Explorer {
  const js = 'text/javascript; charset=utf-8';
  const css = 'text/css; charset=utf-8';
  const asset = (path: string | (() => string), type: string) => serve(file(path, type), EXPLORER_CSP);
  return {
    page: asset(join(WEB, 'index.html'), 'text/html; charset=utf-8'),
    routes: {
      '/graphiql/react.js': asset(packageFile('react', 'umd', 'react.production.min.js'), js),
      '/graphiql/react-dom.js': asset(packageFile('react-dom', 'umd', 'react-dom.production.min.js'), js),
      '/graphiql/graphiql.js': asset(packageFile('graphiql', 'graphiql.min.js'), js),
      '/graphiql/graphiql.css': asset(packageFile('graphiql', 'graphiql.min.css'), css),
      '/graphiql/graphql-ws.js': asset(packageFile('graphql-ws', 'umd', 'graphql-ws.js'), js),
      '/graphiql/explorer.js': asset(join(WEB, 'explorer.js'), js),
      '/graphiql/explorer.css': asset(join(WEB, 'explorer.css'), css),
    },
  };
}
