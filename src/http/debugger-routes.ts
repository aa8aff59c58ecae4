/**
 * The turn debugger's page (GET /debugger), served by the service itself and working offline:
 * plain HTML, CSS and JS from `web/debugger/`, and graphql-ws's browser build from node_modules.
 * The page is public; every piece of data it shows comes through authenticated GraphQL with the
 * token the person signs in with (kept in sessionStorage only).
 *
 * Each route is one fixed file: no path from the request reaches the file system, so there is
 * nothing to traverse. Each file is read once, on its first request.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../project-root.js';
import type { RouteHandler } from './route.js';

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

export interface StaticFile {
  body: Buffer;
  type: string;
}

/**
 * One file, read on its first request and kept (a test app that never serves the page reads
 * nothing). `path` may be a function, so that a package is resolved only then too.
 */
export function file(path: string | (() => string), type: string): () => StaticFile {
  let loaded: StaticFile | null = null;
  return () => (loaded ??= { body: readFileSync(typeof path === 'string' ? path : path()), type });
}

/** One fixed file for GET and HEAD (405 otherwise), under the given Content-Security-Policy. */
export function serve(load: () => StaticFile, csp: string = DEBUGGER_CSP): RouteHandler {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed');
      return Promise.resolve();
    }
    const f = load();
    res.writeHead(200, {
      'content-type': f.type,
      'content-length': f.body.length,
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : f.body);
    return Promise.resolve();
  };
}

/** A file inside an installed npm package, resolved when first asked for. */
export function packageFile(pkg: string, ...path: string[]): () => string {
  return () => join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), ...path);
}

/** The page's routes, to mount next to the others. */
export function debuggerRoutes(): Record<string, RouteHandler> {
  const graphqlWs = packageFile('graphql-ws', 'umd', 'graphql-ws.js');
  const html = serve(file(join(WEB, 'index.html'), 'text/html; charset=utf-8'));
  return {
    '/debugger': html,
    '/debugger/': html,
    '/debugger/app.js': serve(file(join(WEB, 'app.js'), 'text/javascript; charset=utf-8')),
    '/debugger/app.css': serve(file(join(WEB, 'app.css'), 'text/css; charset=utf-8')),
    '/debugger/graphql-ws.js': serve(file(graphqlWs, 'text/javascript; charset=utf-8')),
  };
}
