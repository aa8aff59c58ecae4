/**
 * The hard-case peer (issue 26 item 7) against our own MCP client: it lists every schema exactly as
 * written (nothing rebuilt on the way), discovery skips none of them, and every tool echoes its
 * arguments back as text and as `structuredContent`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundClient } from '../../../src/http/outbound.js';
import { McpClient, type McpEndpoint } from '../../../src/mcp/client.js';
import {
  HARD_TOOLS,
  startHardSchemaServer,
  type HardSchemaServerHandle,
} from '../../support/hard-schema-server.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(): Promise<{ server: HardSchemaServerHandle; client: McpClient; ep: McpEndpoint }> {
  const server = await startHardSchemaServer();
  cleanups.push(() => server.close());
  const outbound = new OutboundClient({ allowLoopback: true });
  const client = new McpClient(outbound);
  cleanups.push(async () => {
    await client.whenIdle();
    await outbound.close();
  });
  return {
    server,
    client,
    ep: { id: 'hard-schemas', url: server.url, auth: { kind: 'none' }, timeoutMs: 10_000 },
  };
}

describe('the hard-schema peer', () => {
  it('should list every hard tool with its schema exactly as written, none skipped', async () => {
    const { client, ep } = await setup();
    const listing = await client.listTools(ep);
    expect(listing.skipped).toEqual([]);
    expect(listing.tools.map((t) => [t.name, t.inputSchema])).toEqual(
      HARD_TOOLS.map((t) => [t.name, t.inputSchema]),
    );
  });

  it('should echo the arguments of every tool as text and as structuredContent', async () => {
    const { server, client, ep } = await setup();
    for (const tool of HARD_TOOLS) {
      const outcome = await client.callTool(ep, tool.name, tool.example, { risk: 'READ', idempotent: true });
      expect(outcome, tool.name).toMatchObject({
        kind: 'success',
        content: [{ type: 'text', text: JSON.stringify(tool.example) }],
        structuredContent: { echo: tool.example },
      });
    }
    expect(server.calls).toEqual(HARD_TOOLS.map((t) => ({ name: t.name, arguments: t.example })));
  });
});
