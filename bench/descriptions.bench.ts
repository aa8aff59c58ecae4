/**
 * `npm run bench -- descriptions`: the hostile description of issue #10 (finding 7), 300
 * operations sharing one schema through YAML aliases, discovered end to end. Prints the discovery
 * time and `/healthz` latency while it runs, against `/healthz` latency when idle, in the same run;
 * and the parse and conversion alone, on a worker (as discovery does) and on this thread.
 * Then the apply step's load (issue #10): 300 MCP tools with large schemas (1.8 MB) added, and
 * re-discovered with one more argument each (300 updated, held for review), with `/healthz` latency
 * and the loop's worst delay meanwhile, against the same idle baseline.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Role } from '../src/auth/api-token.entity.js';
import { convertDescription } from '../src/openapi/convert.js';
import { parseDescription } from '../src/openapi/load.js';
import { aliasedDescription } from '../test/support/aliased-description.js';
import { LARGE_TOOLS, startLargeToolsServer } from '../test/support/large-tools-server.js';
import { benchDatabase, fmt, percentile, startBenchApp } from './support.js';

/** Polls /healthz until `until` settles; returns each answer's latency in ms and the loop's worst delay. */
async function whileRunning(
  healthz: URL,
  until: Promise<unknown>,
): Promise<{ latencies: number[]; maxDelayMs: number }> {
  const latencies: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await (await fetch(healthz)).arrayBuffer();
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  await until;
  delay.disable();
  return { latencies, maxDelayMs: delay.max / 1e6 };
}

const summary = (l: number[]) =>
  `p50 ${fmt(percentile(l, 50), 1)} ms, max ${fmt(Math.max(...l), 1)} ms (${l.length} answers)`;

export async function run(): Promise<void> {
  const db = await benchDatabase();
  const app = await startBenchApp(db.url);
  try {
    const text = aliasedDescription();
    const healthz = new URL('/healthz', app.app.http.url);
    const admin = await app.token(Role.ADMIN);
    const ws = await app.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation { createWorkspace(input: { name: "Descriptions bench" }) { workspace { id } } }',
      {},
      admin,
    );
    // Start the worker first, as a running service would have.
    await app.app.services.descriptions.convert({
      text: '{"openapi":"3.0.3","paths":{}}',
      descriptionUrl: null,
      baseUrl: null,
    });

    const idle = await whileRunning(healthz, new Promise((r) => setTimeout(r, 2_000)));
    console.log(`/healthz idle: ${summary(idle.latencies)}; loop delay max ${fmt(idle.maxDelayMs, 0)} ms`);

    const t0 = performance.now();
    const discovery = app.gql<{ createConnection: { discoveryRun: { added: number; outcome: string } } }>(
      'mutation($w: ID!, $t: String!) { createConnection(input: { workspaceId: $w, kind: OPENAPI, name: "Aliased", descriptionText: $t }) { discoveryRun { added outcome } } }',
      { w: ws.createWorkspace.workspace.id, t: text },
      admin,
    );
    const during = await whileRunning(healthz, discovery);
    const took = performance.now() - t0;
    const runResult = (await discovery).createConnection.discoveryRun;
    console.log(
      `aliased description (${(text.length / 1024).toFixed(0)} KB, 300 operations): discovery ${fmt(took, 0)} ms (${runResult.outcome}, ${runResult.added} added); ` +
        `/healthz meanwhile ${summary(during.latencies)}; loop delay max ${fmt(during.maxDelayMs, 0)} ms`,
    );

    const t1 = performance.now();
    const offLoop = await whileRunning(
      healthz,
      app.app.services.descriptions.convert({ text, descriptionUrl: null, baseUrl: null }),
    );
    const pooled = performance.now() - t1;
    const t2 = performance.now();
    convertDescription(parseDescription(text).document, null, null);
    const inline = performance.now() - t2;
    console.log(
      `parse + convert alone: on a worker ${fmt(pooled, 0)} ms (loop delay max ${fmt(offLoop.maxDelayMs, 0)} ms), ` +
        `on the event loop ${fmt(inline, 0)} ms (the loop blocked for all of it)`,
    );

    const server = await startLargeToolsServer();
    try {
      type Run = { outcome: string; added: number; updated: number };
      const created = app.gql<{ createConnection: { connection: { id: string }; discoveryRun: Run } }>(
        'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: "Large tools", endpointUrl: $u }) { connection { id } discoveryRun { outcome added updated } } }',
        { w: ws.createWorkspace.workspace.id, u: server.url },
        admin,
      );
      const first = await whileRunning(healthz, created);
      const added = (await created).createConnection;
      server.setVersion(2);
      const again = app.gql<{ discover: { run: Run } }>(
        'mutation($c: ID!) { discover(input: { connectionId: $c }) { run { outcome added updated } } }',
        { c: added.connection.id },
        admin,
      );
      const second = await whileRunning(healthz, again);
      const updated = (await again).discover.run;
      const idleMax = Math.max(...idle.latencies);
      for (const [label, seen, run] of [
        [`${LARGE_TOOLS} large MCP tools added`, first, added.discoveryRun],
        [`${LARGE_TOOLS} large MCP tools updated and held`, second, updated],
      ] as const) {
        console.log(
          `${label} (${run.outcome}, ${run.added} added, ${run.updated} updated): /healthz meanwhile ${summary(seen.latencies)}, ` +
            `max ×${fmt(Math.max(...seen.latencies) / idleMax, 1)} idle max; loop delay max ${fmt(seen.maxDelayMs, 0)} ms`,
        );
      }
    } finally {
      await server.close();
    }
  } finally {
    await app.stop();
    await db.cleanup();
  }
}
