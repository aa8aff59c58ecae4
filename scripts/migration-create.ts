/**
 * `npm run migration:create -- Name` writes a migration with the difference between the entities
 * and the migrated database into migrations/, to be listed in src/db/migrations.ts.
 */
import 'reflect-metadata';
import { openDatabase } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';

const name = process.argv[2];
const { orm, embedded } = await openDatabase(loadConfig(), createLogger('warn'));
try {
  const result = await orm.getMigrator().createMigration('migrations', false, false, name);
  if (result.diff.up.length === 0) console.log('no changes: the database matches the entities');
  else console.log(`written ${result.fileName}: add it to MIGRATIONS in src/db/migrations.ts`);
} finally {
  await orm.close();
  await embedded?.stop();
}
