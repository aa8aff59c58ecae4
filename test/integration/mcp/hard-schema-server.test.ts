/**
 * The hard-case peer (issue 26 item 7) against our own MCP client: it lists every schema exactly as
 * written (nothing rebuilt on the way), discovery skips none of them, and every tool echoes its
 * arguments back as text and as `structuredContent`.
 */
import { describe, expect, it } from 'vitest';
import {} from '../../../src/http/outbound.js';
import { type McpClient, type McpEndpoint } from '../../../src/mcp/client.js';
import {
  HARD_TOOLS,
  startHardSchemaServer,
  type HardSchemaServerHandle,
} from '../../support/hard-schema-server.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

async function setup(): Promise<{ server: HardSchemaServerHandle; client: McpClient; ep: McpEndpoint }> {
  const server = await startHardSchemaServer();
  cleanups.push(() => server.close());
  const client = mcpClient(cleanups);
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
