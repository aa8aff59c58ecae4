import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECLARED_NAME_PATTERN } from '../../../src/turns/declare.js';
import {
  DisableDocument,
  EnableDocument,
  FinishTurnDocument,
  LedgerDocument,
  SetConnectedToolsDocument,
  TurnCallsDocument,
  AssistantTurnsDocument,
  BeginTurnDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import {
  startRawServer,
  startSdkServer,
  type RawServerHandle,
  type SdkServerHandle,
} from '../../support/mcp-servers.js';
import {
  begin,
  buildWorld,
  call,
  connectTools,
  CRM_TOOLS,
  slowTools,
  type World,
} from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;

/** Each test's own workspace, assistant and connection (400 ms budget): no test sees another's switches. */
async function world(connected = true): Promise<World> {
  const own = await buildWorld(t, peer.url, 'CRM', 400);
  if (connected) await connectTools(t, own);
  return own;
}

beforeAll(async () => {
  t = await startTestApp({
    env: {
      BUILTIN_TOOLS: JSON.stringify([
        { name: 'web_search', description: 'Search the web', inputSchema: { type: 'object' } },
      ]),
    },
  });
  peer = await startSdkServer({ stateful: true, json: false, tools: CRM_TOOLS });
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('the two gates', () => {
  it('should declare no connection tool until the customer connects the tools, and refuse calls', async () => {
    const w = await world(false);
    const turn = await begin(t, w);
    expect(turn.tools.map((x) => x.name)).toEqual(['web_search', 'finish_turn']);
    const result = await call(t, w, turn.turnId, 'CRM__lookup', { email: 'a@b.c' });
    expect(result).toMatchObject({ ok: false, status: 'UNAVAILABLE' });
    expect(result.message).toMatch(/no tool named "CRM__lookup"/);
  });

  it('should declare the tools once connected: built-ins first, finish_turn last', async () => {
    const w = await world(false);
    await connectTools(t, w);
    const turn = await begin(t, w);
    expect(turn.tools.map((x) => x.name)).toEqual([
      'web_search',
      'crm__fails',
      'crm__lookup',
      'crm__slow_read',
      'crm__slow_write',
      'crm__update',
      'finish_turn',
    ]);
    const lookup = turn.tools.find((x) => x.name === 'crm__lookup')!;
    expect(lookup.description).toBe('Look a customer up');
    expect(lookup.inputSchema).toMatchObject({ type: 'object', properties: { email: { type: 'string' } } });
  });

  it('should refuse a call mid-turn once the operator disables the tool, and declare it no more', async () => {
    const w = await world();
    const turn = await begin(t, w);
    expect((await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' })).status).toBe('SUCCEEDED');
    await t.ok(DisableDocument, { input: { operationId: w.ops.lookup!.id, reason: 'incident' } }, w.operator);
    const refused = await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' });
    expect(refused).toMatchObject({ ok: false, status: 'UNAVAILABLE' });
    expect(refused.message).toMatch(/switched off/);
    expect((await begin(t, w)).tools.map((x) => x.name)).not.toContain('crm__lookup');
    await t.ok(EnableDocument, { input: { operationId: w.ops.lookup!.id } }, w.operator);
    expect((await begin(t, w)).tools.map((x) => x.name)).toContain('crm__lookup');
  });

  it('should refuse calls once the customer disconnects the tools', async () => {
    const w = await world();
    const turn = await begin(t, w);
    await connectTools(t, w, false);
    expect((await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' })).status).toBe('UNAVAILABLE');
    expect((await begin(t, w)).tools.map((x) => x.name)).toEqual(['web_search', 'finish_turn']);
    await connectTools(t, w, true);
  });

  it('should refuse a connection of another workspace on the gate', async () => {
    const w = await world();
    const other = await buildWorld(t, peer.url, 'Other');
    const res = await t.ok(
      SetConnectedToolsDocument,
      { input: { assistantId: w.assistantId, connectionId: other.connectionId, enabled: true } },
      w.admin,
    );
    expect(res.setConnectedTools.userErrors).toEqual([
      expect.objectContaining({ code: 'WORKSPACE_MISMATCH' }),
    ]);
    const customerTry = await t.gql(
      SetConnectedToolsDocument,
      { input: { assistantId: w.assistantId, connectionId: other.connectionId, enabled: true } },
      w.customer,
    );
    expect(customerTry.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('calls', () => {
  it('should record every call shape with the right status, and a ledger row for WRITE calls only', async () => {
    const w = await world();
    const turn = await begin(t, w, 'shapes');
    const ok = await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' });
    expect(ok).toMatchObject({ ok: true, status: 'SUCCEEDED', seq: 1, attempts: 1 });
    expect(ok.content).toEqual([{ type: 'text', text: JSON.stringify({ email: 'a@b.c' }) }]);
    expect(ok.structuredContent).toEqual({ echo: { email: 'a@b.c' } });

    const write = await call(t, w, turn.turnId, 'crm__update', { email: 'a@b.c', plan: 'pro' });
    expect(write).toMatchObject({ ok: true, status: 'SUCCEEDED', seq: 2 });

    const toolError = await call(t, w, turn.turnId, 'crm__fails');
    expect(toolError).toMatchObject({ ok: false, status: 'TOOL_ERROR' });
    expect(toolError.message).toBe('The tool crm__fails reported an error: customer not found');

    const unknown = await call(t, w, turn.turnId, 'nope');
    expect(unknown).toMatchObject({ ok: false, status: 'UNAVAILABLE' });
    const builtIn = await call(t, w, turn.turnId, 'web_search');
    expect(builtIn.message).toMatch(/built-in/);

    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(calls.turn!.calls.nodes.map((c) => [c.seq, c.declaredName, c.status, c.risk])).toEqual([
      [1, 'crm__lookup', 'SUCCEEDED', 'READ'],
      [2, 'crm__update', 'SUCCEEDED', 'WRITE'],
      [3, 'crm__fails', 'TOOL_ERROR', 'READ'],
      [4, 'nope', 'UNAVAILABLE', null],
      [5, 'web_search', 'UNAVAILABLE', null],
    ]);
    expect(calls.turn!.calls.nodes[0]!.operationKey).toBe('connector.crm.lookup');
    const ledger = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
    expect(ledger.workspace!.ledger.nodes.filter((l) => l.operationKey === 'connector.crm.update')).toEqual([
      {
        turnCallId: write.callId,
        operationKey: 'connector.crm.update',
        arguments: { email: 'a@b.c', plan: 'pro' },
        status: 'SUCCEEDED',
        attempts: 1,
        message: null,
        outcomeBy: 'CALL',
      },
    ]);
    expect(ledger.workspace!.ledger.nodes.some((l) => l.operationKey === 'connector.crm.lookup')).toBe(false);
  });

  it('should time out within budget: a READ is retried once, a WRITE is not', async () => {
    const w = await world();
    const turn = await begin(t, w, 'timeouts');
    // The slow tools never answer until released: the calls return on the budget, not on the tool.
    try {
      const read = await call(t, w, turn.turnId, 'crm__slow_read');
      expect(read).toMatchObject({ ok: false, status: 'TIMEOUT', attempts: 2 });
      expect(read.message).toMatch(/did not answer within 0.4 s/);
      const write = await call(t, w, turn.turnId, 'crm__slow_write');
      expect(write).toMatchObject({ ok: false, status: 'TIMEOUT', attempts: 1 });
      expect(slowTools.answered).toBe(0);
    } finally {
      slowTools.release();
    }
    const ledger = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
    expect(
      ledger.workspace!.ledger.nodes.find((l) => l.operationKey === 'connector.crm.slow_write'),
    ).toMatchObject({ status: 'TIMEOUT', attempts: 1 });
  });

  it('should count a session re-send apart from attempts, in the answer, the call record and the ledger', async () => {
    // A fresh stateful server: the first call goes without a session, gets 400/404, and is re-sent.
    const fresh = await startSdkServer({ stateful: true, json: true, tools: CRM_TOOLS });
    try {
      const w2 = await buildWorld(t, fresh.url, 'Sessions');
      await connectTools(t, w2);
      const turn = await begin(t, w2, 'resends');
      const first = await call(t, w2, turn.turnId, 'sessions__update', { email: 'a@b.c', plan: 'pro' });
      expect(first).toMatchObject({ ok: true, status: 'SUCCEEDED', attempts: 1, resends: 1 });
      const second = await call(t, w2, turn.turnId, 'sessions__update', { email: 'a@b.c', plan: 'max' });
      expect(second).toMatchObject({ ok: true, attempts: 1, resends: 0 });
      expect(fresh.count('initialize')).toBe(2); // discovery's own session, then the calls' one
      const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w2.admin);
      expect(calls.turn!.calls.nodes.map((c) => [c.seq, c.attempts, c.resends])).toEqual([
        [1, 1, 1],
        [2, 1, 0],
      ]);
      const ledger = await t.ok(LedgerDocument, { id: w2.workspaceId }, w2.admin);
      expect(ledger.workspace!.ledger.nodes.map((l) => l.attempts)).toEqual([1, 1]);
    } finally {
      await fresh.close();
    }
  });

  it('should refuse calls in a finished turn, and list turns', async () => {
    const w = await world();
    const turn = await begin(t, w, 'finishing');
    expect(
      (await t.ok(FinishTurnDocument, { input: { turnId: turn.turnId } }, w.runtime)).finishTurn.finished,
    ).toBe(true);
    expect(
      (await t.ok(FinishTurnDocument, { input: { turnId: turn.turnId } }, w.runtime)).finishTurn.finished,
    ).toBe(false);
    const after = await call(t, w, turn.turnId, 'crm__lookup', { email: 'x' });
    expect(after).toMatchObject({ ok: false, status: 'UNAVAILABLE' });
    const turns = await t.ok(AssistantTurnsDocument, { id: w.assistantId }, w.customer);
    expect(turns.assistant!.turns.nodes[0]!.conversationId).toBe('finishing');
  });

  it('should let only the runtime open turns', async () => {
    const w = await world(false);
    const res = await t.gql(
      BeginTurnDocument,
      { input: { assistantId: w.assistantId, conversationId: 'x' } },
      w.customer,
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

const RAW_KEY = 'raw-key-0123456789-very-secret';

describe('hostile and broken servers', () => {
  let raw: RawServerHandle;
  let hw: World;
  /** Each call names the server's behaviour in its own arguments: no mode shared between tests. */
  const modeOf = (req: { body: unknown }): string =>
    (req.body as { params?: { arguments?: { mode?: string } } } | undefined)?.params?.arguments?.mode ?? 'ok';

  beforeAll(async () => {
    raw = await startRawServer((req, res) => {
      if (req.httpMethod === 'DELETE') return void res.writeHead(405).end();
      if (req.method !== undefined && req.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: req.id, result }));
      };
      if (req.method === 'initialize')
        return reply({
          protocolVersion: '2025-06-18',
          capabilities: {},
          serverInfo: { name: 'raw', version: '1' },
        });
      if (req.method === 'tools/list') {
        return reply({
          tools: [
            { name: 'get', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
            { name: 'put', inputSchema: { type: 'object' } },
          ],
        });
      }
      const mode = modeOf(req);
      if (mode === '500') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        return void res.end('internal');
      }
      if (mode === 'reset') return void res.socket?.destroy();
      if (mode === 'strings') return reply({ content: ['plain string', 7] });
      if (mode === 'echo-key') {
        return reply({
          isError: true,
          content: [{ type: 'text', text: `key rejected: ${String(req.headers.authorization)}` }],
        });
      }
      return reply({ content: [{ type: 'text', text: 'x'.repeat(100_000) }] });
    });
    hw = await buildWorld(t, raw.url, 'Raw', undefined, { kind: 'BEARER', key: RAW_KEY });
    await connectTools(t, hw);
  });

  afterAll(async () => {
    await raw.close();
  });

  it('should cap a huge result with a note, and turn 500s and resets into results', async () => {
    const turn = await begin(t, hw);
    const big = await call(t, hw, turn.turnId, 'raw__get');
    expect(big).toMatchObject({ ok: true, status: 'SUCCEEDED', truncated: true });
    expect(JSON.stringify(big.content).length).toBeLessThanOrEqual(64 * 1024 + 200);
    expect(JSON.stringify(big.content)).toMatch(/The result was cut/);
    const failed = await call(t, hw, turn.turnId, 'raw__get', { mode: '500' });
    expect(failed).toMatchObject({ ok: false, status: 'UPSTREAM_ERROR' });
    expect(failed.message).toMatch(/HTTP 500/);
    const reset = await call(t, hw, turn.turnId, 'raw__put', { mode: 'reset' });
    expect(reset).toMatchObject({ ok: false, status: 'UPSTREAM_ERROR', attempts: 1 });
    const readReset = await call(t, hw, turn.turnId, 'raw__get', { mode: 'reset' });
    expect(readReset).toMatchObject({ ok: false, status: 'UPSTREAM_ERROR', attempts: 2 });
  });

  it('should turn bare strings in content into text items rather than break the call', async () => {
    const turn = await begin(t, hw);
    const res = await call(t, hw, turn.turnId, 'raw__get', { mode: 'strings' });
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED' });
    expect(res.content).toEqual([
      { type: 'text', text: 'plain string' },
      { type: 'text', text: '7' },
    ]);
  });

  it("should never pass the connection's key on, even when the server echoes it", async () => {
    const turn = await begin(t, hw);
    const res = await call(t, hw, turn.turnId, 'raw__get', { mode: 'echo-key' });
    expect(res).toMatchObject({ ok: false, status: 'TOOL_ERROR' });
    expect(res.message).toBe('The tool raw__get reported an error: key rejected: Bearer [redacted]');
    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, hw.customer);
    const everything = JSON.stringify([res, calls]);
    expect(everything).not.toContain(RAW_KEY);
    // The key did go to the server, as it should.
    expect(raw.requests.some((r) => r.headers.authorization === `Bearer ${RAW_KEY}`)).toBe(true);
  });
});

describe('declared names', () => {
  it('should be valid and unique for long, clashing names', async () => {
    const longPeer = await startSdkServer({
      stateful: false,
      json: true,
      tools: [
        ...Array.from({ length: 6 }, (_, i) => ({
          name: `${'very_long_operation_name_'.repeat(4)}${i}`,
          annotations: { readOnlyHint: true },
        })),
        { name: 'get.thing', annotations: { readOnlyHint: true } },
        { name: 'get_thing', annotations: { readOnlyHint: true } },
        { name: 'get-thing', annotations: { readOnlyHint: true } },
      ],
    });
    try {
      const lw = await buildWorld(
        t,
        longPeer.url,
        'An Extremely Long Connection Name For Testing Declared Names',
      );
      await connectTools(t, lw);
      const turn = await begin(t, lw);
      const names = turn.tools.map((x) => x.name);
      expect(names.at(-1)).toBe('finish_turn');
      for (const n of names) expect(n).toMatch(DECLARED_NAME_PATTERN);
      expect(new Set(names).size).toBe(names.length);
      // Every declared name resolves to its own tool.
      for (const n of names.slice(1, -1)) {
        const res = await call(t, lw, turn.turnId, n);
        expect([n, res.status, res.message]).toEqual([n, 'SUCCEEDED', null]);
      }
    } finally {
      await longPeer.close();
    }
  });
});
