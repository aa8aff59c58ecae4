/**
 * Concurrent discoveries must serialise per connection without starving the pool: every run ends,
 * and the service keeps answering (/readyz) while they run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  DiscoveryRunsDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { sendJson, startLegacyPeer, type RawServerHandle } from '../../support/mcp-servers.js';
import { sleep } from '../../support/turns.js';

let t: TestApp;
let server: RawServerHandle;
let admin: string;
let workspaceId: string;
let listed = 0;

beforeAll(async () => {
  t = await startTestApp();
  server = await startLegacyPeer(async (req, res) => {
    listed += 1;
    // A little latency so the runs overlap inside the service.
    await sleep(20);
    sendJson(res, 200, {
      jsonrpc: '2.0',
      id: req.id,
      result: {
        tools: [
          { name: 'read_it', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
          {
            name: `tool_${listed % 3}`,
            inputSchema: { type: 'object' },
            annotations: { readOnlyHint: true },
          },
        ],
      },
    });
  });
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Concurrency' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
});

afterAll(async () => {
  await t.stop();
  await server.close();
});

async function connect(name: string): Promise<string> {
  const created = await t.ok(
    CreateConnectionDocument,
    { input: { workspaceId, kind: 'MCP', name, endpointUrl: server.url } },
    admin,
  );
  return created.createConnection.connection!.id;
}

/** Runs `work` while polling /readyz; returns every status /readyz answered meanwhile. */
async function whilePollingReadiness(work: () => Promise<unknown>): Promise<number[]> {
  const statuses: number[] = [];
  let done = false;
  const poller = (async () => {
    while (!done) {
      const res = await fetch(new URL('/readyz', t.url), { signal: AbortSignal.timeout(5_000) }).catch(
        () => null,
      );
      statuses.push(res?.status ?? 0);
      await res?.body?.cancel();
      await sleep(25);
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await poller;
  }
  return statuses;
}

async function discoverAll(connectionIds: string[]) {
  return Promise.all(
    connectionIds.map((connectionId) => t.gql(DiscoverDocument, { input: { connectionId } }, admin)),
  );
}

describe('concurrent discoveries', () => {
  it('should finish 25 concurrent discoveries of one connection while /readyz stays 200', async () => {
    const connectionId = await connect('One');
    let results: Awaited<ReturnType<typeof discoverAll>> = [];
    const statuses = await whilePollingReadiness(async () => {
      results = await discoverAll(Array.from({ length: 25 }, () => connectionId));
    });
    expect(results).toHaveLength(25);
    for (const r of results) {
      expect(r.errors).toBeUndefined();
      const run = r.data!.discover.run!;
      expect(run.finishedAt).not.toBeNull();
      // Each run either applied its listing or was overtaken by a newer one that had.
      if (run.outcome === 'FAILED') expect(run.errorCode).toBe('SUPERSEDED');
      else expect(run.outcome).toBe('SUCCEEDED');
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const runs = await t.ok(DiscoveryRunsDocument, { id: connectionId, first: 100 }, admin);
    const nodes = runs.connection!.discoveryRuns.nodes;
    expect(nodes.filter((n) => n.outcome === 'RUNNING')).toEqual([]);
  });

  it('should finish 25 concurrent discoveries spread over five connections while /readyz stays 200', async () => {
    const ids = await Promise.all(['A', 'B', 'C', 'D', 'E'].map((n) => connect(`Five ${n}`)));
    let results: Awaited<ReturnType<typeof discoverAll>> = [];
    const statuses = await whilePollingReadiness(async () => {
      results = await discoverAll(Array.from({ length: 25 }, (_, i) => ids[i % 5]!));
    });
    expect(results).toHaveLength(25);
    for (const r of results) {
      expect(r.errors).toBeUndefined();
      const run = r.data!.discover.run!;
      if (run.outcome === 'FAILED') expect(run.errorCode).toBe('SUPERSEDED');
      else expect(run.outcome).toBe('SUCCEEDED');
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    for (const id of ids) {
      const runs = await t.ok(DiscoveryRunsDocument, { id, first: 100 }, admin);
      expect(runs.connection!.discoveryRuns.nodes.filter((n) => n.outcome === 'RUNNING')).toEqual([]);
    }
  });
});
