/**
 * The SDK 2.4 client (`@modelcontextprotocol/client`, a client nobody here wrote) against the
 * endpoint over Streamable HTTP, in the legacy era (2025-11-25, its default) and pinned to
 * 2026-07-28, each with answers as JSON and as an event stream: it lists the assistant's tools,
 * calls a READ and a WRITE, and each call is a TurnCall, the WRITE with its ledger row (issue 27).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  endpointUrl,
  fetchFor,
  type AnswerForm,
  mintMcpClientToken,
  recordedCalls,
} from '../../support/mcp-endpoint.js';
import { buildWorld, startCrmWorld, type CrmFixture } from '../../support/turns.js';

let f: CrmFixture;
let token: string;

beforeAll(async () => {
  f = await startCrmWorld('Sdk2');
  token = await mintMcpClientToken(f.t, f.w, 'sdk2 client');
});
afterAll(async () => {
  await f.stop();
});

async function connect(era: 'legacy' | '2026-07-28', answer: AnswerForm, seen: string[]): Promise<Client> {
  const client = new Client(
    { name: 'sdk2-test', version: '1.0.0' },
    era === 'legacy' ? {} : { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const transport = new StreamableHTTPClientTransport(endpointUrl(f.t, f.w.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: fetchFor(answer, seen),
  });
  await client.connect(transport);
  return client;
}

const ERAS = [
  ['legacy', 'json'],
  ['legacy', 'sse'],
  ['2026-07-28', 'json'],
  ['2026-07-28', 'sse'],
] as const satisfies readonly (readonly ['legacy' | '2026-07-28', AnswerForm])[];

describe.each(ERAS)('SDK 2.4 client, %s era, %s answers', (era, answer) => {
  it('lists the tools, calls a READ and a WRITE; both are TurnCalls and the WRITE has its ledger row', async () => {
    const seen: string[] = [];
    const email = `${era}-${answer}@example.com`;
    const client = await connect(era, answer, seen);
    try {
      const listed = await client.listTools();
      const names = listed.tools.map((t) => t.name).sort();
      expect(names).toEqual([
        'sdk2__fails',
        'sdk2__lookup',
        'sdk2__slow_read',
        'sdk2__slow_write',
        'sdk2__update',
      ]);
      expect(names).not.toContain('finish_turn');
      const lookup = listed.tools.find((t) => t.name === 'sdk2__lookup')!;
      expect(lookup.inputSchema).toMatchObject({ type: 'object', properties: { email: { type: 'string' } } });

      // Without a session (2026-07-28), the conversation is named in _meta; it keys the Turn.
      const _meta = era === 'legacy' ? undefined : { 'io.connected-tools/conversationId': email };
      const read = await client.callTool({ name: 'sdk2__lookup', arguments: { email }, _meta });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain(email);
      const write = await client.callTool({ name: 'sdk2__update', arguments: { email, plan: 'pro' }, _meta });
      expect(write.isError).toBeFalsy();
      expect(JSON.stringify(write.content)).toContain('pro');
      // A failure of the tool is a result with isError, not a protocol error.
      const failed = await client.callTool({ name: 'sdk2__fails', arguments: {} });
      expect(failed.isError).toBe(true);

      // The answers came in the form asked for.
      const expected = answer === 'json' ? 'application/json' : 'text/event-stream';
      expect(seen.filter((c) => c.startsWith(expected)).length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
    }
    const [readRow] = await recordedCalls(f.t, f.w.assistantId, 'sdk2__lookup', { email });
    const [writeRow] = await recordedCalls(f.t, f.w.assistantId, 'sdk2__update', { email });
    expect(readRow!.turnId).toBe(writeRow!.turnId); // one session (or one conversation id), one Turn
    expect(readRow).toMatchObject({ status: 'SUCCEEDED', risk: 'READ', ledgerStatus: null });
    expect(writeRow).toMatchObject({
      status: 'SUCCEEDED',
      risk: 'WRITE',
      ledgerStatus: 'RUNNING',
      ledgerOutcome: 'SUCCEEDED',
    });
  });
});

it('the SDK client with a token of another assistant is refused with 403', async () => {
  const other = await buildWorld(f.t, f.peer.url, 'Other');
  const statuses: number[] = [];
  const client = new Client({ name: 'sdk2-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(endpointUrl(f.t, other.assistantId), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      statuses.push(res.status);
      return res;
    },
  });
  await expect(client.connect(transport)).rejects.toThrow(/not an MCP_CLIENT token of this assistant/);
  expect(statuses).toEqual([403]);
});
