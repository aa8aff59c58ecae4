/**
 * The MCP endpoint's Turns on fake time (issue 30): a conversation's calls share one Turn while it
 * is busy, and a Turn with no call for MCP_TURN_IDLE_MS (10 minutes, the real default) is finished
 * for it: the next call opens a new Turn. The clock moves by hand, so nothing waits ten minutes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../../support/fake-clock.js';
import { endpointUrl, mcpRequest, mintMcpClientToken, recordedCalls } from '../../support/mcp-endpoint.js';
import { startCrmWorld, type CrmFixture } from '../../support/turns.js';

const IDLE_MS = 10 * 60_000; // MCP_TURN_IDLE_MS's default
/** Near real time, so rows the database stamps itself agree with the clock's. */
const clock = new FakeClock(Date.now());
let f: CrmFixture;
let token: string;
let url: URL;

beforeAll(async () => {
  f = await startCrmWorld('Idle', { clock });
  token = await mintMcpClientToken(f.t, f.w, 'idle');
  url = endpointUrl(f.t, f.w.assistantId);
});
afterAll(async () => {
  await f.stop();
});

/** One stateless `tools/call` of the lookup tool; the Turn it was recorded on. */
async function lookupTurn(email: string): Promise<string> {
  const res = await mcpRequest(url, token, {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'idle__lookup', arguments: { email } },
    },
    headers: { 'mcp-protocol-version': '2025-11-25' },
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const [row] = await recordedCalls(f.t, f.w.assistantId, 'idle__lookup', { email });
  return row!.turnId;
}

it('keeps a conversation on one Turn within the idle time and opens a new one after it', async () => {
  const first = await lookupTurn('a@example.com');
  await clock.advance(IDLE_MS - 60_000);
  // Nine minutes later: still the same Turn, and the idle time starts again from this call.
  expect(await lookupTurn('b@example.com')).toBe(first);
  await clock.advance(IDLE_MS - 1);
  expect(await lookupTurn('c@example.com')).toBe(first);
  await clock.advance(IDLE_MS + 1);
  const next = await lookupTurn('d@example.com');
  expect(next).not.toBe(first);
  expect(await lookupTurn('e@example.com')).toBe(next);
});
