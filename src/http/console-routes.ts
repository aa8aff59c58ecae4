/**
 * The ops console's page (GET /console, issue 28), served as the debugger's is: plain HTML, CSS
 * and JS from `web/console/`, no build step, under the same strict Content-Security-Policy. The
 * page is public; every number and every action goes through authenticated GraphQL with the token
 * the person signs in with (kept in sessionStorage only), so roles are the API's.
 */
import { join } from 'node:path';
import { PROJECT_ROOT } from '../project-root.js';
import { file, serve } from './debugger-routes.js';
import type { RouteHandler } from './route.js';

const WEB = join(PROJECT_ROOT, 'web', 'console');

export function consoleRoutes(): Record<string, RouteHandler> {
  const html = serve(file(join(WEB, 'index.html'), 'text/html; charset=utf-8'));
  return {
    '/console': html,
    '/console/': html,
    '/console/app.js': serve(file(join(WEB, 'app.js'), 'text/javascript; charset=utf-8')),
    '/console/app.css': serve(file(join(WEB, 'app.css'), 'text/css; charset=utf-8')),
  };
}
