/**
 * An authorization server is upstream input like any other: the addresses its metadata gives are
 * fetched by the service or shown to a person as "open this in a browser". Any address that is not
 * `https://` (loopback `http://` is allowed in development and tests) is refused, with a code,
 * before beginSignIn returns anything.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BeginSignInDocument } from '../../generated/graphql.js';
import { createMcpConnection, createWorkspace, Role, startLoggedApp, type LoggedApp } from './helpers.js';

interface HostileAs {
  url: string;
  /** The next authorization-server metadata, merged over sane defaults. */
  set(metadata: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** One origin: an MCP endpoint that demands sign-in, its resource metadata, and an authorization server. */
async function startHostileAs(): Promise<HostileAs> {
  let override: Record<string, unknown> = {};
  let origin = '';
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/mcp') {
      req.resume();
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      });
      res.end();
    } else if (path.startsWith('/.well-known/oauth-protected-resource')) {
      json({ resource: `${origin}/mcp`, authorization_servers: [origin] });
    } else if (path.startsWith('/.well-known/oauth-authorization-server')) {
      json({
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        ...override,
      });
    } else if (path === '/register') {
      req.resume();
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: 'hostile-client', redirect_uris: [] }));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    set: (metadata) => {
      override = metadata;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('addresses in authorization-server metadata', () => {
  let t: LoggedApp;
  let as: HostileAs;
  let operator: string;
  let connectionId: string;

  beforeAll(async () => {
    t = await startLoggedApp();
    as = await startHostileAs();
    const admin = await t.token(Role.ADMIN);
    operator = await t.token(Role.OPERATOR);
    const workspaceId = await createWorkspace(t, admin);
    connectionId = (await createMcpConnection(t, operator, workspaceId, as.url)).id;
  });
  afterAll(async () => {
    await t?.stop();
    await as?.close();
  });

  it('should begin a sign-in when every address is allowed (the control)', async () => {
    as.set({});
    const begun = await t.ok(BeginSignInDocument, { input: { connectionId } }, operator);
    expect(begun.beginSignIn.userErrors).toEqual([]);
    expect(begun.beginSignIn.authorizationUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
  });

  it.each([
    ['authorization_endpoint', 'javascript:alert(document.domain)//'],
    ['authorization_endpoint', 'data:text/html,<script>alert(1)</script>'],
    ['authorization_endpoint', 'http://login.example.com/authorize'],
    ['authorization_endpoint', 'https://user:pass@login.example.com/authorize'],
    ['token_endpoint', 'javascript:alert(1)'],
    ['token_endpoint', 'http://10.0.0.5/token'],
    ['registration_endpoint', 'file:///etc/passwd'],
  ])('should refuse %s = %s with ADDRESS_REFUSED and return no URL', async (field, value) => {
    as.set({ [field]: value });
    const result = await t.gql(BeginSignInDocument, { input: { connectionId } }, operator);
    expect(result.errors).toBeUndefined();
    expect(result.data!.beginSignIn.authorizationUrl).toBeNull();
    const [error] = result.data!.beginSignIn.userErrors;
    expect(error?.code).toBe('ADDRESS_REFUSED');
    expect(error?.message).toContain(field);
    expect(result.raw).not.toContain(value);
  });
});
