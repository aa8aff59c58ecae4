/**
 * The service as an MCP server, for the conformance suite's SERVER scenarios
 * (`scripts/conformance.sh --server`). Starts, and keeps running until SIGTERM:
 *
 * 1. a tool server (the SDK's low-level `Server`, stateless, answering on an event stream) with
 *    the tools the suite's scenarios call: `test_simple_text`, `test_image_content`,
 *    `test_audio_content`, `test_embedded_resource`, `test_multiple_content_types`,
 *    `test_tool_with_logging`, `test_error_handling`, `test_tool_with_progress` and
 *    `json_schema_2020_12_tool`, each a READ;
 * 2. the service, on a fresh database on DATABASE_URL's server (or an embedded one), with one
 *    workspace, an assistant, and a connection to that tool server connected to the assistant;
 * 3. an MCP_CLIENT token for that assistant, minted through `createApiToken` as a user would;
 * 4. a loopback proxy in front of `POST|GET|DELETE /mcp/{assistantId}`, because the suite's
 *    server scenarios connect with a bare URL (no way to give them a header) and call the tools by
 *    the suite's fixed names. The proxy adds `Authorization: Bearer <token>`, and maps names: a
 *    `tools/call` for `test_x` goes out as `conformance__test_x` (the name `tools/list` gives), and a
 *    `tools/list` answer comes back with the `conformance__` prefix taken off. Every other byte,
 *    `Host` and `Origin` included, passes unchanged both ways, streams as they come.
 *
 * Prints two lines on stdout: the proxy's URL (for the suite) and the endpoint's own URL.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { benchDatabase, graphqlClient } from '../bench/support.js';
import { startApp } from '../src/app.js';
import { Role } from '../src/auth/api-token.entity.js';
import { mintToken } from '../src/auth/auth.service.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';

/** The connection's name; its slug prefixes every declared name (`conformance__test_simple_text`). */
const CONNECTION = 'Conformance';
const PREFIX = 'conformance__';

function log(message: string): void {
  process.stderr.write(`[conformance-server] ${message}\n`);
}

// A 1×1 PNG and a short silent WAV (44-byte header, 8 samples), as the scenarios' examples show.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const WAV = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([44, 0, 0, 0]),
  Buffer.from('WAVEfmt '),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0]),
  Buffer.from('data'),
  Buffer.from([8, 0, 0, 0]),
  Buffer.alloc(8, 128),
]).toString('base64');

const NO_ARGUMENTS = { type: 'object' as const, properties: {} };
const READ = { readOnlyHint: true };

export const CONFORMANCE_TOOLS: Tool[] = [
  {
    name: 'test_simple_text',
    description: 'Returns a simple text',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  {
    name: 'test_image_content',
    description: 'Returns an image',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  { name: 'test_audio_content', description: 'Returns audio', inputSchema: NO_ARGUMENTS, annotations: READ },
  {
    name: 'test_embedded_resource',
    description: 'Returns an embedded resource',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and a resource',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  {
    name: 'test_tool_with_logging',
    description: 'Logs three messages while it runs',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  { name: 'test_error_handling', description: 'Always fails', inputSchema: NO_ARGUMENTS, annotations: READ },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100',
    inputSchema: NO_ARGUMENTS,
    annotations: READ,
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    annotations: READ,
  },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const resource = {
  uri: 'test://embedded-resource',
  mimeType: 'text/plain',
  text: 'This is an embedded resource content.',
};

function toolServer(): Server {
  const server = new Server(
    { name: 'conformance-tools', version: '1.0.0' },
    { capabilities: { tools: {}, logging: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: CONFORMANCE_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    switch (request.params.name) {
      case 'test_simple_text':
        return { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] };
      case 'test_image_content':
        return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return { content: [{ type: 'resource', resource }] };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: {
                ...resource,
                uri: 'test://mixed-content-resource',
                mimeType: 'application/json',
                text: '{"test":"data"}',
              },
            },
          ],
        };
      case 'test_tool_with_logging':
        for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
          await sleep(50);
        }
        return { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] };
      case 'test_error_handling':
        return {
          isError: true,
          content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
        };
      case 'test_tool_with_progress': {
        const progressToken = request.params._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, total: 100 },
            });
          if (progress < 100) await sleep(50);
        }
        return { content: [{ type: 'text', text: String(progressToken ?? 'no progress token') }] };
      }
      case 'json_schema_2020_12_tool':
        return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
      default:
        return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
    }
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A stateless tool server: a new Server and transport per request, answers on an event stream. */
async function startToolServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const body = JSON.parse((await readBody(req)).toString('utf8')) as unknown;
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: false,
      });
      const server = toolServer();
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      log(`tool server: ${String(err)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}

/** `conformance__x` → `x` in the names of a `tools/list` answer (JSON, or `data:` lines of a stream). */
export function unprefixListing(text: string): string {
  const strip = (json: string): string => {
    const message = JSON.parse(json) as { result?: { tools?: { name: string }[] } };
    for (const tool of message.result?.tools ?? [])
      if (tool.name.startsWith(PREFIX)) tool.name = tool.name.slice(PREFIX.length);
    return JSON.stringify(message);
  };
  if (text.trimStart().startsWith('{')) return strip(text);
  return text
    .split('\n')
    .map((line) => (line.startsWith('data:') && line.length > 5 ? `data: ${strip(line.slice(5))}` : line))
    .join('\n');
}

/** The proxy of the header comment: bearer token added, names mapped, the rest passed through. */
async function startProxy(
  target: URL,
  token: string,
  port: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      let body = await readBody(req);
      let listing = false;
      if (body.length > 0) {
        try {
          const message = JSON.parse(body.toString('utf8')) as {
            method?: string;
            params?: { name?: unknown };
          };
          if (message.method === 'tools/list') listing = true;
          if (
            message.method === 'tools/call' &&
            typeof message.params?.name === 'string' &&
            !message.params.name.startsWith(PREFIX)
          ) {
            message.params.name = PREFIX + message.params.name;
            body = Buffer.from(JSON.stringify(message));
          }
        } catch {
          // not JSON: passed on as it came, for the endpoint to refuse
        }
      }
      const headers = { ...req.headers, authorization: `Bearer ${token}` };
      delete headers['content-length'];
      if (body.length > 0) headers['content-length'] = String(body.length);
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers },
        (answer) => {
          if (!listing || (answer.statusCode ?? 0) >= 300) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            return;
          }
          void readBody(answer).then((raw) => {
            const text = unprefixListing(raw.toString('utf8'));
            const out = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
            delete out['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 200, out).end(text);
          });
        },
      );
      upstream.on('error', (err) => {
        log(`proxy: ${err.message}`);
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    })();
  });
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
  return {
    url: `http://localhost:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}

/** A free loopback port, for the proxy: its origin is the one browsers would see, so it is allowed. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

const proxyPort = await freePort();
const tools = await startToolServer();
const db = await benchDatabase();
const dataDir = await mkdtemp(join(tmpdir(), 'ct-conformance-server-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: db.url,
  NODE_ENV: 'test',
  PORT: '0',
  HOST: '127.0.0.1',
  DATA_DIR: dataDir,
  SECRET_KEY: randomBytes(32).toString('hex'),
  // The proxy stands where a deployment's public address would: its origin is the service's own.
  MCP_ALLOWED_ORIGINS: `http://localhost:${proxyPort}`,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const app = await startApp(config, createLogger(config.logLevel, process.stderr), { bootstrapAdmin: false });
let proxy: { url: string; close: () => Promise<void> } | undefined;
let closeClient: (() => Promise<void>) | undefined;
const stop = async () => {
  await proxy?.close();
  await closeClient?.();
  await app.stop();
  await tools.close();
  await db.cleanup();
  await rm(dataDir, { recursive: true, force: true });
};
process.on('SIGTERM', () => void stop().then(() => process.exit(0)));
process.on('SIGINT', () => void stop().then(() => process.exit(0)));
try {
  const url = app.http.url;
  const admin = (await mintToken(app.services.orm.em.fork(), { role: Role.ADMIN, label: 'conformance' }))
    .token;
  const client = graphqlClient(url);
  closeClient = client.close;
  const asAdmin = <T>(query: string, variables: Record<string, unknown>) =>
    client.gql<T>(query, variables, admin);
  const ws = await asAdmin<{ createWorkspace: { workspace: { id: string } } }>(
    'mutation { createWorkspace(input: { name: "Conformance" }) { workspace { id } } }',
    {},
  );
  const workspaceId = ws.createWorkspace.workspace.id;
  const asst = await asAdmin<{ createAssistant: { assistant: { id: string } } }>(
    'mutation($w: ID!) { createAssistant(input: { workspaceId: $w, name: "conformance" }) { assistant { id } } }',
    { w: workspaceId },
  );
  const assistantId = asst.createAssistant.assistant.id;
  const conn = await asAdmin<{
    createConnection: { connection: { id: string }; discoveryRun: { added: number } };
  }>(
    'mutation($w: ID!, $n: String!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: $n, endpointUrl: $u }) { connection { id } discoveryRun { added } } }',
    { w: workspaceId, n: CONNECTION, u: tools.url },
  );
  log(`discovered ${conn.createConnection.discoveryRun.added} tools`);
  // The operator switches on whatever discovery held back, as conformance-client.ts does.
  const ops = await asAdmin<{
    connection: { operations: { nodes: { id: string; name: string; enabled: boolean }[] } };
  }>('query($c: ID!) { connection(id: $c) { operations(first: 100) { nodes { id name enabled } } } }', {
    c: conn.createConnection.connection.id,
  });
  for (const op of ops.connection.operations.nodes)
    if (!op.enabled) {
      log(`enabling ${op.name}`);
      await asAdmin('mutation($o: ID!) { enable(input: { operationId: $o }) { operation { id } } }', {
        o: op.id,
      });
    }
  await asAdmin(
    'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { changed } }',
    { a: assistantId, c: conn.createConnection.connection.id },
  );
  const minted = await asAdmin<{ createApiToken: { secret: string | null; userErrors: unknown[] } }>(
    'mutation($a: ID!) { createApiToken(input: { label: "conformance suite", role: MCP_CLIENT, assistantId: $a }) { secret userErrors { field message } } }',
    { a: assistantId },
  );
  const token = minted.createApiToken.secret;
  if (!token) throw new Error(`createApiToken: ${JSON.stringify(minted.createApiToken.userErrors)}`);
  const endpoint = new URL(`/mcp/${encodeURIComponent(assistantId)}`, url);
  proxy = await startProxy(endpoint, token, proxyPort);
  process.stdout.write(`${proxy.url}\n${endpoint.toString()}\n`);
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  await stop();
  process.exit(1);
}
