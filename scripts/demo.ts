/**
 * `npm run demo`: the product end to end on this machine, from a fresh clone.
 *
 * Starts a local MCP server and a local OpenAPI service (scripts/demo/peers.ts), then the service
 * itself (the same startApp as `npm start`; embedded PostgreSQL under DATA_DIR, default
 * `.data/demo`, or DATABASE_URL), and walks the journey through the public GraphQL API over HTTP
 * (scripts/demo/steps.ts), printing each step with the operation it sent. Then it keeps running
 * for the reader to explore until Ctrl-C; with `--exit` (or DEMO_EXIT=1) it exits instead: 0 when
 * every step did what the product promises, 1 with the failing step otherwise.
 *
 * The one thing not done through the API is the first admin token, which nothing can ask the API
 * for: a first start creates it (as `npm start` does); otherwise the demo mints one the way
 * `npm run token -- --role admin` does.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startApp, type App } from '../src/app.js';
import { Role } from '../src/auth/api-token.entity.js';
import { mintToken } from '../src/auth/auth.service.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startFailureLine } from '../src/start-errors.js';
import type { Peer } from './demo/peers.js';
import { DEMO_TOKEN_LIFETIME_MS, DemoError, runSteps } from './demo/steps.js';

const USAGE = `npm run demo [-- --exit]

Shows the product end to end: starts a local MCP server, a local OpenAPI service and this
service, connects both sources, opens both gates, runs a turn with a READ and a WRITE call,
and prints every step with the GraphQL operation it used. Then it keeps running for you to
explore (the GraphQL explorer and the turn debugger) until Ctrl-C.

  --exit   run the steps and exit: 0 when all succeeded, 1 otherwise (also DEMO_EXIT=1)
  --help   this text

Uses DATABASE_URL when set, else an embedded PostgreSQL under DATA_DIR (default .data/demo,
apart from npm start's .data). PORT (default 4000; 0 picks a free one), LOG_LEVEL (default warn,
to stderr) and every other variable of README's Configuration apply.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let flags: { exit?: boolean; help?: boolean };
try {
  ({ values: flags } = parseArgs({
    options: { exit: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  }));
} catch (err) {
  fail(`${(err as Error).message}\n\n${USAGE}`, 2);
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const exitWhenDone = flags.exit === true || process.env.DEMO_EXIT === '1';

// The demo's embedded database stays apart from npm start's. With DATABASE_URL, DATA_DIR keeps
// npm start's default: it holds the secret key that credentials on that database are sealed with.
if (!process.env.DATABASE_URL && !process.env.DATA_DIR) process.env.DATA_DIR = join('.data', 'demo');
process.env.LOG_LEVEL ??= 'warn';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}
const logger = createLogger(config.logLevel, process.stderr);
const print = (line: string): void => void process.stdout.write(`${line}\n`);

const peers: Peer[] = [];
let app: App | null = null;
let stopping: Promise<void> | null = null;
/** Stops the service (and its embedded cluster) and the two local sources; safe to call twice. */
const stopAll = (): Promise<void> =>
  (stopping ??= (async () => {
    await app?.stop();
    for (const peer of peers.splice(0)) await peer.close();
  })());

async function adminToken(started: App): Promise<{ token: string; where: string }> {
  if (started.firstAdminToken !== null) {
    return {
      token: started.firstAdminToken,
      where:
        config.databaseUrl === null
          ? `in ${join(config.dataDir, 'admin-token')}`
          : 'printed above (first start on this database; not written to a file)',
    };
  }
  const { token } = await mintToken(started.services.orm.em.fork(), {
    role: Role.ADMIN,
    label: 'demo admin',
    expiresAt: new Date(Date.now() + DEMO_TOKEN_LIFETIME_MS),
  });
  return {
    token,
    where: 'minted for this demo, valid for 24 hours (not written to a file)',
  };
}

try {
  print('Starting a local MCP server and a local OpenAPI service…');
  // The local sources use development dependencies (the MCP SDK, zod): say so, not a stack.
  const { startMcpPeer, startOpenApiPeer } = await import('./demo/peers.js').catch((err: unknown) => {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    return fail(
      `demo: ${(err as Error).message.split('\n')[0]}\nnpm run demo needs the development dependencies: run npm ci (or npm install) without --omit=dev.`,
    );
  });
  peers.push(await startMcpPeer(), await startOpenApiPeer());
  const [mcp, openApi] = peers as [Peer, Peer];
  print(`  MCP server (SDK, Streamable HTTP): ${mcp.url}`);
  print(`  OpenAPI service, description at:  ${openApi.url}`);
  print(
    config.databaseUrl === null
      ? `Starting the service on an embedded PostgreSQL under ${config.dataDir} (first time: a few seconds)…`
      : 'Starting the service on DATABASE_URL…',
  );
  try {
    app = await startApp(config, logger);
  } catch (err) {
    const line = startFailureLine(err, config.databaseUrl);
    if (line === null) throw err;
    await stopAll();
    fail(`demo: could not start the service: ${line}`);
  }
  const graphqlUrl = app.http.url;
  const origin = new URL(graphqlUrl).origin;
  print(`  listening on ${graphqlUrl}`);
  const admin = await adminToken(app);

  const result = await runSteps({
    graphqlUrl,
    adminToken: admin.token,
    mcpUrl: mcp.url,
    descriptionUrl: openApi.url,
    openApiReceived: () => openApi.received,
    print,
  });

  print('');
  print(`All ${result.steps} steps succeeded.`);
  print('');
  print(`  GraphQL explorer: ${graphqlUrl}   (open it in a browser)`);
  print(`  Turn debugger:    ${origin}/debugger   (sign in with the admin token, pick the demo's workspace)`);
  print(`  Admin token:      ${admin.token}`);
  print(`                    ${admin.where}`);
  print(`  Runtime token:    ${result.tokens.runtime}   (bound to the demo's workspace)`);
  print(`  Customer token:   ${result.tokens.customer}`);
  print(`  Workspace:        ${result.workspaceId}`);
  print(`  Turn:             ${result.turnId}`);

  if (exitWhenDone) {
    await stopAll();
    process.exit(0);
  }
  print('');
  print('The demo keeps running for you to explore. Ctrl-C stops the service and both local sources.');
  // Ctrl-C reaches npm, tsx and this process alike (tsx relays it too): the first one stops.
  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) return;
    signalled = true;
    print(`\n${signal}: stopping…`);
    const force = setTimeout(
      () => fail('demo: shutdown took too long; exiting'),
      config.shutdownGraceMs + 5_000,
    );
    force.unref();
    stopAll().then(
      () => process.exit(0),
      (err: unknown) => fail(`demo: error while stopping: ${(err as Error).message}`),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (err) {
  await stopAll().catch(() => undefined);
  if (err instanceof DemoError) {
    fail(
      `\ndemo failed: ${err.message}\nThe service's own log lines (stderr, LOG_LEVEL=${config.logLevel}) may say more; LOG_LEVEL=info shows every request.`,
    );
  }
  fail(`\ndemo failed: ${(err as Error).stack ?? String(err)}`);
}
