/**
 * `npm run token -- --role admin|operator|customer|runtime|mcp_client [--workspace ID]
 * [--assistant ID] [--label TEXT] [--expires WHEN]` mints an API token and prints it once. Uses
 * DATABASE_URL, or the embedded database in DATA_DIR. Tokens can also be created, listed and
 * revoked through the API (createApiToken, apiTokens, revokeApiToken).
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Role } from '../src/auth/api-token.entity.js';
import { TokenInputError } from '../src/auth/auth.service.js';

const USAGE = `Mint an API token and print it once (only its SHA-256 is stored).

Usage:
  npm run token -- --role <role> [--workspace <id>] [--assistant <id>] [--label <text>] [--expires <when>]

Options:
  --role       admin | operator | customer | runtime | mcp_client (required)
                 admin     everything, including risk, reviews and tokens
                 operator  connections, discovery and the operator's switches
                 customer  one workspace's dashboards and its assistants' gates (needs --workspace)
                 runtime   beginTurn, callTool and finishTurn (optionally bound with --workspace)
                 mcp_client  one assistant's tools through /mcp/{assistantId} (needs --assistant)
  --workspace  the workspace ID (as the API shows it, or its UUID). Required for customer,
               optional for runtime, refused for admin and operator.
  --assistant  the assistant ID (as the API shows it, or its UUID). Required for mcp_client
               (its workspace comes with it), refused for every other role.
  --label      who holds the token, shown in audit trails and logs (default: "<role> token")
  --expires    when it stops working: an ISO date/time (2026-12-31T23:00:00Z) or a duration
               from now (30m, 12h, 90d). Default: never.
  --help       this text

Uses DATABASE_URL, or the embedded database in DATA_DIR (default ./.data), as npm start does.
Tokens can also be created, listed and revoked through the API: createApiToken, apiTokens,
revokeApiToken (ADMIN; a CUSTOMER for its own workspace's MCP_CLIENT tokens).`;

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

/** `30m`, `12h`, `90d`, or an ISO date/time; null when it is neither. */
function parseExpiry(text: string, now = Date.now()): Date | null {
  const duration = /^(\d+)([mhd])$/.exec(text.trim());
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd'];
    return new Date(now + Number(duration[1]) * unit);
  }
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : new Date(at);
}

let values: {
  role?: string;
  workspace?: string;
  assistant?: string;
  label?: string;
  expires?: string;
  help?: boolean;
};
try {
  ({ values } = parseArgs({
    options: {
      role: { type: 'string' },
      workspace: { type: 'string' },
      assistant: { type: 'string' },
      label: { type: 'string' },
      expires: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (err) {
  fail(`${(err as Error).message}\n\n${USAGE}`);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const role = values.role?.toUpperCase();
if (!role || !(role in Role))
  fail(`${values.role ? `unknown role "${values.role}"` : '--role is required'}\n\n${USAGE}`);

// Loaded after the arguments are checked, so that --help needs no database and no configuration.
const { openDatabase } = await import('../src/app.js');
const { mintToken } = await import('../src/auth/auth.service.js');
const { ConfigError, loadConfig } = await import('../src/config.js');
const { fromGlobalId } = await import('../src/graphql/node.js');
const { createLogger } = await import('../src/logger.js');

let workspaceId: string | null = null;
if (values.workspace) {
  // Accept the GraphQL global ID or the raw UUID.
  const parsed = fromGlobalId(values.workspace);
  workspaceId = parsed?.type === 'Workspace' ? parsed.id : values.workspace;
  if (!/^[0-9a-f-]{36}$/.test(workspaceId)) fail(`--workspace "${values.workspace}" is not a workspace ID`);
}
let assistantId: string | null = null;
if (values.assistant) {
  const parsed = fromGlobalId(values.assistant);
  assistantId = parsed?.type === 'Assistant' ? parsed.id : values.assistant;
  if (!/^[0-9a-f-]{36}$/.test(assistantId)) fail(`--assistant "${values.assistant}" is not an assistant ID`);
}
let expiresAt: Date | null = null;
if (values.expires) {
  expiresAt = parseExpiry(values.expires);
  if (!expiresAt)
    fail(`--expires "${values.expires}" is neither an ISO date/time nor a duration like 30m, 12h, 90d`);
}

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}
let db;
try {
  db = await openDatabase(config, createLogger('warn'));
} catch (err) {
  const where = config.databaseUrl
    ? 'the database at DATABASE_URL'
    : `the embedded database in ${config.dataDir}`;
  fail(`could not open ${where}: ${(err as Error | undefined)?.message ?? 'it did not start'}`, 1);
}
const { orm, embedded } = db;
try {
  const { token } = await mintToken(orm.em.fork(), {
    role: role as Role,
    workspaceId,
    assistantId,
    label: values.label,
    expiresAt,
  });
  process.stdout.write(`${token}\n`);
} catch (err) {
  if (err instanceof TokenInputError) {
    const hint =
      err.field === 'workspaceId'
        ? ' (--workspace)'
        : err.field === 'assistantId'
          ? ' (--assistant)'
          : err.field === 'expiresAt'
            ? ' (--expires)'
            : ' (--label)';
    process.stderr.write(`${err.message}${hint}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`could not create the token: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
} finally {
  await orm.close();
  await embedded?.stop();
}
