/**
 * RUNTIME sees only what its three mutations need (issue #11, finding 6; DESIGN.md rule 16): every
 * query, node(id), viewer.workspace and the debugger subscription answer FORBIDDEN to a RUNTIME
 * token, bound to a workspace or not; beginTurn, callTool, finishTurn and viewer { role } work.
 */
import { readFileSync } from 'node:fs';
import { buildSchema, getNamedType, isLeafType, isNonNullType, type GraphQLObjectType } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';

const schema = buildSchema(readFileSync(new URL('../../../schema.graphql', import.meta.url), 'utf8'));
const RUNTIME_MUTATIONS = ['beginTurn', 'callTool', 'finishTurn'];

let t: TestApp;
let workspaceId: string;
let assistantId: string;
let bound: string;
let unbound: string;

beforeAll(async () => {
  t = await startTestApp();
  const admin = await t.token(Role.ADMIN);
  const ws = await t.ok<{ createWorkspace: { workspace: { id: string } } }, Record<string, never>>(
    `mutation { createWorkspace(input: { name: "runtime scope" }) { workspace { id } } }`,
    {},
    admin,
  );
  workspaceId = ws.createWorkspace.workspace.id;
  const a = await t.ok<{ createAssistant: { assistant: { id: string } } }, { w: string }>(
    `mutation ($w: ID!) { createAssistant(input: { workspaceId: $w, name: "bot" }) { assistant { id } } }`,
    { w: workspaceId },
    admin,
  );
  assistantId = a.createAssistant.assistant.id;
  bound = await t.token(Role.RUNTIME, rawId(workspaceId));
  unbound = await t.token(Role.RUNTIME);
});
afterAll(async () => {
  await t.stop();
});

/** A query of one root field, with ids for its required arguments and the least selection. */
function rootQuery(field: string): string {
  const def = (schema.getQueryType() as GraphQLObjectType).getFields()[field]!;
  const args = def.args
    .filter((a) => isNonNullType(a.type))
    .map((a) => `${a.name}: ${JSON.stringify(workspaceId)}`)
    .join(', ');
  const selection = isLeafType(getNamedType(def.type)) ? '' : '{ __typename }';
  return `{ ${field}${args ? `(${args})` : ''} ${selection} }`;
}

describe('a RUNTIME token', () => {
  const queries = Object.keys((schema.getQueryType() as GraphQLObjectType).getFields()).filter(
    (f) => f !== 'viewer',
  );

  it.each(queries.flatMap((q) => [[q, 'bound'] as const, [q, 'unbound'] as const]))(
    'should be FORBIDDEN on Query.%s (%s to a workspace)',
    async (field, which) => {
      const res = await t.gql(rootQuery(field), {}, which === 'bound' ? bound : unbound);
      expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    },
  );

  it('should read its own role, but not its workspace', async () => {
    const ok = await t.gql(`{ viewer { role label } }`, {}, bound);
    expect(ok.errors).toBeUndefined();
    expect(ok.data).toMatchObject({ viewer: { role: 'RUNTIME' } });
    const res = await t.gql(`{ viewer { role workspace { id connections { nodes { id } } } } }`, {}, bound);
    expect(res.errors?.map((e) => [e.extensions?.code, e.path])).toEqual([
      ['FORBIDDEN', ['viewer', 'workspace']],
    ]);
    expect(JSON.stringify(res.data)).not.toContain('connections');
  });

  it('should be FORBIDDEN on node(id) for every object of its workspace', async () => {
    for (const id of [workspaceId, assistantId]) {
      const res = await t.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id }, bound);
      expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    }
  });

  it('should be refused the debugger subscription', async () => {
    const stream = await subscribeTurnEvents(t.wsUrl, bound, { assistantId });
    try {
      await stream.waitFor(() => stream.errors.length > 0).catch(() => undefined);
      expect(JSON.stringify(stream.errors)).toContain('FORBIDDEN');
      expect(stream.events).toEqual([]);
    } finally {
      await stream.close();
    }
  });

  it('should still open, use and finish a turn', async () => {
    const begun = await t.ok<{ beginTurn: { turnId: string } }, { a: string }>(
      `mutation ($a: ID!) { beginTurn(input: { assistantId: $a, conversationId: "c" }) { turnId } }`,
      { a: assistantId },
      bound,
    );
    const called = await t.ok<{ callTool: { ok: boolean; status: string } }, { t: string }>(
      `mutation ($t: ID!) { callTool(input: { turnId: $t, name: "nothing__here" }) { ok status } }`,
      { t: begun.beginTurn.turnId },
      bound,
    );
    expect(called.callTool).toEqual({ ok: false, status: 'UNAVAILABLE' });
    const done = await t.ok<{ finishTurn: { finished: boolean } }, { t: string }>(
      `mutation ($t: ID!) { finishTurn(input: { turnId: $t }) { finished } }`,
      { t: begun.beginTurn.turnId },
      bound,
    );
    expect(done.finishTurn.finished).toBe(true);
  });

  it('should be allowed no other mutation: every mutation names its roles, and only three name RUNTIME', () => {
    const mutations = Object.keys(schema.getMutationType()!.getFields());
    const authorized = getMetadataStorage().authorizedFields;
    for (const name of mutations) {
      const entry = authorized.find((f) => f.fieldName === name);
      expect(entry, `${name} has no @Authorized`).toBeDefined();
      expect(entry!.roles.length, `${name} is open to every role`).toBeGreaterThan(0);
      expect(entry!.roles.includes(Role.RUNTIME), name).toBe(RUNTIME_MUTATIONS.includes(name));
    }
  });
});
