/**
 * DESIGN.md rule 2, "never discover inside a turn", as the tool server sees it: once discovery has
 * run, turns of every shape (both dialects, a tool search turn, after an operator's disable and
 * enable) send it `tools/call` and nothing else: no `initialize`, no `tools/list`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BeginSearchTurnDocument,
  DisableDocument,
  EnableDocument,
  type ToolDialect,
} from '../../generated/graphql.js';
import { begin, call, startCrmWorld, type CrmFixture } from '../../support/turns.js';

let f: CrmFixture;

beforeAll(async () => {
  f = await startCrmWorld('Nodiscover');
  // Discovery ran when the connection was made: the server has been asked for its tools.
  expect(f.peer.count('tools/list')).toBeGreaterThan(0);
});
afterAll(async () => {
  await f.stop();
});

/** What the tool server receives while `during` runs: each request's JSON-RPC method (or HTTP verb). */
async function seenDuring(during: () => Promise<void>): Promise<string[]> {
  const from = f.peer.requests.length;
  await during();
  return f.peer.requests.slice(from).map((r) => r.method ?? r.httpMethod);
}

/** The turn's declared name of the CRM tool `name`. */
function declared(tools: readonly { name: string }[], name: string): string {
  const found = tools.find((t) => t.name.endsWith(`__${name}`));
  if (found === undefined)
    throw new Error(`${name} is not declared in ${tools.map((t) => t.name).join(', ')}`);
  return found.name;
}

async function beginIn(dialect: ToolDialect, conversationId: string, mode: 'OFF' | 'ON' = 'OFF') {
  return (
    await f.t.ok(
      BeginSearchTurnDocument,
      { input: { assistantId: f.w.assistantId, conversationId, dialect, toolSearch: { mode } } },
      f.w.runtime,
    )
  ).beginTurn;
}

describe('never discover inside a turn', () => {
  it.each<ToolDialect>(['GENERIC', 'OPENAI'])(
    'should send the tool server only tools/call in a %s turn',
    async (dialect) => {
      const seen = await seenDuring(async () => {
        const turn = await beginIn(dialect, `conv-${dialect}`);
        const lookup = declared(turn.tools, 'lookup');
        expect((await call(f.t, f.w, turn.turnId, lookup, { email: 'a@x.test' })).status).toBe('SUCCEEDED');
        const update = declared(turn.tools, 'update');
        const args = { email: 'a@x.test', plan: 'pro' };
        expect((await call(f.t, f.w, turn.turnId, update, args)).status).toBe('SUCCEEDED');
        expect((await call(f.t, f.w, turn.turnId, declared(turn.tools, 'fails'))).status).toBe('TOOL_ERROR');
      });
      expect(seen).toEqual(['tools/call', 'tools/call', 'tools/call']);
    },
  );

  it('should send the tool server only tools/call in a tool search turn, the search itself sending nothing', async () => {
    const seen = await seenDuring(async () => {
      const turn = await beginIn('GENERIC', 'conv-search', 'ON');
      expect(turn.toolSearch.on).toBe(true);
      const search = await call(f.t, f.w, turn.turnId, 'search_tools', { query: 'look a customer up' });
      expect(search.status).toBe('SUCCEEDED');
      const hits = (search.structuredContent?.tools ?? []) as { name: string }[];
      const lookup = declared(hits, 'lookup');
      expect((await call(f.t, f.w, turn.turnId, lookup, { email: 'b@x.test' })).status).toBe('SUCCEEDED');
    });
    expect(seen).toEqual(['tools/call']);
  });

  it('should send the tool server nothing for a disabled tool and only tools/call once it is enabled again', async () => {
    const op = f.w.ops.lookup!;
    const seen = await seenDuring(async () => {
      await f.t.ok(DisableDocument, { input: { operationId: op.id, reason: 'incident' } }, f.w.operator);
      const off = await begin(f.t, f.w, 'conv-disabled');
      expect(off.tools.some((t) => t.name.endsWith('__lookup'))).toBe(false);
      const refused = await call(f.t, f.w, off.turnId, 'nodiscover__lookup', { email: 'c@x.test' });
      expect(refused.ok).toBe(false);

      await f.t.ok(EnableDocument, { input: { operationId: op.id } }, f.w.operator);
      const on = await begin(f.t, f.w, 'conv-enabled');
      const lookup = declared(on.tools, 'lookup');
      expect((await call(f.t, f.w, on.turnId, lookup, { email: 'c@x.test' })).status).toBe('SUCCEEDED');
    });
    expect(seen).toEqual(['tools/call']);
  });
});
