/**
 * The two tool sources `npm run demo` connects, on loopback ports of their own:
 * - an MCP server built with the official SDK (Streamable HTTP, stateless), with a READ tool
 *   (`lookup_order`, readOnlyHint) and a WRITE tool (`refund_order`);
 * - a small HTTP service with its OpenAPI description served at `/openapi.json`: a READ
 *   (`GET /tickets/{id}`) and a WRITE (`POST /tickets`) over tickets kept in memory.
 * Each records what it received, so the demo can show that a call really reached it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface Peer {
  /** MCP: the endpoint; OpenAPI: the description's address. */
  url: string;
  /** What it received, one line each (`POST /tickets {"title":…}`). */
  received: string[];
  close(): Promise<void>;
}

const ORDERS: Record<string, { item: string; status: string; total: string }> = {
  'A-1001': { item: '2 × coffee beans, 1 kg', status: 'shipped', total: '39.80 EUR' },
  'A-1002': { item: 'grinder', status: 'awaiting payment', total: '129.00 EUR' },
};

async function readBody(req: IncomingMessage, max = 1_048_576): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: Server): () => Promise<void> {
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

function orderServer(received: string[]): McpServer {
  const mcp = new McpServer({ name: 'demo-orders', version: '1.0.0' }, { capabilities: { tools: {} } });
  mcp.registerTool(
    'lookup_order',
    {
      description: 'Look an order up by its number (such as A-1001): item, status and total.',
      inputSchema: { orderId: z.string().describe('The order number, such as A-1001') },
      annotations: { readOnlyHint: true },
    },
    ({ orderId }) => {
      received.push(`tools/call lookup_order ${JSON.stringify({ orderId })}`);
      const order = ORDERS[orderId];
      if (!order) return { isError: true, content: [{ type: 'text', text: `no order ${orderId}` }] };
      return {
        content: [{ type: 'text', text: `Order ${orderId}: ${order.item}, ${order.status}, ${order.total}` }],
        structuredContent: { orderId, ...order },
      };
    },
  );
  mcp.registerTool(
    'refund_order',
    {
      description: 'Refund an order in full. Moves money: only when the customer asked for it.',
      inputSchema: { orderId: z.string(), reason: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    ({ orderId, reason }) => {
      received.push(`tools/call refund_order ${JSON.stringify({ orderId, reason })}`);
      return { content: [{ type: 'text', text: `Refund of ${orderId} started (${reason})` }] };
    },
  );
  return mcp;
}

/** The MCP server at `/mcp` (stateless: one SDK server per request, answers as JSON). */
export async function startMcpPeer(): Promise<Peer> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      if (req.url !== '/mcp' || req.method !== 'POST') {
        res.writeHead(req.url === '/mcp' ? 405 : 404).end();
        return;
      }
      const body = parseJson(await readBody(req));
      const mcp = orderServer(received);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const base = await listen(server);
  return { url: `${base}/mcp`, received, close: closer(server) };
}

function description(base: string): Record<string, unknown> {
  const ticket = {
    type: 'object',
    properties: { id: { type: 'string' }, title: { type: 'string' }, body: { type: 'string' } },
  };
  return {
    openapi: '3.0.3',
    info: { title: 'Helpdesk', version: '1.0.0' },
    servers: [{ url: base }],
    paths: {
      '/tickets/{ticketId}': {
        get: {
          operationId: 'getTicket',
          summary: 'Read a support ticket',
          parameters: [{ name: 'ticketId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The ticket', content: { 'application/json': { schema: ticket } } },
            '404': { description: 'No such ticket' },
          },
        },
      },
      '/tickets': {
        post: {
          operationId: 'createTicket',
          summary: 'Open a support ticket',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['title'],
                  properties: { title: { type: 'string' }, body: { type: 'string' } },
                },
              },
            },
          },
          responses: {
            '201': { description: 'Created', content: { 'application/json': { schema: ticket } } },
          },
        },
      },
    },
  };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** The helpdesk service; its description is at `/openapi.json`. */
export async function startOpenApiPeer(): Promise<Peer> {
  const received: string[] = [];
  const tickets = new Map<string, { id: string; title: string; body: string }>([
    ['T-1', { id: 'T-1', title: 'Beans arrived wet', body: 'Order A-1001' }],
  ]);
  let base = '';
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method === 'GET' && path === '/openapi.json') return send(res, 200, description(base));
      received.push(`${req.method} ${path}${text ? ` ${text}` : ''}`);
      const one = /^\/tickets\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && one) {
        const found = tickets.get(decodeURIComponent(one[1]!));
        return found ? send(res, 200, found) : send(res, 404, { error: 'no such ticket' });
      }
      if (req.method === 'POST' && path === '/tickets') {
        const input = parseJson(text) as { title?: unknown; body?: unknown } | undefined;
        if (typeof input?.title !== 'string') return send(res, 400, { error: 'title is required' });
        const id = `T-${tickets.size + 1}`;
        const created = { id, title: input.title, body: typeof input.body === 'string' ? input.body : '' };
        tickets.set(id, created);
        return send(res, 201, created);
      }
      send(res, 404, { error: 'not found' });
    })().catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal' });
    });
  });
  base = await listen(server);
  return { url: `${base}/openapi.json`, received, close: closer(server) };
}
