/**
 * `npm run bench -- console`: SQL statements and latency of the console's list pages, for a page
 * of 1 parent (the baseline, same run) and a page of 100. DataLoaders must keep the statement
 * count flat: the ratio should be 1.00. Then the ops console's own questions (issue 28): a
 * connection's health and a page of its operations with theirs and their review, for a connection
 * of 10 operations and one of 300 (read as pages of 100), and the review queue.
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

const HEALTH_PAGE = `query($c: ID!, $after: String) {
  connection(id: $c) {
    name status
    health(window: DAY) { calls errors errorRate p95DurationMs lastDiscovery { outcome partial } signIn byStatus { status calls } }
    operations(first: 100, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { key risk enabled needsReview reviewVersion reviewDiff { path breaking }
        health(window: DAY) { calls errors p50DurationMs p95DurationMs declaredBy points { start calls errors } } }
    }
    discoveryRuns(first: 5) { nodes { outcome changes(first: 20) { nodes { kind operationName breaking } } } }
  }
}`;

const QUEUE_PAGE = `{ reviewQueue(first: 100) { nodes { key reviewVersion reviewDiff { path kind before after breaking } connection { name } } } }`;

async function seedConnection(app: BenchApp, operations: number): Promise<string> {
  const em = app.app.services.orm.em.fork();
  const ws = new Workspace(`health ${operations}`);
  em.persist(ws);
  const wsRef = em.getReference(Workspace, ws.id, { wrapped: true });
  const conn = new Connection(wsRef, ConnectionKind.MCP, `h${operations}`, `h${operations}`);
  conn.endpointUrl = 'https://example.com/mcp';
  em.persist(conn);
  for (let o = 0; o < operations; o++) {
    const op = new Operation({
      workspace: wsRef,
      connection: em.getReference(Connection, conn.id, { wrapped: true }),
      key: `connector.h${operations}.op${o}`,
      name: `op${o}`,
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      risk: RiskLevel.READ,
      enabled: o % 4 !== 0,
    });
    op.needsReview = o % 4 === 0;
    em.persist(op);
    if (o % 4 === 0)
      em.persist(
        new ReviewReason(
          em.getReference(Operation, op.id, { wrapped: true }),
          ReviewCodes.ARGUMENTS_ADDED,
          'q',
          null,
          [
            {
              path: 'inputSchema.properties.q',
              kind: 'PROPERTY_ADDED',
              before: null,
              after: { type: 'string' },
              breaking: false,
            },
          ],
        ),
      );
  }
  await em.flush();
  return toGlobalId('Connection', conn.id);
}

interface OperationsPage {
  connection: { operations: { pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
}

/** The console's questions for one connection: statements per page of operations, and p50 of the whole read. */
async function consoleQuestions(app: BenchApp, admin: string, operations: number) {
  const c = await seedConnection(app, operations);
  const readAll = async () => {
    const pages: number[] = [];
    let after: string | null = null;
    for (;;) {
      app.queries.length = 0;
      const res: OperationsPage = await app.gql<OperationsPage>(HEALTH_PAGE, { c, after }, admin);
      pages.push(app.queries.length);
      const info = res.connection.operations.pageInfo;
      if (!info.hasNextPage) return pages;
      after = info.endCursor;
    }
  };
  await load(readAll, 3, 1);
  const pages = await readAll();
  const timing = await load(readAll, 10, 1);
  console.log(
    `console health, 1 connection × ${operations} operations: ${pages.length} page(s) of ≤100, SQL statements per page ${pages.join(', ')}, p50 of the whole read ${fmt(percentile(timing.latencies, 50))} ms`,
  );
  return pages;
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
    const small = await consoleQuestions(app, admin, 10);
    const large = await consoleQuestions(app, admin, 300);
    console.log(
      `console health statements, per page, most for 300 / most for 10 operations: ${fmt(Math.max(...large) / Math.max(...small))} (goal 1.00)`,
    );
    const queue = async () => {
      app.queries.length = 0;
      await app.gql(QUEUE_PAGE, {}, admin);
      return app.queries.length;
    };
    console.log(`review queue page (100 of the held operations above): ${await queue()} SQL statements`);
  } finally {
    await app.stop();
    await db.cleanup();
  }
}
