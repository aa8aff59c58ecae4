import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * The roll-up's marks set to `at` (a UTC day edge): history begins there, as the usage migration
 * records for a database with history. Only for a test's own database (the marks are global).
 */
export async function startUsageAt(orm: MikroORM, at: number): Promise<void> {
  await orm.em
    .getConnection()
    .execute(`update usage_rollup set hours_until = ?, days_until = ?`, [
      new Date(at).toISOString(),
      new Date(at).toISOString(),
    ]);
}
