/**
 * Bytes PostgreSQL cannot store (NUL, lone surrogates) and arguments over the limits: every call is
 * still recorded, a WRITE still has its ledger row, and the tool still gets exactly what the model sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerSweep } from '../../../src/turns/ledger-sweep.js';
import { LedgerDocument, TurnCallsDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';
const FFFD = '\ufffd';

let releaseSlowPay: () => void = () => undefined;
const slowPayGate = new Promise<void>((resolve) => {
  releaseSlowPay = resolve;
});

const TOOLS: PeerTool[] = [
  { name: 'pay', description: 'Pays (a WRITE)' },
  { name: 'look', description: 'Looks (a READ)', annotations: { readOnlyHint: true } },
  {
    name: 'slow_pay',
    description: 'Pays, slowly',
    handler: async () => {
      await slowPayGate; // answers when the test has seen it in flight, not after a time
      return { content: [{ type: 'text', text: 'paid' }] };
    },
  },
  {
    name: 'nul_text',
    annotations: { readOnlyHint: true },
    handler: () => ({ content: [{ type: 'text', text: `paid 100${NUL}EUR ${LONE_LOW}` }] }),
  },
  {
    name: 'nul_error',
    handler: () => ({ isError: true, content: [{ type: 'text', text: `refused${NUL}: card ${LONE_HIGH}` }] }),
  },
  {
    name: 'nul_structured',
    handler: () => ({
      content: [{ type: 'text', text: 'ok' }],
      structuredContent: { [`k${NUL}`]: `v${NUL}`, nested: [{ deep: `x${LONE_HIGH}y` }] },
    }),
  },
];

let t: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: TOOLS });
  w = await buildWorld(t, peer.url, 'Pay');
  await connectTools(t, w);
});

afterAll(async () => {
  releaseSlowPay();
  await t?.stop();
  await peer?.close();
});

function received(name: string): unknown[] {
  return peer.requests
    .filter((r) => r.method === 'tools/call' && (r.params as { name: string }).name === name)
    .map((r) => (r.params as { arguments: unknown }).arguments);
}

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  return t.app.services.orm.em.getConnection().execute<T[]>(text, params);
}

async function ledgerOf(callId: string) {
  const led = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
  return led.workspace!.ledger.nodes.filter((n) => n.turnCallId === callId);
}

describe('the ledger: intent before the request, outcome after', () => {
  it('should show a WRITE as RUNNING while it is in flight, leave it to the sweep only when overdue, then show its outcome', async () => {
    const turn = await begin(t, w, 'intent');
    const pending = call(t, w, turn.turnId, 'pay__slow_pay', { amount: 5 });
    await waitUntil(() => received('slow_pay').length > 0);
    // The request is out, so its intent is stored: the ledger shows it running.
    const during = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
    const running = during.workspace!.ledger.nodes.filter((n) => n.operationKey === 'connector.pay.slow_pay');
    expect(running).toEqual([
      expect.objectContaining({ status: 'RUNNING', outcomeBy: null, arguments: { amount: 5 } }),
    ]);
    // A sweep closes only intents older than its threshold: an in-flight call is left alone.
    const sweep = new LedgerSweep(t.app.services.orm, t.app.services.logger, {
      afterMs: 60_000,
      everyMs: 60_000,
    });
    expect(await sweep.runOnce()).toBe(0);
    releaseSlowPay();
    const res = await pending;
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: true });
    const after = await ledgerOf(res.callId!);
    expect(after).toEqual([expect.objectContaining({ status: 'SUCCEEDED', attempts: 1, outcomeBy: 'CALL' })]);
    expect(await sweep.runOnce()).toBe(0);
    // Intent and outcome are two append-only rows.
    const rows = await sql<{ intent: string; outcome: string; by: string }>(
      `select l.status as intent, o.status as outcome, o.closed_by as by from ledger_entry l join ledger_outcome o on o.ledger_entry_id = l.id where l.turn_call_id = ?`,
      [rawId(res.callId!)],
    );
    expect(rows).toEqual([{ intent: 'RUNNING', outcome: 'SUCCEEDED', by: 'CALL' }]);
  });
});

describe('text PostgreSQL cannot store', () => {
  it('should pass NUL and lone surrogates to the tool unchanged and record the WRITE with U+FFFD', async () => {
    const turn = await begin(t, w, 'nul-args');
    const args = {
      v: `pay 100${NUL}EUR`,
      [`key${NUL}`]: [`a${LONE_HIGH}`, { b: `${LONE_LOW}c` }],
      ok: 'plain',
    };
    const res = await call(t, w, turn.turnId, 'pay__pay', args);
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: true });
    expect(res.callId).not.toBeNull();
    // Exactly what the model sent reached the tool.
    expect(received('pay')).toEqual([args]);

    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(calls.turn!.calls.nodes).toEqual([
      expect.objectContaining({
        declaredName: 'pay__pay',
        status: 'SUCCEEDED',
        arguments: {
          v: `pay 100${FFFD}EUR`,
          [`key${FFFD}`]: [`a${FFFD}`, { b: `${FFFD}c` }],
          ok: 'plain',
        },
      }),
    ]);
    const ledger = await ledgerOf(res.callId!);
    expect(ledger).toEqual([
      expect.objectContaining({
        status: 'SUCCEEDED',
        arguments: expect.objectContaining({ v: `pay 100${FFFD}EUR` }),
      }),
    ]);
    const events = await sql<{ type: string }>(`select type from turn_event where call_id = ? order by seq`, [
      rawId(res.callId!),
    ]);
    expect(events.map((e) => e.type)).toEqual(['CALL_STARTED', 'CALL_FINISHED']);
  });

  it.each([
    ['a tool result text (READ)', 'pay__nul_text', 'SUCCEEDED', `paid 100${NUL}EUR ${LONE_LOW}`],
    ['an isError text (WRITE)', 'pay__nul_error', 'TOOL_ERROR', `refused${NUL}: card ${LONE_HIGH}`],
    ['structuredContent (WRITE)', 'pay__nul_structured', 'SUCCEEDED', 'ok'],
  ])(
    'should record a call whose tool put NUL in %s, and give the model the real text',
    async (_, name, status, text) => {
      const turn = await begin(t, w, `nul-${name}`);
      const res = await call(t, w, turn.turnId, name, {});
      expect(res).toMatchObject({ status, recorded: true });
      expect(res.content).toEqual([{ type: 'text', text }]);
      const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
      expect(calls.turn!.calls.nodes.map((c) => [c.declaredName, c.status])).toEqual([[name, status]]);
      const message = calls.turn!.calls.nodes[0]!.message;
      if (status === 'TOOL_ERROR') {
        expect(res.message).toContain(NUL);
        expect(message).toBe(`The tool ${name} reported an error: refused${FFFD}: card ${FFFD}`);
      }
      if (name === 'pay__nul_structured') {
        expect(res.structuredContent).toEqual({
          [`k${NUL}`]: `v${NUL}`,
          nested: [{ deep: `x${LONE_HIGH}y` }],
        });
      }
      const ledger = await ledgerOf(res.callId!);
      expect(ledger.map((l) => l.status)).toEqual(name === 'pay__nul_text' ? [] : [status]);
      const finished = await sql<{ n: string }>(
        `select count(*) as n from turn_event where call_id = ? and type = 'CALL_FINISHED'`,
        [rawId(res.callId!)],
      );
      expect(Number(finished[0]!.n)).toBe(1);
    },
  );

  it('should refuse a tool name with NUL at the edge (the name is a String; only arguments are exempt)', async () => {
    const turn = await begin(t, w, 'nul-name');
    const res = await callRaw(turn.turnId, `pay${NUL}__pay`, '{}');
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(calls.turn!.calls.nodes).toEqual([]);
  });
});

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

/** The JSON text of nested(depth), built without recursion (JSON.stringify overflows the stack). */
function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{"leaf":true}${'}'.repeat(depth - 1)}`;
}

const CALL_TOOL = `mutation($input: CallToolInput!) { callTool(input: $input) { ok status message callId seq recorded attempts } }`;

/** callTool through HTTP with the arguments given as JSON text in the variables. */
async function callRaw(turnId: string, name: string, argumentsJson: string) {
  const body = `{"query":${JSON.stringify(CALL_TOOL)},"variables":{"input":{"turnId":${JSON.stringify(turnId)},"name":${JSON.stringify(name)},"arguments":${argumentsJson}}}}`;
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${w.runtime}` },
    body,
  });
  return (await res.json()) as {
    data?: {
      callTool: {
        ok: boolean;
        status: string;
        message: string | null;
        callId: string | null;
        seq: number | null;
        recorded: boolean;
        attempts: number;
      };
    };
    errors?: { extensions?: { code?: string } }[];
  };
}

function literal(depth: number): string {
  return `${'{a: '.repeat(depth - 1)}{leaf: true}${'}'.repeat(depth - 1)}`;
}

describe('arguments over the limits', () => {
  it('should accept arguments exactly at the depth limit (64)', async () => {
    const turn = await begin(t, w, 'depth-ok');
    const res = await call(t, w, turn.turnId, 'pay__look', nested(64));
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: true });
  });

  it.each([
    ['65 deep', nestedJson(65), /nested more than 64 levels/],
    ['6,000 deep', nestedJson(6_000), /nested more than 64 levels/],
    [
      '100,000 deep in an array',
      `${'['.repeat(99_999)}{"x":1}${']'.repeat(99_999)}`.replace(/^\[/, '{"v":[') + '}',
      /nested more than 64 levels/,
    ],
    ['300 KiB', JSON.stringify({ blob: 'x'.repeat(300 * 1024) }), /over the limit of 262144/],
  ])(
    'should refuse arguments %s as REJECTED before anything is sent, and record a short note',
    async (label, json, pattern) => {
      const turn = await begin(t, w, `limits-${label}`);
      const before = received('pay').length;
      const answer = await callRaw(turn.turnId, 'pay__pay', json);
      expect(answer.errors).toBeUndefined();
      const res = answer.data!.callTool;
      expect(res).toMatchObject({ ok: false, status: 'REJECTED', seq: 1, recorded: true, attempts: 0 });
      expect(res.message).toMatch(pattern);
      expect(received('pay').length).toBe(before);
      const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
      const recorded = calls.turn!.calls.nodes;
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ status: 'REJECTED', risk: 'WRITE' });
      expect(JSON.stringify(recorded[0]!.arguments).length).toBeLessThan(200);
      expect(recorded[0]!.arguments).toHaveProperty('_refused');
      // Nothing was attempted: no ledger row, and no CALL_STARTED without its CALL_FINISHED.
      expect(await ledgerOf(res.callId!)).toEqual([]);
      const events = await sql<{ type: string }>(
        `select type from turn_event where call_id = ? order by seq`,
        [rawId(res.callId!)],
      );
      expect(events.map((e) => e.type)).toEqual(['CALL_FINISHED']);
    },
  );

  it.each([100, 1_000, 3_000, 6_000])(
    'should answer a %i-deep literal through HTTP GraphQL with REJECTED or BAD_USER_INPUT, never INTERNAL',
    async (depth) => {
      const turn = await begin(t, w, `literal-${depth}`);
      const res = await t.gql<{ callTool: { status: string; message: string | null } }, never>(
        `mutation { callTool(input: { turnId: "${turn.turnId}", name: "pay__pay", arguments: ${literal(depth)} }) { status message } }`,
        undefined,
        w.runtime,
      );
      if (res.errors) expect(res.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      else
        expect(res.data!.callTool).toMatchObject({
          status: 'REJECTED',
          message: expect.stringMatching(/nested more than 64/),
        });
    },
  );

  it('should take a shallow literal', async () => {
    const turn = await begin(t, w, 'literal-shallow');
    const shallow = await t.gql<{ callTool: { status: string } }, never>(
      `mutation { callTool(input: { turnId: "${turn.turnId}", name: "pay__look", arguments: ${literal(3)} }) { status } }`,
      undefined,
      w.runtime,
    );
    expect(shallow.data?.callTool.status).toBe('SUCCEEDED');
  });
});
