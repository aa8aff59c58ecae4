/**
 * `x-mcp-header` (2026-07-28): a modern call mirrors the annotated arguments into `Mcp-Param-*`
 * headers, as the server receives them; a legacy call does not; discovery leaves out a tool whose
 * annotations break the rules (the pure rules are in test/unit/mcp/param-headers.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {} from '../../../src/http/outbound.js';
import { type McpEndpoint } from '../../../src/mcp/client.js';
import { ToolCollector } from '../../../src/mcp/tool-mapping.js';
import { startModernOnlyServer } from '../../support/mcp-version-servers.js';
import { cleanupAfterEach } from '../../support/cleanups.js';
import { mcpClient } from '../../support/mcp-client.js';

const cleanups = cleanupAfterEach();

const client = () => mcpClient(cleanups);

const READ = { risk: 'READ', idempotent: false } as const;
const inputSchema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    limit: { type: 'integer', 'x-mcp-header': 'Limit' },
    text: { type: 'string' },
  },
};

describe('Mcp-Param-* headers', () => {
  it('should mirror the annotated arguments of a modern call, encoded, and leave the others out', async () => {
    const s = await startModernOnlyServer();
    cleanups.push(() => s.close());
    const ep: McpEndpoint = {
      id: 'params-1',
      url: s.url,
      auth: { kind: 'none' },
      protocolVersion: '2026-07-28',
    };
    const outcome = await client().callTool(
      ep,
      'echo',
      { region: 'Zürich', limit: 5, text: 'hi' },
      { ...READ, inputSchema },
    );
    expect(outcome.kind).toBe('success');
    const headers = s.requests.at(-1)!.headers;
    expect(headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
    expect(headers['mcp-param-limit']).toBe('5');
    expect(Object.keys(headers).filter((h) => h.startsWith('mcp-param-'))).toHaveLength(2);
  });

  it('should send no header for an argument that is absent', async () => {
    const s = await startModernOnlyServer();
    cleanups.push(() => s.close());
    const ep: McpEndpoint = {
      id: 'params-2',
      url: s.url,
      auth: { kind: 'none' },
      protocolVersion: '2026-07-28',
    };
    await client().callTool(ep, 'echo', { text: 'hi' }, { ...READ, inputSchema });
    expect(Object.keys(s.requests.at(-1)!.headers).filter((h) => h.startsWith('mcp-param-'))).toEqual([]);
  });

  it('should leave out, with a reason, a listed tool whose annotation breaks the rules', () => {
    const collector = new ToolCollector(10);
    collector.add([
      { name: 'good', inputSchema },
      {
        name: 'bad',
        inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
      },
    ]);
    expect(collector.tools.map((t) => t.name)).toEqual(['good']);
    expect(collector.skipped).toEqual([
      expect.objectContaining({ name: 'bad', reason: 'PARAM_HEADER_INVALID' }),
    ]);
  });
});
