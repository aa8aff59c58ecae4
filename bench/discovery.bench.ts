/**
 * `npm run bench -- discovery`: one discovery end to end (read the source, reconcile, apply in one
 * transaction), for a 300-tool MCP server and for the largest accepted corpus description, beside
 * a baseline from the same run: reading and converting the source alone, with no database.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Role } from '../src/auth/api-token.entity.js';
import { fromGlobalId } from '../src/graphql/node.js';
import { mcpEndpoint } from '../src/connections/endpoint.js';
import { Connection } from '../src/connections/connection.entity.js';
import { convertDescription } from '../src/openapi/convert.js';
import { parseDescription } from '../src/openapi/load.js';
import { DiscoveryTrigger } from '../src/discovery/discovery-run.entity.js';
import { benchDatabase, fmt, percentile, root, startBenchApp, startPeerProcess } from './support.js';

const RUNS = 5;
const LARGEST = 'stripe-spec3-2023-09-indent2-over5MB.json';

async function time(fn: () => Promise<unknown>, runs = RUNS): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

export async function run(): Promise<void> {
  const db = await benchDatabase();
  const peer = await startPeerProcess(300);
  const text = await readFile(join(root, '..', 'shared', 'corpus', 'openapi', LARGEST), 'utf8');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const descriptionUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`;
  const app = await startBenchApp(db.url);
  try {
    const admin = await app.token(Role.ADMIN);
    const ws = await app.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation { createWorkspace(input: { name: "Discovery bench" }) { workspace { id } } }',
      {},
      admin,
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    const principal = { label: 'bench' };
    const svc = app.app.services;

    // --- MCP, 300 tools
    const mcp = await app.gql<{
      createConnection: { connection: { id: string }; discoveryRun: { added: number } };
    }>(
      'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: "Big MCP", endpointUrl: $u }) { connection { id } discoveryRun { added } } }',
      { w: workspaceId, u: peer.url },
      admin,
    );
    const mcpId = fromGlobalId(mcp.createConnection.connection.id)!.id;
    const conn = await svc.orm.em.fork().findOneOrFail(Connection, { id: mcpId });
    const baseMcp = await time(() => svc.mcp.discover(mcpEndpoint(svc, conn)));
    const fullMcp = await time(() => svc.discovery.run(mcpId, DiscoveryTrigger.REDISCOVER, principal));
    console.log(
      `MCP, ${mcp.createConnection.discoveryRun.added} tools: discovery p50 ${fmt(percentile(fullMcp, 50), 1)} ms vs listing alone ${fmt(percentile(baseMcp, 50), 1)} ms (ratio ${fmt(percentile(fullMcp, 50) / percentile(baseMcp, 50))})`,
    );

    // --- OpenAPI, largest accepted corpus file
    const t0 = performance.now();
    const oa = await app.gql<{
      createConnection: {
        connection: { id: string };
        discoveryRun: { added: number; skipped: unknown[]; outcome: string };
      };
    }>(
      'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: OPENAPI, name: "Stripe", descriptionUrl: $u, baseUrl: "https://api.stripe.com" }) { connection { id } discoveryRun { added skipped { name } outcome } } }',
      { w: workspaceId, u: descriptionUrl },
      admin,
    );
    const first = performance.now() - t0;
    const oaId = fromGlobalId(oa.createConnection.connection.id)!.id;
    const baseOa = await time(async () =>
      convertDescription(parseDescription(text).document, descriptionUrl, 'https://api.stripe.com'),
    );
    const fullOa = await time(() => svc.discovery.run(oaId, DiscoveryTrigger.REDISCOVER, principal));
    console.log(
      `OpenAPI ${LARGEST} (${(text.length / 1e6).toFixed(2)} MB): first discovery ${fmt(first, 0)} ms (${oa.createConnection.discoveryRun.added} added, ${oa.createConnection.discoveryRun.skipped.length} skipped); ` +
        `re-discovery p50 ${fmt(percentile(fullOa, 50), 0)} ms vs parse+convert alone ${fmt(percentile(baseOa, 50), 0)} ms (ratio ${fmt(percentile(fullOa, 50) / percentile(baseOa, 50))})`,
    );
  } finally {
    await app.stop();
    await peer.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await db.cleanup();
  }
}
