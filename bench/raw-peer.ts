/**
 * A raw MCP peer for the benches: a minimal `node:http` JSON-RPC responder (no SDK), stateless,
 * answering in JSON. It speaks just enough for discovery and calls: `initialize`, notifications,
 * `tools/list` (one page) and `tools/call` (a short text). Tools named `write_*` are WRITEs (no
 * read-only hint). Run as a child process: prints its URL on stdout, exits on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const count = Number(process.argv[2] ?? '3');
const tools = Array.from({ length: count }, (_, i) => {
  const write = i % 10 === 9;
  return {
    name: write ? `write_${i}` : `tool_${i}`,
    description: `Tool number ${i}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    annotations: write ? { readOnlyHint: false, destructiveHint: false } : { readOnlyHint: true },
  };
});
const CALL_RESULT = { content: [{ type: 'text', text: 'ok' }], isError: false };

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let msg: { id?: number | string; method?: string; params?: { protocolVersion?: string } };
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof msg;
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (msg.id === undefined) {
      res.writeHead(202).end(); // a notification
      return;
    }
    let result: unknown;
    if (msg.method === 'initialize')
      result = {
        protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'raw-peer', version: '1.0.0' },
      };
    else if (msg.method === 'tools/list') result = { tools };
    else if (msg.method === 'tools/call') result = CALL_RESULT;
    else if (msg.method === 'ping') result = {};
    const body = JSON.stringify(
      result === undefined
        ? { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }
        : { jsonrpc: '2.0', id: msg.id, result },
    );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
