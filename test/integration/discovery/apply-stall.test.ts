/**
 * Saving hundreds of operations with large schemas (issue #10): discovery's apply step must not
 * hold the event loop. It once took seconds (the ORM inlined megabytes of JSON into SQL text and
 * snapshotted every entity); `/healthz` and everything else waited meanwhile.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
} from '../../generated/graphql.js';
import { aliasedDescription } from '../../support/aliased-description.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import {
  acceptNotification,
  initializeResult,
  sendJson,
  startRawServer,
  type RawServerHandle,
} from '../../support/mcp-servers.js';

/** Generous: the same work stalled the loop for 0.6–3.5 s before; it now yields every few tens of ms. */
const MAX_STALL_MS = 1_000;
const TOOLS = 300;
const PAGE = 100;

/** About 6 KB of schema per tool (1.8 MB for all 300); `extra` adds one argument to every tool. */
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

let t: TestApp;
let admin: string;
let workspaceId: string;
let server: RawServerHandle;
let version = 1;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Apply stall' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  server = await startRawServer((req, res) => {
    if (req.httpMethod !== 'POST') return void res.writeHead(405).end();
    if (acceptNotification(req, res)) return;
    if (req.method === 'initialize')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, result: initializeResult() });
    if (req.method !== 'tools/list')
      return sendJson(res, 200, { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'no' } });
    const params = (req.body as { params?: { cursor?: string } }).params;
    const from = Number(params?.cursor ?? 0);
    const tools = Array.from({ length: Math.min(PAGE, TOOLS - from) }, (_, k) => tool(from + k, version > 1));
    sendJson(res, 200, {
      jsonrpc: '2.0',
      id: req.id,
      result: { tools, ...(from + PAGE < TOOLS ? { nextCursor: String(from + PAGE) } : {}) },
    });
  });
  // Start the description worker first, as a running service would have.
  await t.app.services.descriptions.convert({
    text: '{"openapi":"3.0.3","paths":{}}',
    descriptionUrl: null,
    baseUrl: null,
  });
});

afterAll(async () => {
  await t?.stop();
  await server?.close();
});

/** Runs `work` while probing /healthz and the event loop; returns its result and what was seen. */
async function watched<T>(work: () => Promise<T>) {
  const healthz = new URL('/healthz', t.url);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const statuses: number[] = [];
  const latencies: number[] = [];
  let done = false;
  delay.enable();
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(healthz);
      await res.arrayBuffer();
      statuses.push(res.status);
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work(), statuses, latencies, maxDelayMs: () => delay.max / 1e6 };
  } finally {
    done = true;
    await probe;
    delay.disable();
  }
}

function expectResponsive(seen: { statuses: number[]; latencies: number[]; maxDelayMs: () => number }) {
  expect(seen.statuses.length).toBeGreaterThan(0);
  expect(new Set(seen.statuses)).toEqual(new Set([200]));
  expect(Math.max(...seen.latencies)).toBeLessThan(MAX_STALL_MS);
  expect(seen.maxDelayMs()).toBeLessThan(MAX_STALL_MS);
}

describe('discovery saving 300 operations with large schemas', () => {
  it('should add the aliased description’s 300 operations while /healthz keeps answering', async () => {
    const seen = await watched(() =>
      t.ok(
        CreateConnectionDocument,
        {
          input: {
            workspaceId,
            kind: 'OPENAPI',
            name: 'Aliased',
            descriptionText: aliasedDescription(),
          },
        },
        admin,
      ),
    );
    expect(seen.result.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 300 });
    expectResponsive(seen);
  }, 180_000);

  it('should add 300 MCP tools, then hold all 300 for review when each gains an argument, while /healthz keeps answering', async () => {
    version = 1;
    const first = await watched(() =>
      t.ok(
        CreateConnectionDocument,
        { input: { workspaceId, kind: 'MCP', name: 'Many tools', endpointUrl: server.url } },
        admin,
      ),
    );
    expect(first.result.createConnection.discoveryRun).toMatchObject({ outcome: 'SUCCEEDED', added: 300 });
    expectResponsive(first);
    const connectionId = first.result.createConnection.connection!.id;

    version = 2;
    const second = await watched(() => t.ok(DiscoverDocument, { input: { connectionId } }, admin));
    expect(second.result.discover.run).toMatchObject({
      outcome: 'SUCCEEDED',
      added: 0,
      removed: 0,
      updated: 300,
      flagged: 300,
    });
    expect(second.result.discover.changedOperations).toHaveLength(300);
    expectResponsive(second);

    // What was written, read straight from the database.
    const rows = await t.app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ held: string; described: string; extended: string; reasons: string }[]>(
        `select count(*) filter (where not o.enabled and o.needs_review) as held,
                count(*) filter (where o.description like '%second version') as described,
                count(*) filter (where jsonb_exists(o.input_schema->'properties', 'added_later')) as extended,
                (select count(*) from review_reason r join operation p on p.id = r.operation_id
                  where p.connection_id = ? and r.code = 'ARGUMENTS_ADDED' and r.detail = 'added_later'
                    and r.resolved_at is null) as reasons
           from operation o where o.connection_id = ?`,
        [rawId(connectionId), rawId(connectionId)],
      );
    expect(rows[0]).toEqual({ held: '300', described: '300', extended: '300', reasons: '300' });
  }, 180_000);
});
