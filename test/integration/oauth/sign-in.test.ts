/**
 * OAuth sign-in against a real authorization server (oidc-provider) in front of a real MCP server
 * that checks bearer tokens: detection, metadata discovery, dynamic registration, PKCE, resource
 * indicators, the callback, the discovery after it, a call — and that the state is single use and
 * no secret shows anywhere.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../../../src/audit/audit-event.entity.js';
import { Connection } from '../../../src/connections/connection.entity.js';
import { McpClientError } from '../../../src/mcp/client.js';
import { OAuthClient } from '../../../src/oauth/oauth-client.entity.js';
import { OAuthCredential } from '../../../src/oauth/oauth-credential.entity.js';
import { OAuthSignIn } from '../../../src/oauth/oauth-sign-in.entity.js';
import { BeginSignInDocument, OAuthConnectionDocument } from '../../generated/graphql.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { MCP_SCOPE, startOAuthPeer, TEST_ACCOUNT, type OAuthPeer } from '../../support/oauth-server.js';
import {
  callbackOnApp,
  createMcpConnection,
  createWorkspace,
  REDIRECT_URI,
  Role,
  signIn,
  startLoggedApp,
  storedTokens,
  type LoggedApp,
} from './helpers.js';
import { Cleanups } from '../../support/cleanups.js';

let t: LoggedApp;
let peer: OAuthPeer;
let admin: string;
let operator: string;
let workspaceId: string;
const cleanups = new Cleanups();

beforeAll(async () => {
  t = await startLoggedApp();
  peer = await startOAuthPeer();
  admin = await t.token(Role.ADMIN);
  operator = await t.token(Role.OPERATOR, 'operator ada');
  workspaceId = await createWorkspace(t, admin);
});

afterAll(async () => {
  await cleanups.run();
  await t.stop();
  await peer.close();
});

/** Everything secret that passed through a sign-in, to look for where it must not be. */
function secretsOf(values: (string | null | undefined)[]): string[] {
  return values.filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

describe('sign-in, end to end', () => {
  it('should see the 401 at connect time and put the connection in NEEDS_SIGN_IN, not "0 tools"', async () => {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    expect(c.status).toBe('NEEDS_SIGN_IN');
    expect(c.discoveryErrorCode).toBe('AUTH_REQUIRED');
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.operations.nodes).toEqual([]);
  });

  it('should sign in with PKCE S256, resource and scopes, store the tokens sealed, run a discovery, and call a tool', async () => {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    const registrationsBefore = peer.registrations();

    const begun = await t.gql(BeginSignInDocument, { input: { connectionId: c.id } }, operator);
    expect(begun.errors).toBeUndefined();
    expect(begun.data!.beginSignIn.userErrors).toEqual([]);
    const authorizationUrl = new URL(begun.data!.beginSignIn.authorizationUrl!);
    const expiresAt = Date.parse(begun.data!.beginSignIn.expiresAt as string);
    expect(expiresAt - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    // The authorization request (RFC 6749 + 7636 + 8707), at the issuer the metadata named.
    expect(authorizationUrl.origin).toBe(peer.issuer);
    const q = authorizationUrl.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('resource')).toBe(peer.mcpUrl);
    expect(q.get('scope')).toBe(MCP_SCOPE);
    expect(q.get('redirect_uri')).toBe(REDIRECT_URI);
    const state = q.get('state')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A client was registered dynamically (RFC 7591), and its id is the one sent.
    expect(peer.registrations()).toBe(registrationsBefore + 1);
    const em = t.app.services.orm.em.fork();
    const client = await em.findOneOrFail(OAuthClient, { connection: c.uuid });
    expect(q.get('client_id')).toBe(client.clientId);
    expect(client.source).toBe('DYNAMIC');
    expect(client.authMethod).toBe('client_secret_basic');
    expect(client.clientSecret).toMatch(/^v1\./);
    const clientSecret = t.app.services.secrets.open(
      client.clientSecret!,
      `oauth-client:${client.id}:secret`,
    );

    // The pending sign-in keeps a hash of the state and a sealed verifier, bound to the operator.
    const pending = await em.findOneOrFail(OAuthSignIn, { connection: c.uuid });
    expect(pending.stateHash).toBe(createHash('sha256').update(state).digest('hex'));
    expect(pending.codeVerifier).toMatch(/^v1\./);
    expect(pending.actor).toBe('operator ada');
    expect(pending.usedAt).toBeNull();

    // The operator's browser: login and consent at the provider, back to our callback.
    const redirect = await peer.authorize(authorizationUrl.href, REDIRECT_URI);
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('iss')).toBe(peer.issuer);
    const code = redirect.searchParams.get('code')!;
    expect(code.length).toBeGreaterThan(10);
    const page = await fetch(callbackOnApp(t, redirect));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(html).toContain('<h1 class="ok">Signed in: Signed tools');
    expect(html).toContain('Discovery succeeded: 2 new tools.');

    // The code was exchanged with the resource again.
    const exchange = peer.grants.filter((g) => g.grantType === 'authorization_code');
    expect(exchange.at(-1)).toEqual({
      grantType: 'authorization_code',
      ok: true,
      resource: peer.mcpUrl,
      error: null,
    });

    // Stored sealed; the access token is one the provider issued for the MCP resource.
    const { row, accessToken, refreshToken } = await storedTokens(t, c.uuid);
    expect(row.accessToken).toMatch(/^v1\./);
    expect(row.refreshToken).toMatch(/^v1\./);
    expect(row.accessToken).not.toContain(accessToken!);
    expect(row.issuer).toBe(peer.issuer);
    expect(row.resource).toBe(peer.mcpUrl);
    expect(row.scope).toBe(MCP_SCOPE);
    expect(row.signedInBy).toBe('operator ada');
    expect(row.expiresAt!.getTime() - Date.now()).toBeGreaterThan(3500_000);
    const issued = await peer.findAccessToken(accessToken!);
    expect(issued?.aud).toBe(peer.mcpUrl);
    expect(issued?.accountId).toBe(TEST_ACCOUNT);
    expect(refreshToken).toBeTruthy();

    // The connection: OAuth credential, READY after the SIGN_IN discovery, with the server's tools.
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.status).toBe('READY');
    expect(view.connection!.credential).toEqual({ kind: 'OAUTH', headerName: null, last4: null });
    expect(view.connection!.operations.nodes.map((o) => o.name).sort()).toEqual(['echo', 'whoami']);
    expect(view.connection!.discoveryRuns.nodes[0]).toMatchObject({
      trigger: 'SIGN_IN',
      outcome: 'SUCCEEDED',
      errorCode: null,
      added: 2,
      actor: 'operator ada',
    });

    // A call sends the bearer token and works.
    const outcome = await t.app.services.mcp.callTool(
      {
        id: c.uuid,
        url: peer.mcpUrl,
        auth: { kind: 'none' },
        getAuthHeaders: () => t.app.services.oauth.authHeaders(c.uuid),
      },
      'whoami',
      {},
      { risk: 'READ', idempotent: true },
    );
    expect(outcome).toMatchObject({ kind: 'success', content: [{ type: 'text', text: TEST_ACCOUNT }] });
    expect(peer.mcpRequests.at(-1)).toMatchObject({ method: 'tools/call', hadToken: true, authorized: true });

    // The state was spent.
    expect(
      (await t.app.services.orm.em.fork().findOneOrFail(OAuthSignIn, { id: pending.id })).usedAt,
    ).not.toBeNull();

    // Audit: who began and finished the sign-in, and nothing secret.
    const events = await t.app.services.orm.em
      .fork()
      .find(
        AuditEvent,
        { targetId: c.id, action: { $in: ['BEGIN_SIGN_IN', 'SIGN_IN'] } },
        { orderBy: { id: 'asc' } },
      );
    expect(events.map((e) => [e.action, e.actor])).toEqual([
      ['BEGIN_SIGN_IN', 'operator ada'],
      ['SIGN_IN', 'operator ada'],
    ]);

    // No secret in the GraphQL answer, the page, the audit trail or the logs.
    const secrets = secretsOf([accessToken, refreshToken, clientSecret, code, state]);
    const verifier = t.app.services.secrets.open(
      pending.codeVerifier,
      `oauth-sign-in:${pending.stateHash}:verifier`,
    );
    secrets.push(verifier);
    const auditText = JSON.stringify(events.map((e) => [e.before, e.after]));
    const logText = t.logs.join('');
    expect(logText).toContain('oauth sign-in completed');
    for (const secret of secrets) {
      expect(html).not.toContain(secret);
      expect(auditText).not.toContain(secret);
      expect(logText).not.toContain(secret);
    }
    for (const secret of [accessToken!, refreshToken!, clientSecret, code, verifier]) {
      expect(begun.raw).not.toContain(secret);
      expect(JSON.stringify(view)).not.toContain(secret);
    }
  });

  it('should probe the well-known metadata address, path-aware first, when the 401 names none', async () => {
    const quiet = await startOAuthPeer({ advertiseMetadata: false });
    cleanups.push(() => quiet.close());
    const c = await createMcpConnection(t, operator, workspaceId, quiet.mcpUrl);
    expect(c.status).toBe('NEEDS_SIGN_IN');
    const { status, html } = await signIn(t, quiet, c.id, operator);
    expect(status).toBe(200);
    expect(html).toContain('Signed in');
    expect(quiet.metadataRequests).toEqual(['/.well-known/oauth-protected-resource/mcp']);
  });

  it('should use the client id and secret the operator gives when the server offers no registration', async () => {
    const operatorSecret = 'operator-client-secret-0123456789abcdef';
    const fixed = await startOAuthPeer({
      registration: false,
      clients: [
        {
          client_id: 'operator-client',
          client_secret: operatorSecret,
          redirect_uris: [REDIRECT_URI],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      clientAuthMethods: ['client_secret_post', 'none'],
    });
    cleanups.push(() => fixed.close());
    const c = await createMcpConnection(t, operator, workspaceId, fixed.mcpUrl);

    const without = await t.ok(BeginSignInDocument, { input: { connectionId: c.id } }, operator);
    expect(without.beginSignIn.authorizationUrl).toBeNull();
    expect(without.beginSignIn.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'clientId'], code: 'CLIENT_REQUIRED' }),
    ]);
    expect(without.beginSignIn.userErrors[0]!.message).toContain(REDIRECT_URI);

    const begun = await t.gql(
      BeginSignInDocument,
      { input: { connectionId: c.id, clientId: 'operator-client', clientSecret: operatorSecret } },
      operator,
    );
    expect(begun.raw).not.toContain(operatorSecret);
    const url = begun.data!.beginSignIn.authorizationUrl!;
    expect(new URL(url).searchParams.get('client_id')).toBe('operator-client');
    const client = await t.app.services.orm.em
      .fork()
      .findOneOrFail(OAuthClient, { connection: c.uuid, clientId: 'operator-client' });
    expect(client.source).toBe('OPERATOR');
    expect(client.authMethod).toBe('client_secret_post');
    expect(client.clientSecret).toMatch(/^v1\./);
    expect(client.clientSecret).not.toContain(operatorSecret);

    const redirect = await fixed.authorize(url, REDIRECT_URI);
    const page = await fetch(callbackOnApp(t, redirect));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Signed in');
    expect(html).not.toContain(operatorSecret);
    expect(t.logs.join('')).not.toContain(operatorSecret);
    expect(fixed.grants.at(-1)).toMatchObject({ grantType: 'authorization_code', ok: true });
  });
});

describe('a signed-in connection whose endpoint changes', () => {
  it("should not send the old server's token to the new endpoint", async () => {
    const other: SdkServerHandle = await startSdkServer({
      stateful: false,
      json: true,
      tools: [{ name: 'ping' }],
    });
    cleanups.push(() => other.close());
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    expect((await signIn(t, peer, c.id, operator)).status).toBe(200);
    expect(await t.app.services.oauth.authHeaders(c.uuid)).toHaveProperty('authorization');

    await t.app.services.orm.em.fork().nativeUpdate(Connection, { id: c.uuid }, { endpointUrl: other.url });
    await expect(t.app.services.oauth.authHeaders(c.uuid)).rejects.toMatchObject({
      code: 'NEEDS_SIGN_IN',
      message: expect.stringContaining('endpoint changed since its sign-in') as unknown,
    });
    const outcome = await t.app.services.mcp.callTool(
      {
        id: c.uuid,
        url: other.url,
        auth: { kind: 'none' },
        getAuthHeaders: () => t.app.services.oauth.authHeaders(c.uuid),
      },
      'ping',
      {},
      { risk: 'READ', idempotent: true },
    );
    expect(outcome.kind).toBe('auth_required');
    expect(other.requests).toHaveLength(0);
  });
});

describe('the state of the callback', () => {
  /** Begins a sign-in and drives the provider, without calling our callback yet. */
  async function pendingCallback(): Promise<{ connectionId: string; uuid: string; redirect: URL }> {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    const begun = await t.ok(BeginSignInDocument, { input: { connectionId: c.id } }, operator);
    const redirect = await peer.authorize(begun.beginSignIn.authorizationUrl!, REDIRECT_URI);
    return { connectionId: c.id, uuid: c.uuid, redirect };
  }

  async function unchanged(uuid: string, connectionId: string): Promise<void> {
    expect(await t.app.services.orm.em.fork().count(OAuthCredential, { connection: uuid })).toBe(0);
    const view = await t.ok(OAuthConnectionDocument, { id: connectionId }, operator);
    expect(view.connection!.status).toBe('NEEDS_SIGN_IN');
    expect(view.connection!.credential.kind).toBe('NONE');
  }

  it('should refuse a forged state with a clear page and change nothing', async () => {
    const { connectionId, uuid, redirect } = await pendingCallback();
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'Zm9yZ2VkLXN0YXRlLXRoYXQtbm9ib2R5LWV2ZXItaXNzdWVk');
    const grantsBefore = peer.grants.length;
    const page = await fetch(callbackOnApp(t, forged));
    const html = await page.text();
    expect(page.status).toBe(400);
    expect(html).toContain('<h1 class="failed">Sign-in failed</h1>');
    expect(html).toContain('This sign-in is not known here.');
    expect(peer.grants.length).toBe(grantsBefore);
    await unchanged(uuid, connectionId);
  });

  it('should refuse a replayed state, and not exchange the code twice', async () => {
    const { uuid, redirect } = await pendingCallback();
    const first = await fetch(callbackOnApp(t, redirect));
    expect(first.status).toBe(200);
    const { row } = await storedTokens(t, uuid);
    const grantsBefore = peer.grants.length;
    const again = await fetch(callbackOnApp(t, redirect));
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This sign-in link was already used.');
    expect(peer.grants.length).toBe(grantsBefore);
    expect((await storedTokens(t, uuid)).row.version).toBe(row.version);
  });

  it('should refuse two callbacks racing with one state: exactly one proceeds', async () => {
    const { redirect } = await pendingCallback();
    const statuses = await Promise.all(
      [0, 1, 2].map(async () => (await fetch(callbackOnApp(t, redirect))).status),
    );
    expect(statuses.sort()).toEqual([200, 400, 400]);
  });

  it('should refuse an expired state and change nothing', async () => {
    const { connectionId, uuid, redirect } = await pendingCallback();
    const em = t.app.services.orm.em.fork();
    await em.nativeUpdate(OAuthSignIn, { connection: uuid }, { expiresAt: new Date(Date.now() - 1000) });
    const page = await fetch(callbackOnApp(t, redirect));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('This sign-in link expired');
    await unchanged(uuid, connectionId);
  });

  it('should refuse a callback without a state', async () => {
    const page = await fetch(`${t.origin}/oauth/callback?code=abc`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('This address has no valid sign-in state.');
  });

  it('should answer 405 to anything but GET, and leave the state unspent', async () => {
    const { uuid, redirect } = await pendingCallback();
    const post = await fetch(callbackOnApp(t, redirect), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect(
      (await t.app.services.orm.em.fork().findOneOrFail(OAuthSignIn, { connection: uuid })).usedAt,
    ).toBeNull();
  });

  it('should show a refusal by the user, escaped, and change nothing', async () => {
    peer.setDeny(true);
    try {
      const { connectionId, uuid, redirect } = await pendingCallback();
      expect(redirect.searchParams.get('error')).toBe('access_denied');
      const page = await fetch(callbackOnApp(t, redirect));
      expect(page.status).toBe(400);
      expect(await page.text()).toContain('The authorization server did not grant access (access_denied).');
      await unchanged(uuid, connectionId);
    } finally {
      peer.setDeny(false);
    }
  });
});

describe('beginSignIn refusals', () => {
  it('should be for ADMIN and OPERATOR only', async () => {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    const workspaceUuid = Buffer.from(workspaceId, 'base64url').toString('utf8').split(':')[1];
    const customer = await t.token(Role.CUSTOMER, 'customer', workspaceUuid);
    const result = await t.gql(BeginSignInDocument, { input: { connectionId: c.id } }, customer);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('should say when the server does not advertise OAuth', async () => {
    const open: SdkServerHandle = await startSdkServer({
      stateful: false,
      json: true,
      tools: [{ name: 'ping' }],
    });
    cleanups.push(() => open.close());
    const c = await createMcpConnection(t, operator, workspaceId, open.url);
    const result = await t.ok(BeginSignInDocument, { input: { connectionId: c.id } }, operator);
    expect(result.beginSignIn).toEqual({
      authorizationUrl: null,
      expiresAt: null,
      userErrors: [
        {
          field: ['input', 'connectionId'],
          code: 'OAUTH_NOT_ADVERTISED',
          message: `${new URL(open.url).host} does not advertise an OAuth sign-in (no protected-resource metadata was found)`,
        },
      ],
    });
  });

  it('should refuse a malformed client id and a secret without an id', async () => {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    const bad = await t.ok(
      BeginSignInDocument,
      { input: { connectionId: c.id, clientId: 'two\nlines' } },
      operator,
    );
    expect(bad.beginSignIn.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'clientId'], code: 'CLIENT_INVALID' }),
    ]);
    const orphan = await t.ok(
      BeginSignInDocument,
      { input: { connectionId: c.id, clientSecret: 's3cr3t-s3cr3t' } },
      operator,
    );
    expect(orphan.beginSignIn.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'clientId'], code: 'CLIENT_INVALID' }),
    ]);
  });

  it('should report a server with no sign-in as AUTH_REQUIRED to the MCP client until signed in', async () => {
    const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
    await expect(t.app.services.oauth.authHeaders(c.uuid)).rejects.toMatchObject({ code: 'NEEDS_SIGN_IN' });
    const err = await t.app.services.mcp
      .discover({
        id: c.uuid,
        url: peer.mcpUrl,
        auth: { kind: 'none' },
        getAuthHeaders: () => t.app.services.oauth.authHeaders(c.uuid),
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpClientError);
    expect((err as McpClientError).code).toBe('AUTH_REQUIRED');
  });
});

describe('secrets', () => {
  it('should never write a token, a code or a client secret the provider issued to the log or the audit trail', async () => {
    const text = t.logs.join('');
    const audit = JSON.stringify(
      (await t.app.services.orm.em.fork().find(AuditEvent, {})).map((e) => [e.before, e.after]),
    );
    expect(peer.issuedSecrets.length).toBeGreaterThan(10);
    for (const secret of peer.issuedSecrets) {
      expect(text).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
  });
});
