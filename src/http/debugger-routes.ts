/**
 * The turn debugger's page (GET /debugger), served by the service itself and working offline:
 * plain HTML, CSS and JS from `web/debugger/`, and graphql-ws's browser build from node_modules.
 * The page is public; every piece of data it shows comes through authenticated GraphQL with the
 * token the person signs in with (kept in sessionStorage only).
 *
 * Each route is one fixed file: no path from the request reaches the file system, so there is
 * nothing to traverse. Files are read once, at start.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../project-root.js';
import type { RouteHandler } from './server.js';

const WEB = join(PROJECT_ROOT, 'web', 'debugger');

/** Strict: only this origin's scripts, styles and sockets; no inline code, no framing. */
export const DEBUGGER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface StaticFile {
  body: Buffer;
  type: string;
}

function file(path: string, type: string): StaticFile {
  return { body: readFileSync(path), type };
}

function serve(f: StaticFile): RouteHandler {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed');
      return Promise.resolve();
    }
    res.writeHead(200, {
      'content-type': f.type,
      'content-length': f.body.length,
      'content-security-policy': DEBUGGER_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : f.body);
    return Promise.resolve();
  };
}

/** The page's routes, to mount next to the others. */
export function debuggerRoutes(): Record<string, RouteHandler> {
  const require = createRequire(import.meta.url);
  const graphqlWs = join(dirname(require.resolve('graphql-ws/package.json')), 'umd', 'graphql-ws.js');
  const html = serve(file(join(WEB, 'index.html'), 'text/html; charset=utf-8'));
  return {
    '/debugger': html,
    '/debugger/': html,
    '/debugger/app.js': serve(file(join(WEB, 'app.js'), 'text/javascript; charset=utf-8')),
    '/debugger/app.css': serve(file(join(WEB, 'app.css'), 'text/css; charset=utf-8')),
    '/debugger/graphql-ws.js': serve(file(graphqlWs, 'text/javascript; charset=utf-8')),
  };
}
