/**
 * Token use and renewal against a real authorization server (oidc-provider, rotating refresh
 * tokens): renewal before expiry with `resource`, rotation stored, one refresh for many concurrent
 * callers (in one process and across two), the background sweep, a revoked refresh token, and a
 * token endpoint that is down for a moment.
 *
 * "Later" is simulated with a second OAuthService over the same services whose clock runs ahead,
 * except in the first test, which waits for a short-lived token for real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../support/wait.js';
import { AuditEvent } from '../../../src/audit/audit-event.entity.js';
import type { McpEndpoint } from '../../../src/mcp/client.js';
import { OAuthService, type OAuthServiceOptions } from '../../../src/oauth/oauth.service.js';
import { OAuthConnectionDocument, ViewerDocument } from '../../generated/graphql.js';
import { startOAuthPeer, TEST_ACCOUNT, type OAuthPeer } from '../../support/oauth-server.js';
import {
  createMcpConnection,
  createWorkspace,
  Role,
  signIn,
  startLoggedApp,
  storedTokens,
  type LoggedApp,
} from './helpers.js';
import { mcpEndpoint } from '../../support/mcp-client.js';

const HOUR_MS = 3_600_000;

let t: LoggedApp;
let peer: OAuthPeer;
let admin: string;
let operator: string;
let workspaceId: string;

beforeAll(async () => {
  t = await startLoggedApp();
  // The app's own sweep would renew tokens of these tests behind their back: it is tested here
  // with instances of our own instead.
  await t.app.services.oauth.stopSweep();
  peer = await startOAuthPeer();
  admin = await t.token(Role.ADMIN);
  operator = await t.token(Role.OPERATOR, 'operator grace');
  workspaceId = await createWorkspace(t, admin);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

/** A connection to the peer, signed in. */
async function signedIn(): Promise<{ id: string; uuid: string }> {
  const c = await createMcpConnection(t, operator, workspaceId, peer.mcpUrl);
  const page = await signIn(t, peer, c.id, operator);
  expect(page.status).toBe(200);
  return c;
}

/** Another instance of the service (another process, as far as renewal goes) whose clock is `aheadMs` ahead. */
function later(aheadMs: number, options: OAuthServiceOptions = {}): OAuthService {
  return new OAuthService(t.app.services, t.app.services.discovery, {
    now: () => Date.now() + aheadMs,
    ...options,
  });
}

function endpoint(uuid: string, oauth: OAuthService): McpEndpoint {
  return mcpEndpoint(peer.mcpUrl, { id: uuid, getAuthHeaders: () => oauth.authHeaders(uuid) });
}

const refreshes = (): number => peer.grants.filter((g) => g.grantType === 'refresh_token').length;

describe('renewal', () => {
  it('should renew a short-lived token before it is used within 60 s of expiry, with resource, storing the rotated refresh token', async () => {
    peer.setAccessTokenTtl(64);
    try {
      const c = await signedIn();
      const first = await storedTokens(t, c.uuid);
      const hits = peer.tokenHits();
      // 64 s left: used as it is.
      expect(await t.app.services.oauth.authHeaders(c.uuid)).toEqual({
        authorization: `Bearer ${first.accessToken}`,
      });
      expect(peer.tokenHits()).toBe(hits);

      // Fewer than 60 s left, on an injected clock (no waiting): an instance whose clock is there.
      const ahead = first.row.expiresAt!.getTime() - 60_000 - Date.now() + 250;
      const headers = await later(Math.max(ahead, 0)).authHeaders(c.uuid);
      expect(peer.tokenHits()).toBe(hits + 1);
      expect(peer.grants.at(-1)).toEqual({
        grantType: 'refresh_token',
        ok: true,
        resource: peer.mcpUrl,
        error: null,
      });

      const second = await storedTokens(t, c.uuid);
      expect(headers).toEqual({ authorization: `Bearer ${second.accessToken}` });
      expect(second.accessToken).not.toBe(first.accessToken);
      expect(second.refreshToken).not.toBe(first.refreshToken); // rotated, and the new one stored
      expect(second.row.version).toBe(first.row.version + 1);
      expect(second.row.refreshedAt).not.toBeNull();
      expect(second.row.expiresAt!.getTime()).toBeGreaterThan(first.row.expiresAt!.getTime());

      // The new token works at the MCP server.
      const outcome = await t.app.services.mcp.callTool(
        endpoint(c.uuid, t.app.services.oauth),
        'whoami',
        {},
        { risk: 'READ', idempotent: true },
      );
      expect(outcome).toMatchObject({ kind: 'success', content: [{ type: 'text', text: TEST_ACCOUNT }] });

      // The stored refresh token is the live one: it renews again (the spent one would revoke the grant).
      await later(10_000).authHeaders(c.uuid);
      expect(peer.grants.at(-1)).toMatchObject({ grantType: 'refresh_token', ok: true });
      // Short-lived tokens must not outlive this test: another app's sweep would renew them.
      await t.app.services.oauth.markNeedsSignIn(c.uuid);
    } finally {
      peer.setAccessTokenTtl(3600);
    }
  });

  it('should cause exactly one refresh for 10 concurrent calls at expiry', async () => {
    const c = await signedIn();
    const before = await storedTokens(t, c.uuid);
    const late = later(HOUR_MS - 30_000);
    const hits = peer.tokenHits();
    const grants = refreshes();
    const mcpBefore = peer.mcpRequests.length;

    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.app.services.mcp.callTool(
          endpoint(c.uuid, late),
          'echo',
          { text: `call ${i}` },
          { risk: 'READ', idempotent: true },
        ),
      ),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(Array(10).fill('success'));
    expect(peer.tokenHits() - hits).toBe(1);
    expect(refreshes() - grants).toBe(1);
    const after = await storedTokens(t, c.uuid);
    expect(after.row.version).toBe(before.row.version + 1);
    // Every call went out with the renewed token, and the server took it.
    const calls = peer.mcpRequests.slice(mcpBefore).filter((r) => r.method === 'tools/call');
    expect(calls).toHaveLength(10);
    expect(calls.every((r) => r.authorized)).toBe(true);
  });

  it('should cause exactly one refresh when two instances renew the same connection at once', async () => {
    const c = await signedIn();
    const a = later(HOUR_MS - 30_000);
    const b = later(HOUR_MS - 30_000);
    const hits = peer.tokenHits();
    const headers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).authHeaders(c.uuid)),
    );
    expect(peer.tokenHits() - hits).toBe(1);
    expect(new Set(headers.map((h) => h.authorization)).size).toBe(1);
    const { accessToken } = await storedTokens(t, c.uuid);
    expect(headers[0]).toEqual({ authorization: `Bearer ${accessToken}` });
  });

  it('should renew tokens about to expire in the background, so that an idle connection works on its next call', async () => {
    const c = await signedIn();
    const before = await storedTokens(t, c.uuid);
    const sweeper = later(HOUR_MS - 90_000, { sweepIntervalMs: 50 });
    sweeper.startSweep();
    try {
      await waitUntil(async () => (await storedTokens(t, c.uuid)).row.version !== before.row.version, 50);
    } finally {
      await sweeper.stopSweep();
    }
    const after = await storedTokens(t, c.uuid);
    expect(after.row.version).toBeGreaterThan(before.row.version);
    expect(after.accessToken).not.toBe(before.accessToken);
    // No call was made, and the next one needs no renewal: the token is fresh for this clock too.
    const hits = peer.tokenHits();
    const outcome = await t.app.services.mcp.callTool(
      endpoint(c.uuid, t.app.services.oauth),
      'whoami',
      {},
      { risk: 'READ', idempotent: true },
    );
    expect(outcome.kind).toBe('success');
    expect(peer.tokenHits()).toBe(hits);
  });

  it('should report what one sweep renewed', async () => {
    const c = await signedIn();
    const result = await later(HOUR_MS - 90_000).sweepOnce();
    // Other test files share the database (with other keys): only this connection is certain.
    expect(result.renewed).toBeGreaterThanOrEqual(1);
    expect((await storedTokens(t, c.uuid)).row.refreshedAt).not.toBeNull();
  });
});

describe('the end of a sign-in', () => {
  it('should set NEEDS_SIGN_IN, without crashing, when the refresh token was revoked', async () => {
    const c = await signedIn();
    const { refreshToken } = await storedTokens(t, c.uuid);
    expect(await peer.revokeRefreshToken(refreshToken!)).toBe(true);
    const late = later(HOUR_MS - 30_000);

    await expect(late.authHeaders(c.uuid)).rejects.toMatchObject({
      name: 'OAuthError',
      code: 'NEEDS_SIGN_IN',
    });
    expect(peer.grants.at(-1)).toMatchObject({
      grantType: 'refresh_token',
      ok: false,
      error: 'invalid_grant',
    });

    // The operator sees it on the connection; the tokens are gone; the audit trail says why.
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.status).toBe('NEEDS_SIGN_IN');
    expect(view.connection!.credential.kind).toBe('OAUTH');
    const after = await storedTokens(t, c.uuid);
    expect(after.row.accessToken).toBeNull();
    expect(after.row.refreshToken).toBeNull();
    const ended = await t.app.services.orm.em
      .fork()
      .findOneOrFail(AuditEvent, { targetId: c.id, action: 'SIGN_IN_ENDED' });
    expect(ended.after).toEqual({ reason: 'renewal refused: invalid_grant' });

    // Calls get a clear "needs sign-in" result, and the token endpoint is not asked again.
    const hits = peer.tokenHits();
    const outcome = await t.app.services.mcp.callTool(
      endpoint(c.uuid, late),
      'whoami',
      {},
      { risk: 'READ', idempotent: true },
    );
    expect(outcome).toMatchObject({ kind: 'auth_required' });
    await expect(t.app.services.oauth.authHeaders(c.uuid)).rejects.toMatchObject({ code: 'NEEDS_SIGN_IN' });
    expect(peer.tokenHits()).toBe(hits);
    // The app is fine.
    expect((await t.ok(ViewerDocument, {}, operator)).viewer.role).toBe('OPERATOR');

    // Signing in again brings it back.
    const page = await signIn(t, peer, c.id, operator);
    expect(page.status).toBe(200);
    const back = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(back.connection!.status).toBe('READY');
  });

  it('should renew at once after a 401, once for all who saw the same token, and hand newer headers to late callers', async () => {
    const c = await signedIn();
    const { oauth } = t.app.services;
    const rejected = await oauth.authHeaders(c.uuid);
    const hits = peer.tokenHits();
    const renewed = await Promise.all([0, 1, 2].map(() => oauth.renewAfterRejection(c.uuid, rejected)));
    expect(peer.tokenHits() - hits).toBe(1);
    expect(new Set(renewed.map((h) => h.authorization)).size).toBe(1);
    expect(renewed[0]).not.toEqual(rejected);
    // Someone still holding the old headers gets the new ones, without another renewal.
    expect(await oauth.renewAfterRejection(c.uuid, rejected)).toEqual(renewed[0]);
    expect(peer.tokenHits() - hits).toBe(1);
    const outcome = await t.app.services.mcp.callTool(
      endpoint(c.uuid, oauth),
      'whoami',
      {},
      { risk: 'READ', idempotent: true },
    );
    expect(outcome.kind).toBe('success');
  });

  it('should end the sign-in on markNeedsSignIn (a 401 after a renewal)', async () => {
    const c = await signedIn();
    await t.app.services.oauth.markNeedsSignIn(c.uuid);
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.status).toBe('NEEDS_SIGN_IN');
    expect((await storedTokens(t, c.uuid)).row.accessToken).toBeNull();
    await expect(t.app.services.oauth.authHeaders(c.uuid)).rejects.toMatchObject({ code: 'NEEDS_SIGN_IN' });
  });

  it('should keep the sign-in when the token endpoint is down for a moment, using the still-valid token', async () => {
    const c = await signedIn();
    const before = await storedTokens(t, c.uuid);
    const late = later(HOUR_MS - 30_000);
    peer.setTokenEndpointDown(true);
    try {
      expect(await late.authHeaders(c.uuid)).toEqual({ authorization: `Bearer ${before.accessToken}` });
    } finally {
      peer.setTokenEndpointDown(false);
    }
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.status).toBe('READY');
    expect((await storedTokens(t, c.uuid)).row.version).toBe(before.row.version);
    // Once it is back, the renewal goes through.
    const headers = await late.authHeaders(c.uuid);
    expect(headers.authorization).not.toBe(`Bearer ${before.accessToken}`);
    expect(peer.grants.at(-1)).toMatchObject({ grantType: 'refresh_token', ok: true });
  });

  it('should not be usable once the token endpoint stays down past the expiry, and still keep the sign-in', async () => {
    const c = await signedIn();
    const late = later(HOUR_MS + 60_000);
    peer.setTokenEndpointDown(true);
    try {
      await expect(late.authHeaders(c.uuid)).rejects.toMatchObject({ code: 'TOKEN_ENDPOINT_UNAVAILABLE' });
    } finally {
      peer.setTokenEndpointDown(false);
    }
    const view = await t.ok(OAuthConnectionDocument, { id: c.id }, operator);
    expect(view.connection!.status).toBe('READY');
    expect((await late.authHeaders(c.uuid)).authorization).toMatch(/^Bearer /);
  });

  it('should never write a token, a code or a client secret to the log or the audit trail', async () => {
    const text = t.logs.join('');
    expect(text).toContain('oauth token renewed');
    expect(text).toContain('oauth token renewal refused');
    const audit = JSON.stringify(
      (
        await t.app.services.orm.em
          .fork()
          .find(AuditEvent, { actor: { $in: ['operator grace', 'oauth renewal'] } })
      ).map((e) => [e.before, e.after]),
    );
    expect(audit).toContain('renewal refused: invalid_grant');
    expect(peer.issuedSecrets.length).toBeGreaterThan(20);
    for (const secret of peer.issuedSecrets) {
      expect(text).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
  });
});
