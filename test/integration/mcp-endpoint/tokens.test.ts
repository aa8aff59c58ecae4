/**
 * Who holds an MCP_CLIENT token (issue 27): `npm run token --role mcp_client --assistant <id>` mints
 * one that the endpoint accepts, and a CUSTOMER lists and revokes its own workspace's MCP_CLIENT
 * tokens through GraphQL, never another workspace's (whose existence the answer does not reveal).
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { rawId } from '../../support/ids.js';
import { endpointUrl, initializeMessage, mcpClientTokenOf, mcpRequest } from '../../support/mcp-endpoint.js';
import { runScript } from '../../support/run-script.js';
import { buildWorld, startCrmWorld, type CrmFixture, type World } from '../../support/turns.js';

let f: CrmFixture;
let other: World;

beforeAll(async () => {
  f = await startCrmWorld('Tokens');
  other = await buildWorld(f.t, f.peer.url, 'Elsewhere');
});
afterAll(async () => {
  await f.stop();
});

const LIST = `query($role: Role, $ws: ID, $rev: Boolean) {
  apiTokens(first: 100, role: $role, workspaceId: $ws, includeRevoked: $rev) {
    totalCount nodes { id role label assistantId active workspace { id } }
  }
}`;
const REVOKE = `mutation($id: ID!) { revokeApiToken(input: { id: $id }) { apiToken { id revokedAt revokedBy } } }`;

interface Listed {
  apiTokens: {
    totalCount: number;
    nodes: { id: string; role: string; label: string; assistantId: string | null; active: boolean }[];
  };
}

async function initializeStatus(w: World, token: string): Promise<number> {
  const res = await mcpRequest(endpointUrl(f.t, w.assistantId), token, { body: initializeMessage() });
  await res.arrayBuffer();
  return res.status;
}

describe('npm run token --role mcp_client', { timeout: 60_000 }, () => {
  it('mints a token bound to the assistant, with its label and expiry, that the endpoint accepts', async () => {
    const run = await runScript(
      'scripts/token.ts',
      ['--role', 'mcp_client', '--assistant', f.w.assistantId, '--label', 'cli ide', '--expires', '2d'],
      { DATABASE_URL: f.t.config.databaseUrl! },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const token = run.stdout.trim();
    expect(token).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    expect(await initializeStatus(f.w, token)).toBe(200);
    // Bound to that assistant only.
    expect(await initializeStatus(other, token)).toBe(403);

    const listed = await f.t.ok<Listed, { role: string }>(LIST, { role: 'MCP_CLIENT' }, f.w.admin);
    const row = listed.apiTokens.nodes.find((n) => n.label === 'cli ide')!;
    expect(row).toMatchObject({ role: 'MCP_CLIENT', assistantId: f.w.assistantId, active: true });
    const { rows } = await sql(`select expires_at from api_token where id = $1`, [rawId(row.id)]);
    const expires = new Date(rows[0]!.expires_at as string).getTime();
    expect(expires - Date.now()).toBeGreaterThan(47 * 3_600_000);
    expect(expires - Date.now()).toBeLessThan(49 * 3_600_000);
  });

  it('refuses mcp_client without --assistant, and --assistant for another role, without a stack trace', async () => {
    const env = { DATABASE_URL: f.t.config.databaseUrl! };
    const missing = await runScript('scripts/token.ts', ['--role', 'mcp_client'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('an MCP_CLIENT token needs an assistant (--assistant)\n');
    const extra = await runScript(
      'scripts/token.ts',
      ['--role', 'runtime', '--assistant', f.w.assistantId],
      env,
    );
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/only an MCP_CLIENT token is bound to an assistant.*\(--assistant\)/);
    const bogus = await runScript('scripts/token.ts', ['--role', 'mcp_client', '--assistant', 'nope'], env);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/--assistant "nope" is not an assistant ID/);
  });
});

describe("a CUSTOMER and its workspace's MCP_CLIENT tokens", () => {
  it('lists only its own workspace’s MCP_CLIENT tokens, whatever the filters ask', async () => {
    await mcpClientTokenOf(f.t, f.w, 'mine one');
    await mcpClientTokenOf(f.t, f.w, 'mine two');
    await mcpClientTokenOf(f.t, other, 'theirs');
    const listed = await f.t.ok<Listed, object>(LIST, {}, f.w.customer);
    const labels = listed.apiTokens.nodes.map((n) => n.label);
    expect(labels).toEqual(expect.arrayContaining(['mine one', 'mine two']));
    expect(labels).not.toContain('theirs');
    expect(listed.apiTokens.nodes.every((n) => n.role === 'MCP_CLIENT')).toBe(true);
    expect(listed.apiTokens.totalCount).toBe(listed.apiTokens.nodes.length);
    // Asking for another workspace, or another role, lists nothing rather than widening.
    for (const vars of [{ ws: other.workspaceId }, { role: 'CUSTOMER' }, { role: 'ADMIN' }]) {
      const narrowed = await f.t.ok<Listed, object>(LIST, vars, f.w.customer);
      expect(narrowed.apiTokens, JSON.stringify(vars)).toEqual({ totalCount: 0, nodes: [] });
    }
    // The ADMIN sees both workspaces' tokens, as before.
    const all = await f.t.ok<Listed, object>(LIST, { role: 'MCP_CLIENT' }, f.w.admin);
    expect(all.apiTokens.nodes.map((n) => n.label)).toEqual(expect.arrayContaining(['mine one', 'theirs']));
    // Other roles still may not list.
    for (const token of [f.w.operator, f.w.runtime]) {
      const refused = await f.t.gql(LIST, {}, token);
      expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  it("revokes its own, which the endpoint then refuses; another workspace's is NOT_FOUND like a missing one", async () => {
    const mine = await mcpClientTokenOf(f.t, f.w, 'to revoke');
    const theirs = await mcpClientTokenOf(f.t, other, 'not yours');
    expect(await initializeStatus(f.w, mine.secret)).toBe(200);

    const revoked = await f.t.ok<
      { revokeApiToken: { apiToken: { id: string; revokedAt: string | null; revokedBy: string } } },
      { id: string }
    >(REVOKE, { id: mine.id }, f.w.customer);
    expect(revoked.revokeApiToken.apiToken.revokedAt).not.toBeNull();
    expect(await initializeStatus(f.w, mine.secret)).toBe(401);

    const foreign = await f.t.gql(REVOKE, { id: theirs.id }, f.w.customer);
    const unknown = await f.t.gql(
      REVOKE,
      { id: Buffer.from('ApiToken:00000000-0000-7000-8000-000000000000').toString('base64url') },
      f.w.customer,
    );
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(foreign.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
    expect(foreign.errors?.[0]?.extensions).toEqual(unknown.errors?.[0]?.extensions);
    // Their token still works.
    expect(await initializeStatus(other, theirs.secret)).toBe(200);
    // Nor may a CUSTOMER revoke a token of another role in its own workspace (its own CUSTOMER token).
    const own = await f.t.ok<{ apiTokens: { nodes: { id: string }[] } }, object>(
      `{ apiTokens(first: 100, role: CUSTOMER) { nodes { id } } }`,
      {},
      f.w.admin,
    );
    for (const { id } of own.apiTokens.nodes) {
      const res = await f.t.gql(REVOKE, { id }, f.w.customer);
      expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });
});

async function sql(text: string, values: unknown[]) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: f.t.config.databaseUrl! });
  await client.connect();
  try {
    return await client.query<Record<string, unknown>>(text, values);
  } finally {
    await client.end();
  }
}
