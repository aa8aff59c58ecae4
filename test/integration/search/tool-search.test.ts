/**
 * Tool search in turns (issue 31): an assistant with 400 callable tools, a real SDK MCP server,
 * real PostgreSQL, two instances on one database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuditTrailDocument,
  BeginSearchTurnDocument,
  CallToolForModelDocument,
  CreateConnectionDocument,
  DisableDocument,
  EnableDocument,
  SetAlwaysDeclareDocument,
  TurnCallsDocument,
  type ToolDialect,
  type ToolSearchInputType,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { buildWorld, connectTools, type World } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

const ADJECTIVES = [
  'amber',
  'brisk',
  'coral',
  'dusty',
  'eager',
  'fuzzy',
  'gentle',
  'hollow',
  'icy',
  'jolly',
  'keen',
  'lunar',
  'misty',
  'noble',
  'olive',
  'proud',
  'quiet',
  'rusty',
  'sandy',
  'tidal',
];
const NOUNS = [
  'invoice',
  'parcel',
  'ticket',
  'voucher',
  'badge',
  'ledger',
  'pallet',
  'coupon',
  'permit',
  'receipt',
  'voyage',
  'wallet',
  'garden',
  'harbor',
  'meadow',
  'orchard',
  'quarry',
  'summit',
  'tunnel',
  'valley',
];

/**
 * 400 tools, each told apart by its two words ("Lists the amber invoice records"), on two
 * connections of 200 (one connection holds at most 300 operations).
 */
const TOOLS: { name: string; query: string; conn: 'bulk' | 'more' }[] = [];
for (const a of ADJECTIVES)
  for (const n of NOUNS)
    TOOLS.push({ name: `${a}_${n}_list`, query: `${a} ${n}`, conn: TOOLS.length < 200 ? 'bulk' : 'more' });

const peerTools = (conn: 'bulk' | 'more'): PeerTool[] =>
  TOOLS.filter((t) => t.conn === conn).map((t) => ({
    name: t.name,
    description: `Lists the ${t.query} records of the account.`,
    annotations: { readOnlyHint: true },
    handler: () => ({ content: [{ type: 'text', text: `answered by ${t.name}` }] }),
  }));

let A: TestApp;
let B: TestApp;
let peer: SdkServerHandle;
let peer2: SdkServerHandle;
let w: World;
/** Both connections' operations, by tool name. */
const ops: Record<string, { id: string }> = {};

beforeAll(async () => {
  A = await startTestApp();
  B = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: peerTools('bulk') });
  peer2 = await startSdkServer({ stateful: false, json: true, tools: peerTools('more') });
  w = await buildWorld(A, peer.url, 'Bulk');
  await connectTools(A, w);
  // The second connection, on the same assistant.
  const conn = await A.ok(
    CreateConnectionDocument,
    { input: { workspaceId: w.workspaceId, name: 'More', kind: 'MCP', endpointUrl: peer2.url } },
    w.operator,
  );
  const connectionId = conn.createConnection.connection!.id;
  for (const id of [w.connectionId, connectionId]) {
    for (const op of await allOperations(id)) {
      if (!op.enabled) await A.ok(EnableDocument, { input: { operationId: op.id } }, w.operator);
      ops[op.name] = op;
    }
  }
  await connectTools(A, { ...w, connectionId });
  expect(Object.keys(ops).length).toBe(400);
}, 180_000);

/** Every operation of a connection (pages of 100). */
async function allOperations(
  connectionId: string,
): Promise<{ id: string; name: string; enabled: boolean }[]> {
  const out: { id: string; name: string; enabled: boolean }[] = [];
  let after: string | null = null;
  for (;;) {
    const page: {
      connection: {
        operations: {
          nodes: { id: string; name: string; enabled: boolean }[];
          pageInfo: { endCursor: string | null; hasNextPage: boolean };
        };
      };
    } = await A.ok(
      `query($id: ID!, $after: String) { connection(id: $id) { ... on Connection { operations(first: 100, after: $after) { nodes { id name enabled } pageInfo { endCursor hasNextPage } } } } }`,
      { id: connectionId, after },
      w.admin,
    );
    out.push(...page.connection.operations.nodes);
    if (!page.connection.operations.pageInfo.hasNextPage) return out;
    after = page.connection.operations.pageInfo.endCursor;
  }
}

afterAll(async () => {
  await A?.stop();
  await B?.stop();
  await peer?.close();
  await peer2?.close();
});

const declared = (t: { name: string; conn: string }) => `${t.conn}__${t.name}`;

async function beginOn(app: TestApp, dialect: ToolDialect, toolSearch?: ToolSearchInputType, conv = 'c') {
  return (
    await app.ok(
      BeginSearchTurnDocument,
      { input: { assistantId: w.assistantId, conversationId: conv, dialect, toolSearch } },
      w.runtime,
    )
  ).beginTurn;
}

async function callOn(app: TestApp, turnId: string, name: string, args: Record<string, unknown> = {}) {
  return (await app.ok(CallToolForModelDocument, { input: { turnId, name, arguments: args } }, w.runtime))
    .callTool;
}

interface Found {
  name: string;
  operationKey: string;
  score: number;
  matched: string[];
  declaration: Record<string, unknown>;
}
const foundOf = (r: { structuredContent?: Record<string, unknown> | null }) =>
  (r.structuredContent?.tools ?? []) as Found[];

describe('tool search', () => {
  it('declares at most 128 tools in OPENAI for 400 callable tools, and reaches every one of them through search', async () => {
    const turn = await beginOn(A, 'OPENAI');
    expect(turn.toolSearch).toEqual({ on: true, provider: 'SERVICE', declare: 20 });
    expect(turn.tools.length).toBeLessThanOrEqual(128);
    const names = turn.tools.map((t) => t.name);
    expect(names).toContain('search_tools');
    expect(names.at(-1)).toBe('finish_turn');
    expect(turn.leftOut).toEqual([]);
    const search = turn.tools.find((t) => t.name === 'search_tools')!;
    expect((search.declaration as { type: string }).type).toBe('function');

    for (const t of TOOLS) {
      const found = await callOn(A, turn.turnId, 'search_tools', { query: t.query, limit: 3 });
      expect(found.status).toBe('SUCCEEDED');
      const hits = foundOf(found);
      expect(hits[0]?.name, t.query).toBe(declared(t));
      expect(hits[0]!.matched.sort()).toEqual(t.query.split(' ').sort());
      // In the dialect's shape, in forModel too (OpenAI: the tool message's text).
      expect(hits[0]!.declaration.type).toBe('function');
      expect(found.forModel as string).toContain(declared(t));
      const called = await callOn(A, turn.turnId, declared(t));
      expect(called.status, t.name).toBe('SUCCEEDED');
      expect(JSON.stringify(called.content)).toContain(`answered by ${t.name}`);
    }
  }, 300_000);

  it('declares everything it can without search (OFF): the dialect leaves the rest out at its cap', async () => {
    const turn = await beginOn(A, 'OPENAI', { mode: 'OFF' });
    expect(turn.toolSearch.on).toBe(false);
    expect(turn.tools.length).toBe(128);
    expect(turn.leftOut.filter((t) => t.code === 'TOOL_LIMIT').length).toBe(400 - 127);
  });

  it('declares far fewer bytes with search than without (GENERIC, all 400 declared when OFF)', async () => {
    const bytes = (tools: { declaration: unknown }[]) =>
      tools.reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t.declaration)), 0);
    const off = await beginOn(A, 'GENERIC', { mode: 'OFF' });
    const on = await beginOn(A, 'GENERIC', { mode: 'ON' });
    expect(off.tools.length).toBe(401);
    expect(bytes(on.tools)).toBeLessThan(bytes(off.tools) * 0.15);
  });

  it('rejects a call to a tool neither declared nor found, telling the model to search', async () => {
    const turn = await beginOn(A, 'OPENAI', { mode: 'ON', declare: 0 });
    const t = TOOLS[7]!;
    const r = await callOn(A, turn.turnId, declared(t));
    expect(r.status).toBe('REJECTED');
    expect(r.message).toContain('search_tools');
    expect(r.recorded).toBe(true);
    // A name the search never returned stays refused after a search for something else.
    await callOn(A, turn.turnId, 'search_tools', { query: TOOLS[8]!.query, limit: 1 });
    expect((await callOn(A, turn.turnId, declared(t))).status).toBe('REJECTED');
    expect((await callOn(A, turn.turnId, declared(TOOLS[8]!))).status).toBe('SUCCEEDED');
  });

  it('gives the same order for the same query on the same tool list, on either instance', async () => {
    const one = await beginOn(A, 'GENERIC', { mode: 'ON' });
    const two = await beginOn(B, 'GENERIC', { mode: 'ON' });
    const query = { query: 'amber invoice parcel records', limit: 20 };
    const a1 = foundOf(await callOn(A, one.turnId, 'search_tools', query)).map((f) => f.name);
    const a2 = foundOf(await callOn(A, one.turnId, 'search_tools', query)).map((f) => f.name);
    const b1 = foundOf(await callOn(B, two.turnId, 'search_tools', query)).map((f) => f.name);
    expect(a1.length).toBe(20);
    expect(a2).toEqual(a1);
    expect(b1).toEqual(a1);
  });

  it('accepts on one instance a call to a tool found on the other', async () => {
    const turn = await beginOn(A, 'OPENAI', { mode: 'ON' });
    const t = TOOLS[123]!;
    // B knows the turn before the search (its state is in B's memory): the found tool is read on a miss.
    expect((await callOn(B, turn.turnId, declared(t))).status).toBe('REJECTED');
    const found = await callOn(A, turn.turnId, 'search_tools', { query: t.query, limit: 1 });
    expect(foundOf(found)[0]!.name).toBe(declared(t));
    const r = await callOn(B, turn.turnId, declared(t));
    expect(r.status).toBe('SUCCEEDED');
    // And a turn B never saw.
    const other = await beginOn(A, 'OPENAI', { mode: 'ON' }, 'c2');
    await callOn(A, other.turnId, 'search_tools', { query: t.query, limit: 1 });
    expect((await callOn(B, other.turnId, declared(t))).status).toBe('SUCCEEDED');
  });

  it('makes a found tool uncallable once a gate closes after the search, on both instances', async () => {
    const turn = await beginOn(A, 'OPENAI', { mode: 'ON' });
    const t = TOOLS[250]!;
    await callOn(A, turn.turnId, 'search_tools', { query: t.query, limit: 1 });
    expect((await callOn(B, turn.turnId, declared(t))).status).toBe('SUCCEEDED');
    const op = ops[t.name]!;
    await A.ok(DisableDocument, { input: { operationId: op.id, reason: 'incident' } }, w.operator);
    try {
      expect((await callOn(A, turn.turnId, declared(t))).status).toBe('UNAVAILABLE');
      await waitUntil(async () => (await callOn(B, turn.turnId, declared(t))).status === 'UNAVAILABLE');
      // Nor is it found again.
      const again = await callOn(B, turn.turnId, 'search_tools', { query: t.query, limit: 5 });
      expect(foundOf(again).map((f) => f.name)).not.toContain(declared(t));
    } finally {
      await A.ok(EnableDocument, { input: { operationId: op.id } }, w.operator);
    }
  });

  it("bounds the model's arguments: query cut and storable, limit capped, other keys refused", async () => {
    const turn = await beginOn(A, 'GENERIC', { mode: 'ON' });
    const long = `${'amber invoice '.repeat(2_000)}\u0000`;
    const r = await callOn(A, turn.turnId, 'search_tools', { query: long, limit: 10_000 });
    expect(r.status).toBe('SUCCEEDED');
    expect(foundOf(r).length).toBe(20);
    expect((r.structuredContent as { query: string }).query.length).toBeLessThanOrEqual(500);
    expect((await callOn(A, turn.turnId, 'search_tools', { query: 'x', extra: 1 })).status).toBe('REJECTED');
    expect((await callOn(A, turn.turnId, 'search_tools', { query: '' })).status).toBe('REJECTED');
    expect((await callOn(A, turn.turnId, 'search_tools', { query: 'a', limit: 1.5 })).status).toBe(
      'REJECTED',
    );
    expect((await callOn(A, turn.turnId, '__proto__')).status).toBe('REJECTED');
  });

  it('records a search like a READ call with its query and results, for the debugger', async () => {
    const turn = await beginOn(A, 'GENERIC', { mode: 'ON' });
    await callOn(A, turn.turnId, 'search_tools', { query: 'coral ticket', limit: 2 });
    const calls = (await A.ok(TurnCallsDocument, { id: turn.turnId }, w.admin)).turn!.calls.nodes;
    const s = calls.find((c) => c.declaredName === 'search_tools')!;
    expect(s.risk).toBe('READ');
    expect(s.operationKey).toBeNull();
    expect(s.status).toBe('SUCCEEDED');
    expect(s.arguments).toEqual({ query: 'coral ticket', limit: 2 });
    expect(JSON.stringify(s.result)).toContain('bulk__coral_ticket_list');
  });

  it('declares the operations an operator marked "always declare" up front, audited', async () => {
    const t = TOOLS[42]!;
    const op = ops[t.name]!;
    const set = await A.ok(
      SetAlwaysDeclareDocument,
      { input: { operationId: op.id, alwaysDeclare: true } },
      w.operator,
    );
    expect(set.setAlwaysDeclare.operation!.alwaysDeclare).toBe(true);
    const trail = await A.ok(AuditTrailDocument, { id: w.workspaceId, first: 20 }, w.admin);
    expect(trail.workspace!.auditEvents.nodes).toContainEqual(
      expect.objectContaining({
        action: 'SET_ALWAYS_DECLARE',
        targetId: op.id,
        before: { alwaysDeclare: false },
        after: { alwaysDeclare: true },
      }),
    );
    // Setting what is already there writes no audit row; a customer may not set it.
    await A.ok(SetAlwaysDeclareDocument, { input: { operationId: op.id, alwaysDeclare: true } }, w.operator);
    const again = await A.ok(AuditTrailDocument, { id: w.workspaceId, first: 50 }, w.admin);
    expect(again.workspace!.auditEvents.nodes.filter((e) => e.action === 'SET_ALWAYS_DECLARE').length).toBe(
      1,
    );
    const refused = await A.gql(
      SetAlwaysDeclareDocument,
      { input: { operationId: op.id, alwaysDeclare: false } },
      w.customer,
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    try {
      await waitUntil(async () => (await beginOn(B, 'OPENAI')).tools.some((x) => x.name === declared(t)));
      const turn = await beginOn(A, 'OPENAI');
      expect(turn.tools.map((x) => x.name)).toEqual(['search_tools', declared(t), 'finish_turn']);
      expect((await callOn(A, turn.turnId, declared(t))).status).toBe('SUCCEEDED');
      // declare: 0 leaves it to search.
      expect((await beginOn(A, 'OPENAI', { mode: 'AUTO', declare: 0 })).tools.map((x) => x.name)).toEqual([
        'search_tools',
        'finish_turn',
      ]);
    } finally {
      await A.ok(
        SetAlwaysDeclareDocument,
        { input: { operationId: op.id, alwaysDeclare: false } },
        w.operator,
      );
    }
  });

  it("offers Anthropic's own tool search: deferred declarations and its BM25 search tool", async () => {
    const turn = await beginOn(A, 'ANTHROPIC', { mode: 'ON', provider: 'ANTHROPIC' });
    expect(turn.toolSearch.provider).toBe('ANTHROPIC');
    const search = turn.tools.find((t) => t.name === 'tool_search_tool_bm25')!;
    expect(search.declaration).toEqual({
      type: 'tool_search_tool_bm25_20251119',
      name: 'tool_search_tool_bm25',
    });
    const deferred = turn.tools.filter(
      (t) => (t.declaration as { defer_loading?: boolean }).defer_loading === true,
    );
    expect(deferred.length).toBe(400);
    expect(turn.tools.at(-1)!.name).toBe('finish_turn');
    // Anthropic found it; the call is an ordinary one, both gates checked.
    expect((await callOn(A, turn.turnId, declared(TOOLS[3]!))).status).toBe('SUCCEEDED');
    const bad = await A.gql(
      BeginSearchTurnDocument,
      {
        input: {
          assistantId: w.assistantId,
          conversationId: 'c',
          dialect: 'OPENAI',
          toolSearch: { mode: 'ON', provider: 'ANTHROPIC' },
        },
      },
      w.runtime,
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
