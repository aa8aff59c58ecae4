/**
 * The only reader of `process.env`. Every variable is parsed and validated once at start; a bad
 * value stops the process with one line that names the variable. README's configuration table
 * lists the same variables with the same defaults.
 */
import { resolve } from 'node:path';
import {
  bool,
  ConfigError,
  type Env,
  int,
  origins,
  parseDatabaseUrl,
  parseSecretKey,
} from './config-values.js';
import { DEFAULT_GROUP_COMMIT_IN_FLIGHT, DEFAULT_GROUP_COMMIT_MAX_BATCH } from './db/group-commit.js';
import { compileUrlPolicy } from './http/url-policy.js';
import { CALL_TIMEOUT_MS, MAX_UPSTREAM_BODY_BYTES } from './limits.js';
import { builtInProblems, type DeclaredTool } from './turns/declare.js';
import { DEFAULT_FOR_MODEL_BUDGETS, type ForModelBudgets } from './turns/dialects/for-model.js';
import { DEFAULT_PROGRESS_MIN_INTERVAL_MS } from './turns/progress.js';

export { ConfigError } from './config-values.js';

export const DEFAULT_PORT = 4000;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DATA_DIR = './.data';
export const DEFAULT_LOG_LEVEL = 'info';
export const DEFAULT_OUTBOUND_TIMEOUT_MS = CALL_TIMEOUT_MS; // the platform's call budget
export const DEFAULT_OUTBOUND_MAX_BODY_BYTES = MAX_UPSTREAM_BODY_BYTES; // read from any upstream
export const DEFAULT_TOOL_RESULT_MAX_CHARS = 64 * 1024; // 64 KiB of text given to the model
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000; // in-flight requests get this long to finish
export const DEFAULT_DISCOVERY_DEADLINE_MS = 120_000; // 2 minutes for one discovery run, end to end
/**
 * How often open WebSockets have their token checked again: a backstop for expiry and for a
 * revocation NOTIFY that never arrived. A revocation normally closes the sockets at once.
 */
export const DEFAULT_TOKEN_RECHECK_MS = 15_000;
/** Longer than any call can take (4 sends of up to 120 s) plus the ~30 s of background record retries. */
export const DEFAULT_LEDGER_SWEEP_AFTER_MS = 10 * 60_000;
export const DEFAULT_LEDGER_SWEEP_EVERY_MS = 60_000;
export const DEFAULT_READ_START_HOLD_MS = 50; // a READ answered within this is recorded in one statement
export const DEFAULT_USAGE_ROLLUP_EVERY_MS = 60_000;
export const DEFAULT_USAGE_SETTLE_MS = 20 * 60_000;
export const DEFAULT_DESCRIPTION_WORKERS = 1; // worker threads that parse and convert descriptions
export const DEFAULT_DESCRIPTION_TIMEOUT_MS = 20_000; // per description, then DESCRIPTION_TOO_COMPLEX
export const DEFAULT_TOOL_ARGS_MAX_DEPTH = 64; // nesting of a call's arguments
export const DEFAULT_TOOL_ARGS_MAX_BYTES = 256 * 1024; // a call's arguments, serialized
/** ADMIN and OPERATOR bodies: a 5 MiB description inside JSON, even if a third of it needs escaping. */
export const DEFAULT_MAX_BODY_BYTES_STAFF = 8 * 1024 * 1024; // 8 MiB
/** CUSTOMER and RUNTIME bodies: callTool arguments and the console's inputs. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024; // 1 MiB
/** Lexical tokens in one GraphQL document (the console's largest query has under 100, introspection 183). */
export const DEFAULT_GRAPHQL_MAX_TOKENS = 2_000;
/**
 * Field selections written in one document, a fragment's counted once (the console's largest
 * query has 18, the full introspection query 72). Validation's pairwise field comparison grows
 * with the square of this.
 */
export const DEFAULT_GRAPHQL_MAX_FIELDS = 200;
/** Bytes of one GraphQL document (the query text; variables are bounded by the body cap). */
export const DEFAULT_GRAPHQL_MAX_DOCUMENT_BYTES = 64 * 1024; // 64 KiB
/** Nesting of fields (fragments flattened) and aliases in one document. */
export const DEFAULT_GRAPHQL_MAX_DEPTH = 12;
export const DEFAULT_GRAPHQL_MAX_ALIASES = 15;
/** Fields × page sizes: two nested full pages (100 × 100) of a dozen fields fit, three do not. */
export const DEFAULT_GRAPHQL_MAX_COST = 250_000;
/** Subscriptions open at once on one instance, per token and per WebSocket. */
export const DEFAULT_SUBSCRIPTIONS_PER_TOKEN = 20;
export const DEFAULT_SUBSCRIPTIONS_PER_SOCKET = 10;
/** How long a new WebSocket has to send an accepted `connection_init` (graphql-ws closes it with 4408). */
export const DEFAULT_WS_INIT_WAIT_MS = 3_000; // 3 seconds
/** WebSockets open at once on one instance whose `connection_init` is not accepted yet (16 KiB frames each). */
export const DEFAULT_WS_UNACCEPTED_MAX = 1_024; // at most 16 MiB of their frames
/** Stored events one subscription replays after `afterSeq` before it must resubscribe. */
export const DEFAULT_SUBSCRIPTION_REPLAY_MAX_EVENTS = 5_000;
/** The MCP endpoint (issue 27): one request's body, JSON-RPC messages. */
export const DEFAULT_MCP_MAX_BODY_BYTES = 1024 * 1024; // 1 MiB
/** Calls in flight at once per MCP_CLIENT token, on one instance; more are refused as results. */
export const DEFAULT_MCP_CALLS_PER_TOKEN = 16;
/** Open `GET` streams per instance; past it, 503. */
export const DEFAULT_MCP_STREAMS_MAX = 1_000;
/** Conversations (sessions) whose Turn an instance remembers; the oldest is looked up again. */
export const DEFAULT_MCP_CONVERSATIONS_MAX = 10_000;
/** Tools per `tools/list` page. */
export const DEFAULT_MCP_PAGE_SIZE = 100;
/** A conversation's Turn with no call for this long is finished; the next call opens a new one. */
export const DEFAULT_MCP_TURN_IDLE_MS = 10 * 60_000; // 10 minutes

/** Who may read `GET /metrics`: nobody (404), anyone, or an ADMIN/OPERATOR token (the default). */
const METRICS_ACCESS = ['off', 'open', 'token'] as const;
export type MetricsAccess = (typeof METRICS_ACCESS)[number];
export const DEFAULT_METRICS: MetricsAccess = 'token';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Tool search (issue 31): when AUTO turns it on, and the bounds of one search. */
export interface ToolSearchConfig {
  /** AUTO searches when the callable tools exceed this; null: the dialect's own cap (MAX_TOOLS). */
  autoTools: number | null;
  /** AUTO searches when the declared schemas of the whole list exceed this many bytes (UTF-8 JSON). */
  autoBytes: number;
  /** Connection tools declared up front when search applies (the "always declare" ones), by default. */
  declare: number;
  /** Tools a search answers when the model gives no limit. */
  defaultLimit: number;
  /** The most tools one search answers, whatever limit the model asks for. */
  maxLimit: number;
  /** A longer query from the model is cut to this many characters. */
  maxQueryChars: number;
}
export const DEFAULT_TOOL_SEARCH_AUTO_BYTES = 64 * 1024;
export const DEFAULT_TOOL_SEARCH_DECLARE = 20;
export const DEFAULT_TOOL_SEARCH_LIMIT = 5;
export const DEFAULT_TOOL_SEARCH_MAX_LIMIT = 20;
export const DEFAULT_TOOL_SEARCH_QUERY_MAX = 500;

export interface Config {
  env: 'production' | 'development' | 'test';
  /** Unset: embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | null;
  /**
   * The owner's URL, used only to migrate and then grant the service's role (DATABASE_URL's) what it
   * needs; null: migrations run on DATABASE_URL (or, embedded, as the cluster's owner).
   */
  migrationDatabaseUrl: string | null;
  /**
   * A direct URL (not through a transaction-mode pooler) for the LISTEN connection; null: DATABASE_URL.
   */
  listenDatabaseUrl: string | null;
  port: number;
  host: string;
  dataDir: string;
  /** 32-byte AES-256-GCM key for credentials; null means "generate and keep one in dataDir". */
  secretKey: Buffer | null;
  logLevel: LogLevel;
  /** Access to `GET /metrics`. */
  metrics: MetricsAccess;
  outbound: {
    /** Hosts (name or name:port) allowed over http:// and to non-public addresses. */
    allowHosts: string[];
    /** Loopback addresses allowed (dev and test). */
    allowLoopback: boolean;
    timeoutMs: number;
    maxBodyBytes: number;
  };
  toolResultMaxChars: number;
  /** `forModel`'s size budget per model API family, in serialized characters (issue 26). */
  forModelMaxChars: ForModelBudgets;
  /** A call's arguments past these are refused (REJECTED) before anything is recorded or sent. */
  toolArguments: { maxDepth: number; maxBytes: number };
  /** WRITE intents without an outcome older than `afterMs` are closed as OUTCOME_UNKNOWN, every `everyMs`. */
  ledgerSweep: { afterMs: number; everyMs: number };
  /** Usage roll-up: runs every `everyMs`; an hour is summed `settleMs` after it ends (docs/usage.md). */
  usageRollup: { everyMs: number; settleMs: number };
  /**
   * Whole UTC days of `turn_call` and `turn_event` older than this are dropped (0: kept for good);
   * the ledger is never dropped (src/db/partitions.ts, docs/scale.md).
   */
  turnRetentionDays: number;
  /** Group commit of the call path's records (src/db/group-commit.ts); maxBatch 1 turns it off. */
  recordBatch: { maxBatch: number; inFlight: number };
  /**
   * A READ call's start is held back this long (0: written at once): a READ answered within it is
   * recorded, start and finish, in ONE statement (see CALL_RECORD_SQL).
   */
  readStartHoldMs: number;
  /**
   * How the record of a READ answered within the hold commits (`READ_RECORD_COMMIT`): `async`
   * without waiting for its disk flush (a crash of PostgreSQL may lose the last moments of such
   * records), `sync` waiting for it. WRITE records and ledger rows always wait (see CALL_RECORD_SQL).
   */
  readRecordCommit: ReadRecordCommit;
  /** Tool search in turns with many tools (issue 31, docs/tool-search.md; src/turns/search/). */
  toolSearch: ToolSearchConfig;
  /** Public address of this service, for the OAuth redirect URI. */
  publicUrl: string;
  shutdownGraceMs: number;
  /** A discovery run still going after this long fails with DISCOVERY_DEADLINE_EXCEEDED. */
  discoveryDeadlineMs: number;
  /** Every open WebSocket's token is checked again this often (expiry, a missed revocation). */
  tokenRecheckMs: number;
  /** A call's live progress events go out at least this far apart (0: as they arrive, up to the cap). */
  progressMinIntervalMs: number;
  /** OpenAPI descriptions are parsed and converted off the event loop, on this many workers, within this time. */
  descriptions: { workers: number; timeoutMs: number };
  /** Tools declared before the connection tools in every turn (the runtime handles them). */
  builtInTools: DeclaredTool[];
  /** GraphiQL at `GET /graphql` for a browser (`GRAPHIQL`, off by default in production). */
  graphiql: boolean;
  /** What one caller may send (docs/limits.md). */
  limits: Limits;
  /** The MCP endpoint, `/mcp/{assistantId}` (src/mcp-server/, docs/limits.md). */
  mcpServer: McpServerLimits;
}

export interface McpServerLimits {
  maxBodyBytes: number;
  callsPerToken: number;
  streamsMax: number;
  conversationsMax: number;
  pageSize: number;
  turnIdleMs: number;
  /**
   * Origins a browser may call the endpoint from, besides PUBLIC_URL's own (`MCP_ALLOWED_ORIGINS`):
   * a request with any other `Origin` gets 403 (DNS rebinding); one without `Origin` passes.
   */
  allowedOrigins: string[];
}

export interface Limits {
  /** Request body cap for ADMIN and OPERATOR tokens (and their WebSocket messages). */
  maxBodyBytesStaff: number;
  /** Request body cap for every other role. Requests without a valid token are never read. */
  maxBodyBytes: number;
  maxTokens: number;
  maxFields: number;
  maxDocumentBytes: number;
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  subscriptionsPerToken: number;
  subscriptionsPerSocket: number;
  replayMaxEvents: number;
  /** A WebSocket must have its `connection_init` accepted within this. */
  wsInitWaitMs: number;
  /** WebSockets not accepted yet (and whose upgrade carried no valid token), per instance; past it: 503. */
  wsUnacceptedMax: number;
}

/**
 * The roll-up must wait until a call can no longer be recorded late: longer than the ledger sweep
 * takes to close a lost call (with its original start time).
 */
function usageRollup(env: Env): { everyMs: number; settleMs: number } {
  const afterMs = int(env, 'LEDGER_SWEEP_AFTER_MS', DEFAULT_LEDGER_SWEEP_AFTER_MS, 0, 7 * 24 * 3_600_000);
  const sweepEveryMs = int(
    env,
    'LEDGER_SWEEP_EVERY_MS',
    DEFAULT_LEDGER_SWEEP_EVERY_MS,
    1_000,
    24 * 3_600_000,
  );
  const floor = afterMs + 2 * sweepEveryMs;
  const settleMs = int(
    env,
    'USAGE_SETTLE_MS',
    Math.max(DEFAULT_USAGE_SETTLE_MS, floor),
    0,
    8 * 24 * 3_600_000,
  );
  if (settleMs < floor) {
    throw new ConfigError(
      `USAGE_SETTLE_MS must be at least LEDGER_SWEEP_AFTER_MS + 2 × LEDGER_SWEEP_EVERY_MS (${floor}), so that no call is recorded after its hour was summed; got ${settleMs}`,
    );
  }
  return {
    everyMs: int(env, 'USAGE_ROLLUP_EVERY_MS', DEFAULT_USAGE_ROLLUP_EVERY_MS, 1_000, 24 * 3_600_000),
    settleMs,
  };
}

/** TURN_RETENTION_DAYS: 0 (keep), or more days than the ledger sweep may still need a call's events. */
function turnRetentionDays(env: Env): number {
  const days = int(env, 'TURN_RETENTION_DAYS', 0, 0, 36_500);
  const afterMs = int(env, 'LEDGER_SWEEP_AFTER_MS', DEFAULT_LEDGER_SWEEP_AFTER_MS, 0, 7 * 24 * 3_600_000);
  if (days > 0 && days * 86_400_000 <= afterMs + 86_400_000)
    throw new ConfigError(
      `TURN_RETENTION_DAYS must be 0 (keep everything) or more than a day beyond LEDGER_SWEEP_AFTER_MS, so that the sweep still finds the calls it closes; got ${days}`,
    );
  return days;
}

export const READ_RECORD_COMMITS = ['async', 'sync'] as const;
export type ReadRecordCommit = (typeof READ_RECORD_COMMITS)[number];

function readRecordCommit(env: Env): ReadRecordCommit {
  const raw = (env.READ_RECORD_COMMIT ?? '').trim().toLowerCase();
  if (raw === '') return 'async';
  if (!(READ_RECORD_COMMITS as readonly string[]).includes(raw))
    throw new ConfigError(`READ_RECORD_COMMIT must be async or sync, got "${env.READ_RECORD_COMMIT}"`);
  return raw as ReadRecordCommit;
}

function parseBuiltInTools(raw: string | undefined): DeclaredTool[] {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('BUILTIN_TOOLS must be a JSON array of { name, description, inputSchema }');
  }
  const ok =
    Array.isArray(parsed) &&
    parsed.every(
      (t) =>
        typeof t === 'object' &&
        t !== null &&
        typeof (t as DeclaredTool).name === 'string' &&
        typeof (t as DeclaredTool).description === 'string' &&
        typeof (t as DeclaredTool).inputSchema === 'object' &&
        (t as DeclaredTool).inputSchema !== null,
    );
  if (!ok) throw new ConfigError('BUILTIN_TOOLS must be a JSON array of { name, description, inputSchema }');
  const tools = parsed as DeclaredTool[];
  const problems = builtInProblems(tools);
  if (problems.length > 0) throw new ConfigError(`BUILTIN_TOOLS: ${problems.join('; ')}`);
  return tools;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = nodeEnvOf(env);
  const logLevel = logLevelOf(env);
  const allowHosts = outboundAllowHosts(env);
  const metrics = metricsAccessOf(env);
  const port = int(env, 'PORT', DEFAULT_PORT, 0, 65_535);
  const host = env.HOST && env.HOST !== '' ? env.HOST : DEFAULT_HOST;
  const publicUrl = publicUrlOf(env, port);
  const secretKey = parseSecretKey(env.SECRET_KEY);
  const databases = databaseUrls(env);
  if (secretKey === null && nodeEnv === 'production') {
    throw new ConfigError('SECRET_KEY must be set when NODE_ENV=production');
  }
  return {
    env: nodeEnv,
    ...databases,
    port,
    host,
    dataDir: resolve(env.DATA_DIR && env.DATA_DIR !== '' ? env.DATA_DIR : DEFAULT_DATA_DIR),
    secretKey,
    logLevel,
    metrics,
    outbound: outbound(env, nodeEnv, allowHosts),
    toolResultMaxChars: int(env, 'TOOL_RESULT_MAX_CHARS', DEFAULT_TOOL_RESULT_MAX_CHARS, 256, 1024 * 1024),
    forModelMaxChars: forModelBudgets(env),
    recordBatch: {
      maxBatch: int(env, 'RECORD_BATCH_MAX', DEFAULT_GROUP_COMMIT_MAX_BATCH, 1, 1_000),
      inFlight: int(env, 'RECORD_BATCH_IN_FLIGHT', DEFAULT_GROUP_COMMIT_IN_FLIGHT, 1, 8),
    },
    readStartHoldMs: int(env, 'READ_START_HOLD_MS', DEFAULT_READ_START_HOLD_MS, 0, 1_000),
    readRecordCommit: readRecordCommit(env),
    toolSearch: toolSearch(env),
    ledgerSweep: {
      afterMs: int(env, 'LEDGER_SWEEP_AFTER_MS', DEFAULT_LEDGER_SWEEP_AFTER_MS, 0, 7 * 24 * 3_600_000),
      everyMs: int(env, 'LEDGER_SWEEP_EVERY_MS', DEFAULT_LEDGER_SWEEP_EVERY_MS, 1_000, 24 * 3_600_000),
    },
    usageRollup: usageRollup(env),
    turnRetentionDays: turnRetentionDays(env),
    toolArguments: {
      maxDepth: int(env, 'TOOL_ARGS_MAX_DEPTH', DEFAULT_TOOL_ARGS_MAX_DEPTH, 1, 1_000),
      maxBytes: int(env, 'TOOL_ARGS_MAX_BYTES', DEFAULT_TOOL_ARGS_MAX_BYTES, 1024, 16 * 1024 * 1024),
    },
    publicUrl: publicUrl.replace(/\/+$/, ''),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS, 0, 600_000),
    discoveryDeadlineMs: int(env, 'DISCOVERY_DEADLINE_MS', DEFAULT_DISCOVERY_DEADLINE_MS, 1_000, 3_600_000),
    tokenRecheckMs: int(env, 'TOKEN_RECHECK_MS', DEFAULT_TOKEN_RECHECK_MS, 10, 3_600_000),
    progressMinIntervalMs: int(env, 'PROGRESS_INTERVAL_MS', DEFAULT_PROGRESS_MIN_INTERVAL_MS, 0, 60_000),
    builtInTools: parseBuiltInTools(env.BUILTIN_TOOLS),
    graphiql: bool(env, 'GRAPHIQL', nodeEnv !== 'production'),
    descriptions: {
      workers: int(env, 'DESCRIPTION_WORKERS', DEFAULT_DESCRIPTION_WORKERS, 1, 8),
      timeoutMs: int(env, 'DESCRIPTION_TIMEOUT_MS', DEFAULT_DESCRIPTION_TIMEOUT_MS, 100, 600_000),
    },
    limits: limits(env),
    mcpServer: mcpServer(env),
  };
}

function nodeEnvOf(env: Env): Config['env'] {
  const nodeEnv = env.NODE_ENV ?? 'development';
  if (nodeEnv !== 'production' && nodeEnv !== 'development' && nodeEnv !== 'test') {
    throw new ConfigError(`NODE_ENV must be production, development or test, got "${nodeEnv}"`);
  }
  return nodeEnv;
}

function logLevelOf(env: Env): LogLevel {
  const logLevel = (env.LOG_LEVEL ?? DEFAULT_LOG_LEVEL).toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return logLevel as LogLevel;
}

function outboundAllowHosts(env: Env): string[] {
  const allowHosts = (env.OUTBOUND_ALLOW_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (const host of allowHosts) {
    // The outbound rule's own parser, so that what config takes is what calls and saves compare.
    try {
      compileUrlPolicy({ allowHosts: [host], allowLoopback: false });
    } catch {
      throw new ConfigError(`OUTBOUND_ALLOW_HOSTS has an invalid host "${host}"`);
    }
  }
  return allowHosts;
}

function metricsAccessOf(env: Env): MetricsAccess {
  const metrics = (
    env.METRICS === undefined || env.METRICS === '' ? DEFAULT_METRICS : env.METRICS
  ).toLowerCase();
  if (!(METRICS_ACCESS as readonly string[]).includes(metrics)) {
    throw new ConfigError(`METRICS must be one of ${METRICS_ACCESS.join(', ')}, got "${metrics}"`);
  }
  return metrics as MetricsAccess;
}

/** PUBLIC_URL as given (its trailing slashes are cut by the caller), or localhost on PORT. */
function publicUrlOf(env: Env, port: number): string {
  const publicUrl = env.PUBLIC_URL && env.PUBLIC_URL !== '' ? env.PUBLIC_URL : `http://localhost:${port}`;
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an http(s) address, got "${publicUrl}"`);
  }
  return publicUrl;
}

function databaseUrls(env: Env): Pick<Config, 'databaseUrl' | 'migrationDatabaseUrl' | 'listenDatabaseUrl'> {
  const databaseUrl = parseDatabaseUrl(env.DATABASE_URL);
  const migrationDatabaseUrl = parseDatabaseUrl(env.MIGRATION_DATABASE_URL, 'MIGRATION_DATABASE_URL');
  const listenDatabaseUrl = parseDatabaseUrl(env.LISTEN_DATABASE_URL, 'LISTEN_DATABASE_URL');
  if (listenDatabaseUrl !== null && databaseUrl === null) {
    throw new ConfigError('LISTEN_DATABASE_URL needs DATABASE_URL (the embedded default listens directly)');
  }
  if (migrationDatabaseUrl !== null && databaseUrl === null) {
    throw new ConfigError(
      'MIGRATION_DATABASE_URL needs DATABASE_URL (the embedded default already migrates as the owner)',
    );
  }
  return { databaseUrl, migrationDatabaseUrl, listenDatabaseUrl };
}

function outbound(env: Env, nodeEnv: Config['env'], allowHosts: string[]): Config['outbound'] {
  return {
    allowHosts,
    allowLoopback: bool(env, 'OUTBOUND_ALLOW_LOOPBACK', nodeEnv !== 'production'),
    timeoutMs: int(env, 'OUTBOUND_TIMEOUT_MS', DEFAULT_OUTBOUND_TIMEOUT_MS, 100, 120_000),
    maxBodyBytes: int(
      env,
      'OUTBOUND_MAX_BODY_BYTES',
      DEFAULT_OUTBOUND_MAX_BODY_BYTES,
      1024,
      64 * 1024 * 1024,
    ),
  };
}

function forModelBudgets(env: Env): ForModelBudgets {
  const max = 16 * 1024 * 1024;
  return {
    openai: int(env, 'FOR_MODEL_MAX_CHARS_OPENAI', DEFAULT_FOR_MODEL_BUDGETS.openai, 1024, max),
    anthropic: int(env, 'FOR_MODEL_MAX_CHARS_ANTHROPIC', DEFAULT_FOR_MODEL_BUDGETS.anthropic, 1024, max),
    gemini: int(env, 'FOR_MODEL_MAX_CHARS_GEMINI', DEFAULT_FOR_MODEL_BUDGETS.gemini, 1024, max),
  };
}

function toolSearch(env: Env): ToolSearchConfig {
  return {
    autoTools: env.TOOL_SEARCH_AUTO_TOOLS ? int(env, 'TOOL_SEARCH_AUTO_TOOLS', 0, 1, 100_000) : null,
    autoBytes: int(env, 'TOOL_SEARCH_AUTO_BYTES', DEFAULT_TOOL_SEARCH_AUTO_BYTES, 1_024, 64 * 1024 * 1024),
    declare: int(env, 'TOOL_SEARCH_DECLARE', DEFAULT_TOOL_SEARCH_DECLARE, 0, 1_000),
    defaultLimit: int(env, 'TOOL_SEARCH_LIMIT', DEFAULT_TOOL_SEARCH_LIMIT, 1, 50),
    maxLimit: int(env, 'TOOL_SEARCH_MAX_LIMIT', DEFAULT_TOOL_SEARCH_MAX_LIMIT, 1, 50),
    maxQueryChars: int(env, 'TOOL_SEARCH_QUERY_MAX', DEFAULT_TOOL_SEARCH_QUERY_MAX, 16, 4_096),
  };
}

function limits(env: Env): Limits {
  return {
    maxBodyBytesStaff: int(
      env,
      'MAX_BODY_BYTES_STAFF',
      DEFAULT_MAX_BODY_BYTES_STAFF,
      1024,
      256 * 1024 * 1024,
    ),
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1024, 256 * 1024 * 1024),
    maxTokens: int(env, 'GRAPHQL_MAX_TOKENS', DEFAULT_GRAPHQL_MAX_TOKENS, 100, 1_000_000),
    maxFields: int(env, 'GRAPHQL_MAX_FIELDS', DEFAULT_GRAPHQL_MAX_FIELDS, 10, 100_000),
    maxDocumentBytes: int(
      env,
      'GRAPHQL_MAX_DOCUMENT_BYTES',
      DEFAULT_GRAPHQL_MAX_DOCUMENT_BYTES,
      1024,
      16 * 1024 * 1024,
    ),
    maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', DEFAULT_GRAPHQL_MAX_DEPTH, 1, 1_000),
    maxAliases: int(env, 'GRAPHQL_MAX_ALIASES', DEFAULT_GRAPHQL_MAX_ALIASES, 0, 10_000),
    maxCost: int(env, 'GRAPHQL_MAX_COST', DEFAULT_GRAPHQL_MAX_COST, 1, 1_000_000_000),
    subscriptionsPerToken: int(env, 'SUBSCRIPTIONS_PER_TOKEN', DEFAULT_SUBSCRIPTIONS_PER_TOKEN, 1, 10_000),
    subscriptionsPerSocket: int(env, 'SUBSCRIPTIONS_PER_SOCKET', DEFAULT_SUBSCRIPTIONS_PER_SOCKET, 1, 10_000),
    replayMaxEvents: int(
      env,
      'SUBSCRIPTION_REPLAY_MAX_EVENTS',
      DEFAULT_SUBSCRIPTION_REPLAY_MAX_EVENTS,
      1,
      10_000_000,
    ),
    wsInitWaitMs: int(env, 'WS_INIT_WAIT_MS', DEFAULT_WS_INIT_WAIT_MS, 100, 60_000),
    wsUnacceptedMax: int(env, 'WS_UNACCEPTED_MAX', DEFAULT_WS_UNACCEPTED_MAX, 1, 1_000_000),
  };
}

function mcpServer(env: Env): McpServerLimits {
  return {
    maxBodyBytes: int(env, 'MCP_MAX_BODY_BYTES', DEFAULT_MCP_MAX_BODY_BYTES, 1024, 256 * 1024 * 1024),
    callsPerToken: int(env, 'MCP_CALLS_PER_TOKEN', DEFAULT_MCP_CALLS_PER_TOKEN, 1, 10_000),
    streamsMax: int(env, 'MCP_STREAMS_MAX', DEFAULT_MCP_STREAMS_MAX, 1, 1_000_000),
    conversationsMax: int(env, 'MCP_CONVERSATIONS_MAX', DEFAULT_MCP_CONVERSATIONS_MAX, 1, 10_000_000),
    pageSize: int(env, 'MCP_PAGE_SIZE', DEFAULT_MCP_PAGE_SIZE, 1, 10_000),
    turnIdleMs: int(env, 'MCP_TURN_IDLE_MS', DEFAULT_MCP_TURN_IDLE_MS, 1_000, 24 * 3_600_000),
    allowedOrigins: origins(env, 'MCP_ALLOWED_ORIGINS'),
  };
}
