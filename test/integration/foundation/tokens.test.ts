/**
 * API tokens through the API: an ADMIN creates (secret shown once), lists and revokes them, with an
 * optional expiry; a revocation holds on every instance within a second, open WebSockets included.
 */
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import {
  ApiTokensDocument,
  CreateApiTokenDocument,
  CreateWorkspaceDocument,
  RevokeApiTokenDocument,
  ViewerDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { wsClient } from '../../support/subscriptions.js';

let A: TestApp;
let B: TestApp;
let admin: string;
let workspaceId: string;

beforeAll(async () => {
  A = await startTestApp();
  B = await startTestApp();
  admin = await A.token(Role.ADMIN, null, 'token admin');
  workspaceId = (await A.ok(CreateWorkspaceDocument, { input: { name: 'Tokens' } }, admin)).createWorkspace
    .workspace!.id;
});

afterAll(async () => {
  await A.stop();
  await B.stop();
});

async function status(t: TestApp, token: string): Promise<number> {
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ viewer { role } }' }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function create(input: {
  role: Role;
  label: string;
  workspaceId?: string | null;
  expiresAt?: string | null;
}) {
  return (await A.ok(CreateApiTokenDocument, { input }, admin)).createApiToken;
}

/** A socket kept open with a live subscription; resolves `closed` with the close code and reason. */
function openSocket(
  t: TestApp,
  token: string,
): { client: Client; closed: Promise<{ code: number; reason: string }> } {
  const client = wsClient(t.wsUrl, token, {
    // The close is what the tests wait for; not an error to print.
    onNonLazyError: () => undefined,
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    client.on('closed', (event) => {
      const e = event as { code: number; reason: string };
      resolve({ code: e.code, reason: e.reason });
    });
  });
  return { client, closed };
}

describe('tokens in the API', () => {
  it('should create a token, show its secret once, and list it without the secret', async () => {
    const made = await create({ role: Role.CUSTOMER, label: 'acme dashboard', workspaceId });
    expect(made.userErrors).toEqual([]);
    expect(made.secret).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    expect(made.apiToken).toMatchObject({
      label: 'acme dashboard',
      role: 'CUSTOMER',
      workspace: { id: workspaceId },
      expiresAt: null,
      createdBy: 'token admin',
      active: true,
    });
    const viewer = await B.ok(ViewerDocument, {}, made.secret);
    expect(viewer.viewer).toMatchObject({ role: 'CUSTOMER', label: 'acme dashboard' });

    // The test's own workspace: the token list of the whole database is not this test's.
    const listed = await A.gql(ApiTokensDocument, { first: 100, workspaceId }, admin);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(made.secret!);
    const row = listed.data!.apiTokens.nodes.find((n) => n.id === made.apiToken!.id);
    expect(row).toMatchObject({ label: 'acme dashboard', revokedAt: null, active: true });
    expect(row!.lastUsedAt).not.toBeNull();
    const byWorkspace = await A.ok(ApiTokensDocument, { workspaceId, role: Role.CUSTOMER }, admin);
    expect(byWorkspace.apiTokens.nodes.map((n) => n.id)).toEqual([made.apiToken!.id]);
  });

  it.each([
    [
      'a CUSTOMER token without a workspace',
      { role: Role.CUSTOMER, label: 'x' },
      'workspaceId',
      'WORKSPACE_REQUIRED',
    ],
    [
      'an OPERATOR token bound to a workspace',
      { role: Role.OPERATOR, label: 'x', bound: true },
      'workspaceId',
      'WORKSPACE_NOT_ALLOWED',
    ],
    ['an empty label', { role: Role.RUNTIME, label: '  ' }, 'label', 'REQUIRED'],
    [
      'an expiry in the past',
      { role: Role.RUNTIME, label: 'x', expiresAt: '2020-01-01T00:00:00Z' },
      'expiresAt',
      'EXPIRY_IN_PAST',
    ],
  ])('should refuse %s with a user error', async (_what, input, field, code) => {
    const { bound, ...rest } = input as typeof input & { bound?: boolean };
    const made = await create({ ...rest, workspaceId: bound ? workspaceId : null });
    expect(made.secret).toBeNull();
    expect(made.apiToken).toBeNull();
    expect(made.userErrors).toEqual([expect.objectContaining({ field: ['input', field], code })]);
  });

  it('should keep tokens to ADMIN: an OPERATOR can neither list, create nor revoke them', async () => {
    const operator = await A.token(Role.OPERATOR);
    const list = await A.gql(ApiTokensDocument, {}, operator);
    expect(list.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const made = await A.gql(
      CreateApiTokenDocument,
      { input: { role: Role.ADMIN, label: 'sneaky' } },
      operator,
    );
    expect(made.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const own = await create({ role: Role.RUNTIME, label: 'target' });
    const revoke = await A.gql(RevokeApiTokenDocument, { input: { id: own.apiToken!.id } }, operator);
    expect(revoke.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await status(A, own.secret!)).toBe(200);
  });

  // Time does not pass here: the expiry is moved into the past in the database, whose clock
  // decides. The lookup cache's own clock (an entry never outlives the token) is tested on an
  // injected clock in test/unit/auth/auth-cache.test.ts.
  it('should refuse a token once it expires', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const made = await create({ role: Role.CUSTOMER, label: 'short-lived', workspaceId, expiresAt });
    expect(made.apiToken!.expiresAt).toBe(expiresAt);
    // Never looked up on B before it expires, so B's cache holds nothing of it.
    expect(await status(A, made.secret!)).toBe(200);
    await A.app.services.orm.em
      .fork()
      .getConnection()
      .execute(`update api_token set expires_at = now() - interval '1 millisecond' where id = ?`, [
        rawId(made.apiToken!.id),
      ]);
    expect(await status(B, made.secret!)).toBe(401);
    const listed = await A.ok(ApiTokensDocument, { first: 100, workspaceId }, admin);
    expect(listed.apiTokens.nodes.find((n) => n.id === made.apiToken!.id)).toMatchObject({ active: false });
  });

  it('should revoke a token on the other instance at once (its NOTIFY), closing its open sockets', async () => {
    const made = await create({ role: Role.OPERATOR, label: 'to revoke' });
    const secret = made.secret!;
    // B has the token cached, and a socket open with a live subscription.
    expect(await status(B, secret)).toBe(200);
    const { client, closed } = openSocket(B, secret);
    await new Promise<void>((resolve) => client.on('connected', () => resolve()));
    client.subscribe(
      { query: 'subscription { turnEvents { seq } }' },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    // B hears the revocation (A's NOTIFY), not a clock: its cache (10 s) and its socket
    // re-check (15 s) are far from due, so without the NOTIFY B would still answer 200.
    const heard = new Promise<void>((resolve) => {
      const stop = B.app.services.auth.onRevoked((tokenId) => {
        if (tokenId !== rawId(made.apiToken!.id)) return;
        stop();
        resolve();
      });
    });
    try {
      const revoked = await A.ok(RevokeApiTokenDocument, { input: { id: made.apiToken!.id } }, admin);
      expect(revoked.revokeApiToken.apiToken).toMatchObject({ revokedBy: 'token admin', active: false });
      // The revoking instance refuses it at once.
      expect(await status(A, secret)).toBe(401);
      await heard;
      expect(await status(B, secret)).toBe(401);
      expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: the API token is no longer valid' });
      // A new socket with it is refused at connect.
      const again = openSocket(B, secret);
      expect((await again.closed).code).toBe(4403);
      await again.client.dispose();
    } finally {
      await client.dispose();
    }
  });

  it('should close an open socket once its token expires, by the periodic re-check alone', async () => {
    // Expiry sends no NOTIFY: only the periodic re-check (here every 20 ms) can close the socket.
    const C = await startTestApp({ env: { TOKEN_RECHECK_MS: '20' } });
    try {
      const later = new Date(Date.now() + 3_600_000).toISOString();
      const made = await create({ role: Role.OPERATOR, label: 'expiring socket', expiresAt: later });
      const { client, closed } = openSocket(C, made.secret!);
      await new Promise<void>((resolve) => client.on('connected', () => resolve()));
      // The token expires: its row says so, and C's lookup cache has lapsed (as 10 s would make it).
      await C.app.services.orm.em
        .fork()
        .getConnection()
        .execute(`update api_token set expires_at = now() - interval '1 second' where id = ?`, [
          rawId(made.apiToken!.id),
        ]);
      C.app.services.auth.clearCache();
      expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: the API token is no longer valid' });
      await client.dispose();
    } finally {
      await C.stop();
    }
  });

  it('should leave a revoked token revoked when revoked again, and list it only when asked', async () => {
    const made = await create({ role: Role.CUSTOMER, label: 'twice', workspaceId });
    const first = await A.ok(RevokeApiTokenDocument, { input: { id: made.apiToken!.id } }, admin);
    const second = await A.ok(RevokeApiTokenDocument, { input: { id: made.apiToken!.id } }, admin);
    expect(second.revokeApiToken.apiToken!.revokedAt).toBe(first.revokeApiToken.apiToken!.revokedAt);
    const active = await A.ok(ApiTokensDocument, { first: 100, workspaceId }, admin);
    expect(active.apiTokens.nodes.some((n) => n.id === made.apiToken!.id)).toBe(false);
    const all = await A.ok(ApiTokensDocument, { first: 100, workspaceId, includeRevoked: true }, admin);
    expect(all.apiTokens.nodes.find((n) => n.id === made.apiToken!.id)).toMatchObject({
      revokedBy: 'token admin',
      active: false,
    });
    const missing = await A.gql(
      RevokeApiTokenDocument,
      { input: { id: Buffer.from('ApiToken:00000000-0000-7000-8000-000000000000').toString('base64url') } },
      admin,
    );
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
