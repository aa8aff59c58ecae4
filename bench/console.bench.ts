/**
 * `npm run bench -- console`: SQL statements and latency of the console's list pages, for a page
 * of 1 parent (the baseline, same run) and a page of 100. DataLoaders must keep the statement
 * count flat: the ratio should be 1.00.
 */
import { Role } from '../src/auth/api-token.entity.js';
import { Connection, ConnectionKind } from '../src/connections/connection.entity.js';
import { toGlobalId } from '../src/graphql/node.js';
import { Operation } from '../src/operations/operation.entity.js';
import { RiskLevel } from '../src/operations/types.js';
import { ReviewCodes } from '../src/operations/review-codes.js';
import { ReviewReason } from '../src/operations/review-reason.entity.js';
import { Workspace } from '../src/workspaces/workspace.entity.js';
import { benchDatabase, fmt, load, percentile, startBenchApp, type BenchApp } from './support.js';

const PAGE = `query($w: ID!, $n: Int) {
  workspace(id: $w) {
    connections(first: $n) {
      nodes {
        name status
        operations(first: 20) { nodes { key risk enabled needsReview reviewReasons(open: true, first: 5) { nodes { code detail } } } }
        discoveryRuns(first: 3) { nodes { outcome added removed } }
      }
    }
  }
}`;

async function seed(app: BenchApp, connections: number): Promise<string> {
  const em = app.app.services.orm.em.fork();
  const ws = new Workspace(`console ${connections}`);
  em.persist(ws);
  const wsRef = em.getReference(Workspace, ws.id, { wrapped: true });
  for (let c = 0; c < connections; c++) {
    const conn = new Connection(wsRef, ConnectionKind.MCP, `c${c}`, `c${c}`);
    conn.endpointUrl = 'https://example.com/mcp';
    em.persist(conn);
    for (let o = 0; o < 10; o++) {
      const op = new Operation({
        workspace: wsRef,
        connection: em.getReference(Connection, conn.id, { wrapped: true }),
        key: `connector.c${c}.op${o}`,
        name: `op${o}`,
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        risk: RiskLevel.READ,
        enabled: o % 2 === 0,
      });
      em.persist(op);
      if (o % 3 === 0)
        em.persist(
          new ReviewReason(
            em.getReference(Operation, op.id, { wrapped: true }),
            ReviewCodes.ARGUMENTS_ADDED,
            'q',
            null,
          ),
        );
    }
  }
  await em.flush();
  return toGlobalId('Workspace', ws.id);
}

export async function run(): Promise<void> {
  const db = await benchDatabase();
  const app = await startBenchApp(db.url);
  try {
    const admin = await app.token(Role.ADMIN);
    const results: Record<number, { statements: number; p50: number }> = {};
    for (const n of [1, 100]) {
      const ws = await seed(app, n);
      const page = () => app.gql(PAGE, { w: ws, n }, admin);
      await load(page, 5, 1);
      app.queries.length = 0;
      await page();
      const statements = app.queries.length;
      const timing = await load(page, 20, 1);
      results[n] = { statements, p50: percentile(timing.latencies, 50) };
      console.log(
        `console page, ${n} connection(s) × 10 operations: ${statements} SQL statements, p50 ${fmt(results[n].p50)} ms`,
      );
    }
    console.log(
      `statements for 100 / statements for 1: ${fmt(results[100]!.statements / results[1]!.statements)} (goal 1.00)`,
    );
  } finally {
    await app.stop();
    await db.cleanup();
  }
}
