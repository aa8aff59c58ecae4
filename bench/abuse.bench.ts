/**
 * `npm run bench -- abuse`: the attacks of issue #10 (and variants) against the real service. For
 * each: the time until it is refused (or finishes), the code it got, and `/healthz` latency seen
 * by a concurrent prober meanwhile, as ratios to an idle `/healthz` baseline measured in the same
 * run; RSS before and after the body and subscription floods.
 */
import { createClient, type Client } from 'graphql-ws';
import { connect } from 'node:net';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { Role } from '../src/auth/api-token.entity.js';
import { generateToken } from '../src/auth/tokens.js';
import { aliasedDescription } from '../test/support/aliased-description.js';
import { readFileSync } from 'node:fs';
import {
  benchDatabase,
  fmt,
  graphqlClient,
  load,
  percentile,
  startBenchApp,
  startPeerProcess,
  startServiceProcess,
} from './support.js';

const MiB = 1024 * 1024;
const rep = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join(' ');

interface Probe {
  latencies: number[];
}

/** Polls /healthz every 20 ms until `until` settles. */
async function probeWhile(pool: Pool, until: Promise<unknown>): Promise<Probe> {
  const latencies: number[] = [];
  let done = false;
  void until.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: '/healthz', method: 'GET' });
      await res.body.arrayBuffer();
      latencies.push(performance.now() - t0);
    } catch (err) {
      // A keep-alive connection the server closed as it was reused: say so, and go on.
      console.log(`   (a /healthz probe failed: ${(err as Error).message})`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { latencies };
}

/** Resident memory of the service process (MB), from /proc. */
function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? NaN) / 1024;
}

export async function run(): Promise<void> {
  const db = await benchDatabase();
  // The setup runs in this process; the service under attack runs in its own (as `npm start`
  // runs it, from the sources), so that the attacker's own work (parsing 40,000 replayed events,
  // say) is not counted as the service's stall.
  const app = await startBenchApp(db.url);
  const svc = await startServiceProcess(db.url, {
    compiled: false,
    env: { LOG_LEVEL: 'warn' },
    nodeArgs: process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [],
  });
  const target = graphqlClient(svc.url);
  const wsUrl = svc.url.replace(/^http/, 'ws');
  const peer = await startPeerProcess(1);
  const base = new URL(svc.url);
  const pool = new Pool(base.origin, { connections: 4, keepAliveTimeout: 1_000 });
  const attackPool = new Pool(base.origin, { connections: 32 });
  const clients: Client[] = [];
  try {
    // --- setup: a workspace, its customer, an assistant with one tool, a turn, some history
    const admin = await app.token(Role.ADMIN);
    const runtime = await app.token(Role.RUNTIME);
    const ws = await app.gql<{ createWorkspace: { workspace: { id: string } } }>(
      'mutation { createWorkspace(input: { name: "Abuse bench" }) { workspace { id } } }',
      {},
      admin,
    );
    const workspaceId = ws.createWorkspace.workspace.id;
    const customer = await app.token(
      Role.CUSTOMER,
      Buffer.from(workspaceId, 'base64url').toString().split(':')[1],
    );
    const assistant = await app.gql<{ createAssistant: { assistant: { id: string } } }>(
      'mutation($w: ID!) { createAssistant(input: { workspaceId: $w, name: "A" }) { assistant { id } } }',
      { w: workspaceId },
      admin,
    );
    const assistantId = assistant.createAssistant.assistant.id;
    const conn = await app.gql<{ createConnection: { connection: { id: string } } }>(
      'mutation($w: ID!, $u: String!) { createConnection(input: { workspaceId: $w, kind: MCP, name: "Peer", endpointUrl: $u }) { connection { id } } }',
      { w: workspaceId, u: peer.url },
      admin,
    );
    await app.gql(
      'mutation($a: ID!, $c: ID!) { setConnectedTools(input: { assistantId: $a, connectionId: $c, enabled: true }) { userErrors { code } } }',
      { a: assistantId, c: conn.createConnection.connection.id },
      customer,
    );
    const beginTurn = (conversationId: string) =>
      app.gql<{ beginTurn: { turnId: string; tools: { name: string }[] } }>(
        'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c, toolSearch: { mode: OFF } }) { turnId tools { name } } }',
        { a: assistantId, c: conversationId },
        runtime,
      );
    const turn = (await beginTurn('bench')).beginTurn;
    const HISTORY = 2_000;
    let n = 0;
    await load(() => beginTurn(`history-${n++}`), HISTORY, 8);

    // --- idle baseline
    const idle = await probeWhile(pool, new Promise((r) => setTimeout(r, 3_000)));
    const idleP50 = percentile(idle.latencies, 50);
    const idleMax = Math.max(...idle.latencies);
    console.log(
      `/healthz idle: p50 ${fmt(idleP50, 1)} ms, max ${fmt(idleMax, 1)} ms (${idle.latencies.length} answers)`,
    );
    console.log(
      '\nattack | took | answer | /healthz meanwhile p50, max (× idle p50, × idle max)\n' +
        '------ | ---- | ------ | ------------------------------------------------------',
    );

    const attack = async (name: string, fn: () => Promise<string>, after?: () => string): Promise<void> => {
      const t0 = performance.now();
      const work = fn();
      const probe = await probeWhile(pool, work);
      let code: string;
      try {
        code = await work;
      } catch (err) {
        code = `threw ${(err as Error).message.slice(0, 80)}`;
      }
      const took = performance.now() - t0;
      const extra = after?.() ?? '';
      const l = probe.latencies.length ? probe.latencies : [NaN];
      const p50 = percentile(l, 50);
      const max = Math.max(...l);
      console.log(
        `${name} | ${fmt(took, 0)} ms | ${code} | ${fmt(p50, 1)} ms, ${fmt(max, 1)} ms ` +
          `(×${fmt(p50 / idleP50, 1)}, ×${fmt(max / idleMax, 1)}; ${probe.latencies.length} answers)${extra ? ` | ${extra}` : ''}`,
      );
    };

    /** POSTs a GraphQL body; answers "HTTP <status> <code or data>". */
    const post = async (body: string, token: string | null): Promise<string> => {
      const res = await attackPool.request({
        path: base.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body,
      });
      const json = (await res.body.json()) as {
        data?: unknown;
        errors?: { extensions?: { code?: string } }[];
      };
      return `HTTP ${res.statusCode} ${json.errors?.[0]?.extensions?.code ?? (json.data ? 'data' : '?')}`;
    };
    const q = (query: string) => JSON.stringify({ query });

    // 1. fragment-spread explosion, and variants
    const explosion = (levels: number, spreads: number, on: string, field: string, root: string) =>
      `query ${root} ${rep(levels, (i) => `fragment F${i} on ${on} { ${field} ${rep(spreads, () => `...F${i + 1}`)} }`)} fragment F${levels} on ${on} { ${field} }`;
    const fragments = explosion(22, 2, 'Query', '__typename', '{ ...F0 }');
    const inline = explosion(
      22,
      2,
      'Viewer',
      '... on Viewer { role @include(if: true) }',
      '{ viewer { ... on Viewer { ...F0 } } }',
    );
    await attack('1. fragment explosion (22 levels × 2), no token', () => post(q(fragments), null));
    await attack('1. fragment explosion, customer token', () => post(q(fragments), customer));
    await attack('1. inline fragments + directives explosion, customer', () => post(q(inline), customer));
    await attack('1. three-way explosion on Viewer (16 × 3), admin', () =>
      post(q(explosion(16, 3, 'Viewer', 'label', '{ viewer { ...F0 } }')), admin),
    );

    // 2. repeated fields
    const repeated = `{ viewer { ${rep(16_000, () => 'label')} } }`;
    await attack('2. 16,000 repeated fields (96 KB), no token', () => post(q(repeated), null));
    await attack('2. 16,000 repeated fields, customer', () => post(q(repeated), customer));
    await attack('2. 1,900 repeated fields (under the token cap), customer', () =>
      post(q(`{ viewer { ${rep(1_900, () => 'role')} } }`), customer),
    );
    await attack('2. 16,000 repeated fields over graphql-ws, admin', () => overWs(wsUrl, admin, repeated));

    // 3. bodies before the token
    {
      const before = rssMb(svc.pid);
      const head = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${15 * MiB}\r\n\r\n`;
      await attack(
        '3. 10 concurrent 15 MiB bodies, no token',
        async () => {
          const answers = await Promise.all(Array.from({ length: 10 }, () => rawPost(base, head, 15 * MiB)));
          const statuses = answers.map((a) => /^HTTP\/1\.1 (\d+)/.exec(a)?.[1] ?? 'none');
          return `${statuses.filter((s) => s === '401').length}/10 HTTP 401`;
        },
        () => `RSS ${fmt(before, 0)} → ${fmt(rssMb(svc.pid), 0)} MB`,
      );
      const before2 = rssMb(svc.pid);
      await attack(
        '3. 10 concurrent 2 MiB bodies, customer token (cap 1 MiB)',
        async () => {
          const answers = await Promise.all(
            Array.from({ length: 10 }, () =>
              post(JSON.stringify({ query: '{ viewer { role } }', pad: 'x'.repeat(2 * MiB) }), customer),
            ),
          );
          return `${answers.filter((a) => a.startsWith('HTTP 413')).length}/10 ${answers[0]}`;
        },
        () => `RSS ${fmt(before2, 0)} → ${fmt(rssMb(svc.pid), 0)} MB`,
      );
      await attack('3. graphql-ws: 1 MiB message before connection_init', () => wsOversized(wsUrl));
    }

    // 4. one customer's subscription flood over many sockets
    {
      const before = rssMb(svc.pid);
      let accepted = 0;
      let refused = 0;
      let replayed = 0;
      await attack(
        `4. subscription flood: 20 sockets × 100 turnEvents(afterSeq: 0), ${HISTORY} events of history`,
        async () => {
          const sockets = await Promise.all(
            Array.from({ length: 20 }, () => wsClient(wsUrl, customer, clients)),
          );
          const subs: Promise<void>[] = [];
          for (const client of sockets) {
            for (let i = 0; i < 100; i++) {
              subs.push(
                new Promise<void>((resolve) => {
                  let counted = false;
                  let mine = 0;
                  client.subscribe(
                    {
                      query:
                        'subscription($a: ID!) { turnEvents(assistantId: $a, afterSeq: 0) { seq type } }',
                      variables: { a: assistantId },
                    },
                    {
                      next: () => {
                        replayed++;
                        if (!counted) {
                          counted = true;
                          accepted++;
                        }
                        // The history is HISTORY turns plus the bench's own: all replayed.
                        if (++mine >= HISTORY) resolve();
                      },
                      error: () => {
                        refused++;
                        resolve();
                      },
                      complete: () => resolve(),
                    },
                  );
                }),
              );
            }
          }
          // Every subscription is either refused or has replayed the whole history.
          await Promise.race([Promise.all(subs), new Promise((r) => setTimeout(r, 30_000))]);
          return `${accepted} accepted, ${refused} refused TOO_MANY_SUBSCRIPTIONS, ${replayed} events replayed`;
        },
      );
      console.log(`   RSS during the subscription flood: ${fmt(before, 0)} → ${fmt(rssMb(svc.pid), 0)} MB`);
      await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
    }

    // 5. strings and arguments
    await attack('5. createWorkspace(name with NUL), admin', () =>
      post(
        JSON.stringify({
          query: 'mutation($n: String!) { createWorkspace(input: { name: $n }) { workspace { id } } }',
          variables: { n: 'a\u0000b' },
        }),
        admin,
      ),
    );
    await attack('5. beginTurn(conversationId with a lone surrogate), runtime', () =>
      post(
        JSON.stringify({
          query:
            'mutation($a: ID!, $c: String!) { beginTurn(input: { assistantId: $a, conversationId: $c, toolSearch: { mode: OFF } }) { turnId } }',
          variables: { a: assistantId, c: 'x\ud800y' },
        }),
        runtime,
      ),
    );
    const deep = `${'{"a":'.repeat(5_999)}{"leaf":true}${'}'.repeat(5_999)}`;
    const toolName = turn.tools[0]?.name ?? 'none';
    await attack('5. callTool arguments nested 6,000 deep, runtime', async () => {
      const res = await attackPool.request({
        path: base.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${runtime}` },
        body: `{"query":"mutation($t: ID!, $n: String!, $a: JSONObject) { callTool(input: { turnId: $t, name: $n, arguments: $a }) { ok status } }","variables":{"t":${JSON.stringify(turn.turnId)},"n":${JSON.stringify(toolName)},"a":${deep}}}`,
      });
      const json = (await res.body.json()) as {
        data?: { callTool?: { status: string } };
        errors?: { extensions?: { code?: string } }[];
      };
      return `HTTP ${res.statusCode} ${json.data?.callTool?.status ?? json.errors?.[0]?.extensions?.code ?? '?'}`;
    });

    // 8. bogus tokens: well-formed, distinct, invalid; they need no real token
    {
      const cached = async (): Promise<string> => {
        const res = await pool.request({
          path: '/metrics',
          method: 'GET',
          headers: { authorization: `Bearer ${admin}` },
        });
        const text = await res.body.text();
        const of = (kind: string) =>
          new RegExp(`principal_cache_entries\\{kind="${kind}"\\} (\\d+)`).exec(text)?.[1] ?? '?';
        return `${of('valid')} valid, ${of('refused')} refused`;
      };
      await post(q('{ viewer { role } }'), runtime);
      const before = await cached();
      const BOGUS = 10_000;
      await attack(`8. ${fmt(BOGUS, 0)} distinct well-formed bogus tokens, 32 at a time`, async () => {
        let n = 0;
        let refused = 0;
        await load(
          async () => {
            n++;
            if ((await post(q('{ __typename }'), generateToken())).startsWith('HTTP 401')) refused++;
          },
          BOGUS,
          32,
        );
        return `${refused}/${n} HTTP 401`;
      });
      console.log(`   principal cache entries: before ${before}; after ${await cached()}`);
      const t0 = performance.now();
      const answer = await post(q('{ viewer { role } }'), runtime);
      console.log(`   the runtime token right after: ${answer} in ${fmt(performance.now() - t0, 1)} ms`);
    }

    // 7. conversion and saving of the aliased 300-operation description
    const text = aliasedDescription();
    await attack(
      `7. aliased description (${fmt(text.length / 1024, 0)} KB, 300 operations) discovered, admin`,
      async () => {
        const res = await target.gql<{
          createConnection: { discoveryRun: { outcome: string; added: number } };
        }>(
          'mutation($w: ID!, $t: String!) { createConnection(input: { workspaceId: $w, kind: OPENAPI, name: "Aliased", descriptionText: $t }) { discoveryRun { outcome added } } }',
          { w: workspaceId, t: text },
          admin,
        );
        return `${res.createConnection.discoveryRun.outcome}, ${res.createConnection.discoveryRun.added} added`;
      },
    );
  } finally {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await pool.close();
    await attackPool.close();
    await peer.stop();
    await target.close();
    await svc.stop();
    await app.stop();
    await db.cleanup();
  }
}

/**
 * Sends `head`, then up to `bodyBytes` of body from one small shared chunk (the attacker holds no
 * large buffer, so RSS is the service's); resolves with what the server answered.
 */
const CHUNK = Buffer.alloc(64 * 1024, 'a');
function rawPost(base: URL, head: string, bodyBytes: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(base.port), base.hostname);
    let received = '';
    let sent = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(finish, 10_000);
    const pump = () => {
      while (!finished && sent < bodyBytes) {
        sent += CHUNK.length;
        if (!socket.write(CHUNK)) return void socket.once('drain', pump);
      }
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (/\r\n\r\n.*\}/s.test(received)) finish();
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.write(head);
    pump();
  });
}

async function wsClient(url: string, token: string, clients: Client[]): Promise<Client> {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
  });
  clients.push(client);
  await new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', () => reject(new Error('closed')));
  });
  return client;
}

/** One operation over a fresh socket; answers its first error code, or "data". */
async function overWs(url: string, token: string, query: string): Promise<string> {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
  });
  try {
    return await new Promise<string>((resolve) => {
      client.subscribe(
        { query },
        {
          next: () => resolve('data'),
          error: (err: unknown) =>
            resolve(
              Array.isArray(err)
                ? `ws ${(err as { extensions?: { code?: string } }[])[0]?.extensions?.code ?? '?'}`
                : 'ws closed',
            ),
          complete: () => resolve('complete'),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

/** A 1 MiB message on a socket that has not sent connection_init; answers the close code and reason. */
function wsOversized(url: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    socket.on('error', () => undefined);
    socket.once('open', () => socket.send('x'.repeat(MiB)));
    socket.once('close', (code, reason) => resolve(`close ${code} ${reason.toString()}`));
  });
}
