/**
 * The OAuth cases of the MCP conformance suite, against a small peer this file controls (the suite
 * itself needs Node 22 and runs from scripts/conformance.sh):
 * - a 2025-03-26 server without protected-resource metadata: authorization-server metadata at the
 *   MCP server's origin (with an issuer on a path of that origin), else `/authorize`, `/token` and
 *   `/register` at the origin; and an issuer on another origin is refused;
 * - step-up: a 403 `insufficient_scope` ends the sign-in, the call is UNAVAILABLE with nothing
 *   done, and the next sign-in asks for the wider scope;
 * - a pre-registered client with `client_secret_basic` sends its id form-urlencoded as the
 *   WHATWG serializer does (`-` stays `-`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BeginSignInDocument,
  ConnectionOperationsDocument,
  EnableDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawRequest,
} from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';
import { cleanupAfterEach } from '../../support/cleanups.js';

const PUBLIC_URL = 'https://console.example.test';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL } });
});
afterAll(async () => {
  await t.stop();
});
const cleanups = cleanupAfterEach();

interface PeerOptions {
  /** How the authorization server is found: metadata at the origin (issuer `${origin}${issuerPath}`), or none. */
  metadata: 'origin' | 'none' | 'foreign-issuer';
  issuerPath?: string;
  registration?: boolean;
  /** Scopes `tools/call` needs; other methods need none beyond a token. */
  callScopes?: string[];
}

interface Peer {
  url: string;
  authorizeRequests: URLSearchParams[];
  tokenRequests: { authorization: string | undefined; path: string }[];
  registrations: number;
  calls: number;
}

function form(raw: IncomingMessage): URLSearchParams {
  return new URL(raw.url ?? '/', 'http://peer').searchParams;
}

/** One origin: a 2025-03-26-style MCP server that is its own authorization server. */
async function startPeer(options: PeerOptions): Promise<Peer> {
  const { issuerPath = '', registration = true, callScopes = [] } = options;
  const granted = new Map<string, string[]>();
  let lastScope = '';
  let issued = 0;
  const peer: Peer = { url: '', authorizeRequests: [], tokenRequests: [], registrations: 0, calls: 0 };
  const s = await startRawServer((req: RawRequest, res: ServerResponse, raw: IncomingMessage): void => {
    handle(req, res, raw);
  });
  function handle(req: RawRequest, res: ServerResponse, raw: IncomingMessage): unknown {
    const path = new URL(raw.url ?? '/', 'http://peer').pathname;
    const origin = new URL(peer.url).origin;
    if (path === '/.well-known/oauth-authorization-server') {
      if (options.metadata === 'none') return sendJson(res, 404, { error: 'not_found' });
      const issuer =
        options.metadata === 'foreign-issuer' ? 'https://elsewhere.example' : `${origin}${issuerPath}`;
      return sendJson(res, 200, {
        issuer,
        authorization_endpoint: `${origin}${issuerPath}/authorize`,
        token_endpoint: `${origin}${issuerPath}/token`,
        ...(registration ? { registration_endpoint: `${origin}${issuerPath}/register` } : {}),
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    }
    if (path.endsWith('/register')) {
      peer.registrations++;
      return sendJson(res, 201, {
        client_id: 'registered-client',
        client_secret: 'registered-secret-0123456789',
      });
    }
    if (path.endsWith('/authorize')) {
      const q = form(raw);
      peer.authorizeRequests.push(q);
      lastScope = q.get('scope') ?? '';
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', `code-${peer.authorizeRequests.length}`);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (path.endsWith('/token')) {
      peer.tokenRequests.push({ authorization: req.headers.authorization, path });
      const token = `access-${++issued}-abcdefghijkl`;
      granted.set(token, lastScope.split(' ').filter(Boolean));
      return sendJson(res, 200, {
        access_token: token,
        token_type: 'Bearer',
        expires_in: 3600,
        scope: lastScope,
      });
    }
    if (path !== '/mcp') return sendJson(res, 404, {});
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined || !granted.has(bearer)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer' });
      return res.end();
    }
    if (req.httpMethod !== 'POST') {
      res.writeHead(405);
      return res.end();
    }
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult('2025-03-26') });
    if (req.method === 'tools/list') {
      return sendJson(res, 200, {
        jsonrpc: '2.0',
        id: req.id,
        result: {
          tools: [
            { name: 'write_note', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
          ],
        },
      });
    }
    if (req.method === 'tools/call') {
      const has = granted.get(bearer)!;
      if (!callScopes.every((scope) => has.includes(scope))) {
        res.writeHead(403, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="insufficient_scope", scope="${callScopes.join(' ')}"`,
        });
        return res.end(JSON.stringify({ error: 'insufficient_scope' }));
      }
      peer.calls++;
      return sendJson(res, 200, {
        jsonrpc: '2.0',
        id: req.id,
        result: { content: [{ type: 'text', text: 'noted' }] },
      });
    }
    return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'no' } });
  }
  peer.url = s.url; // …/mcp
  cleanups.push(() => s.close());
  return peer;
}

/** beginSignIn, the browser's redirects, and our callback. Returns the callback page's status. */
async function signIn(
  w: World,
  clientId?: string,
  clientSecret?: string,
): Promise<{ status: number; userErrors: unknown[] }> {
  const begun = await t.ok(
    BeginSignInDocument,
    {
      input: { connectionId: w.connectionId, clientId: clientId ?? null, clientSecret: clientSecret ?? null },
    },
    w.operator,
  );
  const url = begun.beginSignIn.authorizationUrl;
  if (!url) return { status: 0, userErrors: begun.beginSignIn.userErrors };
  const redirect = await fetch(url, { redirect: 'manual' });
  const back = new URL(redirect.headers.get('location')!);
  const page = await fetch(`${new URL(t.url).origin}${back.pathname}${back.search}`);
  await page.text();
  return { status: page.status, userErrors: [] };
}

async function enableAll(w: World): Promise<void> {
  const listed = await t.ok(ConnectionOperationsDocument, { id: w.connectionId }, w.admin);
  for (const op of listed.connection!.operations.nodes)
    if (!op.enabled) await t.ok(EnableDocument, { input: { operationId: op.id } }, w.operator);
  await connectTools(t, w);
}

async function status(w: World): Promise<string> {
  return (await t.ok(ConnectionOperationsDocument, { id: w.connectionId }, w.admin)).connection!.status;
}

describe('a 2025-03-26 server without protected-resource metadata', () => {
  it('should read the authorization-server metadata at the origin, even with an issuer on a path of it', async () => {
    const peer = await startPeer({ metadata: 'origin', issuerPath: '/oauth' });
    const w = await buildWorld(t, peer.url, 'Legacy metadata');
    expect(await status(w)).toBe('NEEDS_SIGN_IN');
    expect((await signIn(w)).status).toBe(200);
    expect(peer.registrations).toBe(1);
    const q = peer.authorizeRequests[0]!;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('resource')).toBe(peer.url);
    expect(peer.tokenRequests.map((r) => r.path)).toEqual(['/oauth/token']);
    expect(await status(w)).toBe('READY');
  });

  it('should fall back to /authorize, /token and /register at the origin when there is no metadata', async () => {
    const peer = await startPeer({ metadata: 'none' });
    const w = await buildWorld(t, peer.url, 'Legacy defaults');
    expect((await signIn(w)).status).toBe(200);
    expect(peer.registrations).toBe(1);
    expect(peer.tokenRequests.map((r) => r.path)).toEqual(['/token']);
    await enableAll(w);
    const turn = await begin(t, w);
    const result = await call(t, w, turn.turnId, turn.tools.find((x) => x.name !== 'finish_turn')!.name);
    expect(result).toMatchObject({ ok: true, status: 'SUCCEEDED' });
  });

  it('should refuse metadata at the origin whose issuer is on another origin', async () => {
    const peer = await startPeer({ metadata: 'foreign-issuer' });
    const w = await buildWorld(t, peer.url, 'Legacy foreign');
    // The foreign metadata is not taken: the default endpoints at the origin are used instead.
    expect((await signIn(w)).status).toBe(200);
    expect(peer.tokenRequests.map((r) => r.path)).toEqual(['/token']);
  });
});

describe('step-up: the server demands a wider scope', () => {
  it('should end the sign-in, answer UNAVAILABLE with nothing done, and ask for the wider scope next time', async () => {
    const peer = await startPeer({ metadata: 'origin', callScopes: ['notes:read', 'notes:write'] });
    const w = await buildWorld(t, peer.url, 'Step-up');
    expect((await signIn(w)).status).toBe(200);
    expect(peer.authorizeRequests[0]!.get('scope')).toBeNull();
    await enableAll(w);
    const turn = await begin(t, w);
    const name = turn.tools.find((x) => x.name !== 'finish_turn')!.name;
    const refused = await call(t, w, turn.turnId, name);
    expect(refused).toMatchObject({ ok: false, status: 'UNAVAILABLE' });
    expect(refused.message).toMatch(/wider permission.*Nothing was done/);
    expect(peer.calls).toBe(0);
    expect(await status(w)).toBe('NEEDS_SIGN_IN');

    expect((await signIn(w)).status).toBe(200);
    expect(peer.authorizeRequests[1]!.get('scope')).toBe('notes:read notes:write');
    const again = await begin(t, w, 'conv-2');
    expect(await call(t, w, again.turnId, name)).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(peer.calls).toBe(1);
  });

  it('should ignore a demand past the scope bounds: the 403 stays an upstream error and the sign-in stands', async () => {
    const many = Array.from({ length: 70 }, (_, i) => `scope${i}`);
    const peer = await startPeer({ metadata: 'origin', callScopes: many });
    const w = await buildWorld(t, peer.url, 'Step-up malformed');
    expect((await signIn(w)).status).toBe(200);
    await enableAll(w);
    const turn = await begin(t, w);
    const result = await call(t, w, turn.turnId, turn.tools.find((x) => x.name !== 'finish_turn')!.name);
    expect(result).toMatchObject({ ok: false, status: 'UPSTREAM_ERROR' });
    expect(await status(w)).toBe('READY');
  });
});

describe('a pre-registered client with client_secret_basic', () => {
  it('should send the id and secret form-urlencoded as the WHATWG serializer does', async () => {
    const peer = await startPeer({ metadata: 'origin', registration: false });
    const w = await buildWorld(t, peer.url, 'Pre-registered');
    expect((await signIn(w)).userErrors).toEqual([expect.objectContaining({ code: 'CLIENT_REQUIRED' })]);
    expect((await signIn(w, 'pre-registered.client_1', 'secret:with/slash')).status).toBe(200);
    expect(peer.registrations).toBe(0);
    const basic = peer.tokenRequests[0]!.authorization!;
    expect(Buffer.from(basic.replace(/^Basic /, ''), 'base64').toString('utf8')).toBe(
      'pre-registered.client_1:secret%3Awith%2Fslash',
    );
  });
});
