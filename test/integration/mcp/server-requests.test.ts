/**
 * A tool that asks the client for input during the call (issue 25, item 6): an SDK server sends
 * `elicitation/create`, `sampling/createMessage` or `roots/list` on the call's stream. The
 * platform declines the elicitation (`action: "decline"`), refuses sampling and roots with the
 * spec's -32601, and the model reads plainly that the tool needed something the platform cannot
 * give inside a conversation.
 *
 * The SDK's own `server.elicitInput` refuses to ask a client that declared no elicitation
 * capability (ours declares none), so these tools send the requests through the handler's
 * `sendRequest`, on the call's stream, as servers of other SDKs (FastMCP) do regardless.
 */
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';

/** What each tool got back from the client, for the test to see. */
const got: Record<string, unknown> = {};

/** Runs `ask`; the tool answers with what came back, as a tool would (or its error, as isError). */
const asking =
  (name: string, ask: PeerTool['handler']): PeerTool['handler'] =>
  async (args, extra) => {
    try {
      const answer = await ask!(args, extra);
      got[name] = answer;
      return answer;
    } catch (err) {
      got[name] = err instanceof McpError ? { code: err.code, message: err.message } : String(err);
      return { isError: true, content: [{ type: 'text', text: `could not ask: ${(err as Error).message}` }] };
    }
  };

const TOOLS: PeerTool[] = [
  {
    name: 'ask_warehouse',
    annotations: { readOnlyHint: true },
    handler: asking('ask_warehouse', async (_args, extra) => {
      const r = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: 'Which warehouse?',
            requestedSchema: { type: 'object', properties: { warehouse: { type: 'string' } } },
          },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: 'text', text: `the user chose to ${r.action}` }] };
    }),
  },
  {
    name: 'summarize',
    annotations: { readOnlyHint: true },
    handler: asking('summarize', async (_args, extra) => {
      await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: 'Summarize' } }],
            maxTokens: 50,
          },
        },
        CreateMessageResultSchema,
      );
      return { content: [{ type: 'text', text: 'summarized' }] };
    }),
  },
  {
    name: 'list_files',
    annotations: { readOnlyHint: true },
    handler: asking('list_files', async (_args, extra) => {
      const r = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
      return { content: [{ type: 'text', text: `${r.roots.length} roots` }] };
    }),
  },
  { name: 'plain', annotations: { readOnlyHint: true } },
];

let t: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  t = await startTestApp();
  // Stateful (our answer to its request must reach the same session) and answering as a stream.
  peer = await startSdkServer({ stateful: true, json: false, tools: TOOLS });
  w = await buildWorld(t, peer.url, 'Asks');
  await connectTools(t, w);
});

afterAll(async () => {
  await t?.stop();
  await peer?.close();
});

const NEEDS = (what: string) =>
  `The tool asks__${'%s'} needs ${what} before it can finish, and the platform cannot provide that inside a conversation, so the request was declined`;

describe('requests a tool server sends during a call', () => {
  it('should decline an elicitation, and tell the model the tool needed an answer from the user', async () => {
    const turn = await begin(t, w, 'elicit');
    const res = await call(t, w, turn.turnId, 'asks__ask_warehouse', {});
    expect(got.ask_warehouse).toEqual({ content: [{ type: 'text', text: 'the user chose to decline' }] });
    expect(res).toMatchObject({ ok: false, status: 'TOOL_ERROR', recorded: true });
    expect(res.message).toBe(
      `${NEEDS('an answer from the user').replace('%s', 'ask_warehouse')}; the tool then said: the user chose to decline. Tell the customer this action must be done another way.`,
    );
    expect(res.message).not.toContain('Method not found');
  });

  it.each([
    ['summarize', 'a model completion', 'Sampling not supported'],
    ['list_files', 'a list of folders', 'Roots not supported'],
  ])('should refuse %s with -32601, and tell the model the tool needed %s', async (tool, needs, refusal) => {
    const turn = await begin(t, w, tool);
    const res = await call(t, w, turn.turnId, `asks__${tool}`, {});
    expect(got[tool]).toEqual({ code: -32601, message: `MCP error -32601: ${refusal}` });
    expect(res).toMatchObject({ ok: false, status: 'TOOL_ERROR', recorded: true });
    expect(res.message).toBe(
      `${NEEDS(needs).replace('%s', tool)}; the tool then said: could not ask: MCP error -32601: ${refusal}. Tell the customer this action must be done another way.`,
    );
  });

  it('should leave a call that asks for nothing as it was', async () => {
    const turn = await begin(t, w, 'plain');
    const res = await call(t, w, turn.turnId, 'asks__plain', { q: 1 });
    expect(res).toMatchObject({ ok: true, status: 'SUCCEEDED', message: null });
  });
});
