/**
 * `GET /oauth/callback`: where the authorization server sends the operator's browser back. It hands
 * the query to `OAuthService.handleCallback` and answers a small HTML page that says whether the
 * sign-in worked. Every text on the page is escaped; the page loads nothing, is never cached, and
 * sends no referrer (its own address carries the code).
 */
import type { ServerResponse } from 'node:http';
import type { RouteHandler } from '../http/route.js';
import type { Services } from '../services.js';
import { OAUTH_CALLBACK_PATH, type CallbackOutcome } from './callback-outcome.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** HTML-escapes text for element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** The page for an outcome, pure. */
export function renderCallbackPage(
  outcome: Pick<CallbackOutcome, 'ok' | 'title' | 'message' | 'connectionName'>,
): string {
  const heading =
    outcome.connectionName === null ? outcome.title : `${outcome.title}: ${outcome.connectionName}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(outcome.title)}</title>`,
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}' +
      '.ok{color:#14532d}.failed{color:#7f1d1d}</style>',
    '</head>',
    '<body>',
    `<h1 class="${outcome.ok ? 'ok' : 'failed'}">${escapeHtml(heading)}</h1>`,
    `<p>${escapeHtml(outcome.message)}</p>`,
    '<p>You can close this window.</p>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function sendPage(
  res: ServerResponse,
  status: number,
  html: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    ...extra,
  });
  res.end(html);
}

/** The routes of the OAuth module, for `startHttpServer(…, { routes })`. */
export function oauthRoutes(services: Services): Record<string, RouteHandler> {
  return {
    [OAUTH_CALLBACK_PATH]: async (req, res, url) => {
      // Only GET: a HEAD (a link checker, say) must not spend the one-time state.
      if (req.method !== 'GET') {
        const page = renderCallbackPage({
          ok: false,
          title: 'Method not allowed',
          message: 'Open this address with GET.',
          connectionName: null,
        });
        sendPage(res, 405, page, { allow: 'GET' });
        return;
      }
      const outcome = await services.oauth.handleCallback(url.searchParams);
      sendPage(res, outcome.status, renderCallbackPage(outcome));
    },
  };
}
