import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiToken, Role } from './auth/api-token.entity.js';
import { AuthService, mintToken } from './auth/auth.service.js';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { resolveSecretKey } from './connections/secret-key.js';
import { SecretBox } from './connections/secrets.js';
import { startEmbeddedPostgres, type EmbeddedPostgres, type SuperviseOptions } from './db/embedded.js';
import { Notifier } from './db/notifier.js';
import { currentUser, migrate, openOrm, requireDatabase } from './db/orm.js';
import { PartitionMaintainer } from './db/partitions.js';
import { grantServiceRole, ROLE_PROBLEMS_SQL, roleWarning, type RoleProblems } from './db/roles.js';
import { DiscoveryService } from './discovery/discover.js';
import { closeInterruptedRuns } from './discovery/recovery.js';
import { announceToolChange } from './turns/cache-signal.js';
import { TurnEventHub } from './turns/events.js';
import { LedgerSweep } from './turns/ledger-sweep.js';
import { UsageRollup } from './usage/rollup.js';
import { ToolCache } from './turns/tool-cache.js';
import { TurnService } from './turns/turn.service.js';
import { McpEndpoint, MCP_PATH_PREFIX, RESOURCE_METADATA_PREFIX } from './mcp-server/endpoint.js';
import { CallGuard } from './guards/call-guard.js';
import { buildAppSchema } from './graphql/schema.js';
import { OutboundClient } from './http/outbound.js';
import { McpClient } from './mcp/client.js';
import { oauthRoutes } from './oauth/callback.js';
import { OAuthService } from './oauth/oauth.service.js';
import { DescriptionPool } from './openapi/pool.js';
import { consoleRoutes } from './http/console-routes.js';
import { debuggerRoutes } from './http/debugger-routes.js';
import { explorer } from './http/explorer-routes.js';
import { metricsRoutes } from './http/metrics-route.js';
import { Metrics } from './metrics/metrics.js';
import { startHttpServer, type HttpServer } from './http/server.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface App {
  services: Services;
  http: HttpServer;
  /** The MCP endpoint, `/mcp/{assistantId}` (src/mcp-server/). */
  mcp: McpEndpoint;
  /** The admin token minted on first start, when this start minted one. */
  firstAdminToken: string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Counts SQL statements (tests and benchmarks). */
  onQuery?: (sql: string) => void;
  /** Skip minting the first admin token (tests mint their own). */
  bootstrapAdmin?: boolean;
  /**
   * Called when the embedded PostgreSQL died and could not be restarted: the service cannot go on
   * (main.ts exits non-zero). Without it, the failure is logged and readiness stays 503.
   */
  onDatabaseLost?: (err: Error) => void;
  /** The clock of the call path (src/clock.ts); tests drive it with fake time. Default: real time. */
  clock?: Clock;
}

/** Opens the database (embedded when DATABASE_URL is unset), migrates, and builds the services. */
export async function openDatabase(
  config: Config,
  logger: Logger,
  onQuery?: (sql: string) => void,
  supervise: SuperviseOptions | null = null,
): Promise<{ orm: MikroORM; embedded: EmbeddedPostgres | null; url: string; ownerUrl: string }> {
  let embedded: EmbeddedPostgres | null = null;
  let url = config.databaseUrl;
  // The owner's URL when migrations run apart from the service (docs/ledger.md, "Two database roles").
  let ownerUrl = config.migrationDatabaseUrl;
  if (url === null) {
    embedded = await startEmbeddedPostgres(config.dataDir, (msg) => logger.info(msg), supervise);
    url = embedded.serviceUrl;
    ownerUrl = embedded.url;
  }
  try {
    // A mistyped database name is refused with what to do, before anything could create it.
    if (embedded === null) await requireDatabase(url, 'DATABASE_URL');
    if (config.migrationDatabaseUrl !== null)
      await requireDatabase(config.migrationDatabaseUrl, 'MIGRATION_DATABASE_URL');
    if (config.listenDatabaseUrl !== null)
      await requireDatabase(config.listenDatabaseUrl, 'LISTEN_DATABASE_URL');
    if (ownerUrl !== null) await migrateAsOwner(ownerUrl, url, logger);
    const orm = await openOrm({ databaseUrl: url, onQuery });
    if (ownerUrl === null) {
      const applied = await migrate(orm).catch(async (err: unknown) => {
        await orm.close();
        throw err;
      });
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    }
    // Schema changes after migration (the turn tables' partitions) need the owner.
    return { orm, embedded, url, ownerUrl: ownerUrl ?? url };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

/** Migrates as the owner, then grants the service's role (the one `serviceUrl` logs in as) its privileges. */
async function migrateAsOwner(ownerUrl: string, serviceUrl: string, logger: Logger): Promise<void> {
  const owner = await openOrm({ databaseUrl: ownerUrl, poolMax: 1 });
  try {
    const applied = await migrate(owner, 'MIGRATION_DATABASE_URL');
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  } finally {
    await owner.close();
  }
  await grantServiceRole(ownerUrl, await currentUser(serviceUrl));
}

/** Warns once when the service's own connection could rewrite the ledger. */
async function warnAboutRole(orm: MikroORM, logger: Logger): Promise<void> {
  const rows = await orm.em.getConnection().execute<RoleProblems[]>(ROLE_PROBLEMS_SQL);
  const warning = rows[0] ? roleWarning(rows[0]) : null;
  if (warning !== null) logger.warn(warning);
}

/** On first start against a database with no tokens: mint an admin token, print it once, keep it. */
async function bootstrapAdminToken(orm: MikroORM, config: Config, logger: Logger): Promise<string | null> {
  const em = orm.em.fork();
  if ((await em.count(ApiToken, {})) > 0) return null;
  const { token } = await mintToken(em, { role: Role.ADMIN, label: 'first admin' });
  if (config.databaseUrl !== null) {
    // DATA_DIR/admin-token belongs to the embedded database: a start on another database must not
    // overwrite it (its token would then fail against the embedded one). Printed only.
    process.stdout.write(
      `\nFirst start on this database: an admin token was created (shown once, not written to a file):\n\n  ${token}\n\n`,
    );
    logger.info('first admin token created for DATABASE_URL (printed, not written)');
    return token;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const path = join(config.dataDir, 'admin-token');
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  // Printed once, on purpose: this is how a newcomer gets in. It is not a log line.
  process.stdout.write(`\nFirst start: an admin token was created. It is also in ${path}\n\n  ${token}\n\n`);
  logger.info({ path }, 'first admin token created');
  return token;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The database pool's use, for /metrics (knex's tarn pool; null if it is not there). */
function poolUse(orm: MikroORM): { used: number; free: number; pending: number } | null {
  const pool = (orm.em.getConnection().getKnex().client as { pool?: TarnPool }).pool;
  if (!pool) return null;
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() };
}

export async function startApp(config: Config, logger: Logger, options: StartOptions = {}): Promise<App> {
  const { orm, embedded, url, ownerUrl } = await openDatabase(config, logger, options.onQuery, {
    logger,
    onFatal:
      options.onDatabaseLost ??
      ((err) => logger.error({ err: { message: err.message } }, 'the embedded PostgreSQL is gone')),
  });
  const clock = options.clock ?? systemClock;
  // LISTEN holds a session: behind a transaction-mode pooler it needs a direct URL (docs/scale.md).
  const notifier = new Notifier(config.listenDatabaseUrl ?? url, logger, { clock });
  try {
    await warnAboutRole(orm, logger);
    const key = await resolveSecretKey(config.secretKey, config.dataDir);
    await notifier.start();
    // After our own LISTEN connection is up, so the instance list it reads includes this one.
    const interrupted = await closeInterruptedRuns(orm.em.fork());
    if (interrupted > 0)
      logger.warn({ runs: interrupted }, 'discovery runs left by a stopped instance closed as interrupted');
    const services = await buildServices(config, logger, orm, notifier, embedded, key, clock);
    // Intents left open by a crash or a database outage are closed before this instance serves.
    // Today's and the next days' partitions exist before this instance records a call (rows would
    // still land in the default partition); then kept ahead, and old days dropped (retention).
    const partitions = new PartitionMaintainer(ownerUrl, logger, { retentionDays: config.turnRetentionDays });
    await partitions
      .runOnce()
      .catch((err: unknown) =>
        logger.warn({ err }, 'turn partition maintenance failed; it runs again later'),
      );
    const ledgerSweep = new LedgerSweep(orm, logger, config.ledgerSweep);
    await ledgerSweep.runOnce().catch((err: unknown) => logger.error({ err }, 'the ledger sweep failed'));
    const firstAdminToken =
      options.bootstrapAdmin === false ? null : await bootstrapAdminToken(orm, config, logger);
    const { http, mcpEndpoint } = await serve(services);
    logger.info({ url: http.url }, 'listening');
    services.oauth.startSweep();
    ledgerSweep.start();
    const usageRollup = new UsageRollup(orm, logger, config.usageRollup);
    usageRollup.start();
    partitions.start();
    let stopping: Promise<void> | null = null;
    return {
      services,
      http,
      mcp: mcpEndpoint,
      firstAdminToken,
      stop: () =>
        (stopping ??= stopAll(services, { http, mcpEndpoint, ledgerSweep, usageRollup, partitions })),
    };
  } catch (err) {
    await notifier.stop();
    await orm.close();
    await embedded?.stop();
    throw err;
  }
}

/**
 * The services, built in order, each from what it uses. OAuth's callback runs a discovery and
 * discovery reads OAuth's headers: OAuth gets a forwarder to the discovery service built right
 * after it. Every timer and time of the call path comes from `clock`.
 */
async function buildServices(
  config: Config,
  logger: Logger,
  orm: MikroORM,
  notifier: Notifier,
  embedded: EmbeddedPostgres | null,
  key: Buffer,
  clock: Clock,
): Promise<Services> {
  const outbound = new OutboundClient({
    clock,
    allowHosts: config.outbound.allowHosts,
    allowLoopback: config.outbound.allowLoopback,
    timeoutMs: config.outbound.timeoutMs,
    maxBodyBytes: config.outbound.maxBodyBytes,
  });
  const secrets = new SecretBox(key);
  const mcp = new McpClient(outbound, { timeoutMs: config.outbound.timeoutMs, clock });
  const metrics = new Metrics();
  const descriptions = new DescriptionPool({
    size: config.descriptions.workers,
    timeoutMs: config.descriptions.timeoutMs,
  });
  const toolCache = new ToolCache(orm, notifier, config.builtInTools, logger, (connectionId) =>
    mcp.forgetSession(connectionId),
  );
  const oauth: OAuthService = new OAuthService(
    { orm, logger, secrets, outbound, config, mcp, toolCache },
    { run: (connectionId, trigger, principal) => discovery.run(connectionId, trigger, principal) },
  );
  const discovery: DiscoveryService = new DiscoveryService(
    { config, orm, logger, mcp, metrics, notifier, descriptions, secrets, oauth, outbound, clock },
    (connectionId, workspaceId) =>
      announceToolChange({ toolCache }, orm.em.getConnection(), {
        kind: 'connection',
        id: connectionId,
        workspaceId,
      }),
  );
  const guard = new CallGuard(() => orm.em.getConnection(), notifier, logger, metrics, {
    clock,
    callTimeoutMs: config.outbound.timeoutMs,
  });
  await guard.start();
  const turns = new TurnService(
    { config, orm, logger, metrics, mcp, oauth, outbound, secrets, guard, clock },
    toolCache,
  );
  return {
    config,
    orm,
    logger,
    auth: new AuthService(notifier),
    secrets,
    outbound,
    mcp,
    descriptions,
    notifier,
    discovery,
    oauth,
    embedded,
    toolCache,
    turns,
    turnEvents: new TurnEventHub(orm, notifier, logger, { replayMaxEvents: config.limits.replayMaxEvents }),
    metrics,
    guard,
    clock,
  };
}

/** The HTTP server with every route, the MCP endpoint started, and /metrics reading the live parts. */
async function serve(services: Services): Promise<{ http: HttpServer; mcpEndpoint: McpEndpoint }> {
  const { config, orm, notifier } = services;
  const schema = await buildAppSchema();
  const graphiql = config.graphiql ? explorer() : null;
  const mcpEndpoint = new McpEndpoint(services);
  const http = await startHttpServer(services, schema, {
    port: config.port,
    host: config.host,
    routes: {
      ...oauthRoutes(services),
      ...debuggerRoutes(),
      ...consoleRoutes(),
      ...(graphiql?.routes ?? {}),
      ...metricsRoutes(services),
    },
    explorer: graphiql?.page,
    prefixRoutes: [
      [MCP_PATH_PREFIX, mcpEndpoint.handle],
      [RESOURCE_METADATA_PREFIX, (req, res, url) => mcpEndpoint.resourceMetadata(req, res, url)],
    ],
  });
  mcpEndpoint.start();
  services.metrics.attach({
    toolCache: () => services.toolCache,
    notifier: () => notifier.stats(),
    pool: () => poolUse(orm),
    subscriptionsOpen: () => http.stats().subscriptions,
    socketsOpen: () => http.stats().sockets,
    principalCache: () => services.auth.cacheSizes(),
  });
  return { http, mcpEndpoint };
}

/** Stops everything, in the order that lets each part finish what the one before it still uses. */
async function stopAll(
  services: Services,
  parts: {
    http: HttpServer;
    mcpEndpoint: McpEndpoint;
    ledgerSweep: LedgerSweep;
    usageRollup: UsageRollup;
    partitions: PartitionMaintainer;
  },
): Promise<void> {
  const { logger } = services;
  // Open MCP streams first: the HTTP server waits for every open request.
  parts.mcpEndpoint.close();
  await parts.http.close();
  logger.debug('http server closed');
  services.turnEvents.close();
  services.toolCache.close();
  await services.oauth.stopSweep();
  services.turns.close();
  await services.guard.shutdown();
  await parts.ledgerSweep.stop();
  await parts.usageRollup.stop();
  await parts.partitions.stop();
  await services.mcp.whenIdle();
  await services.outbound.close();
  await services.descriptions.close();
  await services.notifier.stop();
  await services.orm.close();
  logger.debug('database connections closed');
  await services.embedded?.stop();
  logger.debug('embedded PostgreSQL stopped');
}
