/**
 * A raw MCP server listing 300 tools with large input schemas (about 6 KB each, 1.8 MB in all),
 * 100 per page: the load of discovery's apply step (issue #10), shared by
 * `test/integration/discovery/apply-stall.test.ts` and `bench/descriptions.bench.ts`.
 */
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawServerHandle,
} from './mcp-servers.js';

export const LARGE_TOOLS = 300;
const PAGE = 100;

/** About 6 KB of schema per tool; `extra` adds one argument to every tool. */
function tool(i: number, extra: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let p = 0; p < 40; p++)
    properties[`field_${p}`] = {
      type: 'string',
      description: `Field ${p} of tool ${i}, described at some length so that the schema is large.`,
    };
  if (extra) properties.added_later = { type: 'string' };
  return {
    name: `tool_${i}`,
    description: `Tool number ${i}${extra ? ', second version' : ''}`,
    inputSchema: { type: 'object', properties },
    annotations: { readOnlyHint: true },
  };
}

/** The server; `version` 2 and later list every tool with one more argument, `added_later`. */
export async function startLargeToolsServer(): Promise<
  RawServerHandle & { setVersion: (version: number) => void }
> {
  let version = 1;
  const server = await startRawServer((req, res) => {
    if (req.httpMethod !== 'POST') return void res.writeHead(405).end();
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
    if (req.method !== 'tools/list')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'no' } });
    const params = (req.body as { params?: { cursor?: string } }).params;
    const from = Number(params?.cursor ?? 0);
    const tools = Array.from({ length: Math.min(PAGE, LARGE_TOOLS - from) }, (_, k) =>
      tool(from + k, version > 1),
    );
    sendJson(res, 200, {
      jsonrpc: '2.0',
      id: req.id,
      result: { tools, ...(from + PAGE < LARGE_TOOLS ? { nextCursor: String(from + PAGE) } : {}) },
    });
  });
  return { ...server, setVersion: (v) => (version = v) };
}
