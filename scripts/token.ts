/**
 * `npm run token -- --role admin|operator|customer|runtime [--workspace ID] [--label TEXT]`
 * mints an API token and prints it once. Uses DATABASE_URL, or the embedded database in DATA_DIR.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/app.js';
import { Role } from '../src/auth/api-token.entity.js';
import { mintToken, TokenInputError } from '../src/auth/auth.service.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { fromGlobalId } from '../src/graphql/node.js';
import { createLogger } from '../src/logger.js';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({
  options: { role: { type: 'string' }, workspace: { type: 'string' }, label: { type: 'string' } },
  strict: true,
});
const role = values.role?.toUpperCase();
if (!role || !(role in Role))
  fail('usage: npm run token -- --role admin|operator|customer|runtime [--workspace ID] [--label TEXT]');
let workspaceId: string | null = null;
if (values.workspace) {
  // Accept the GraphQL global ID or the raw UUID.
  const parsed = fromGlobalId(values.workspace);
  workspaceId = parsed?.type === 'Workspace' ? parsed.id : values.workspace;
  if (!/^[0-9a-f-]{36}$/.test(workspaceId)) fail(`--workspace "${values.workspace}" is not a workspace ID`);
}

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}
const { orm, embedded } = await openDatabase(config, createLogger('warn'));
try {
  const { token } = await mintToken(orm.em.fork(), { role: role as Role, workspaceId, label: values.label });
  process.stdout.write(`${token}\n`);
} catch (err) {
  if (err instanceof TokenInputError) {
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
  } else throw err;
} finally {
  await orm.close();
  await embedded?.stop();
}
