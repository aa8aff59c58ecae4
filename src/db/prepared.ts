/**
 * Protocol-level named prepared statements on MikroORM's pool, for the call path's records
 * (issue 15).
 *
 * MikroORM's `execute` inlines every value into the statement's text, so PostgreSQL parses and
 * plans each record statement anew: measured with pgbench here, planning is about two thirds of a
 * CALL_STARTED statement's own time (0.30 ms as text, 0.10 ms prepared). A `Prepared` statement is
 * parsed once per pooled connection (node-postgres remembers which connection has which name) and
 * then only bound and executed, with its values sent apart from the text.
 *
 * Behind PgBouncer in transaction mode this needs PgBouncer 1.21 or later with
 * `max_prepared_statements` set (docs/scale.md).
 */
import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';

export type Row = Record<string, unknown>;

export interface Prepared {
  /** Unique per text: a digest of it, so that two statements can never share a name. */
  readonly name: string;
  /** The text with `$1`, `$2`… placeholders. */
  readonly text: string;
  /**
   * What the statement mainly does, for logs (`with: insert into turn_call`): an error from it
   * reads as knex's do, `<shape> - <message>`, so that `log-errors.ts` names it without values.
   */
  readonly shape: string;
}

export type RunPrepared = (statement: Prepared, values: readonly unknown[]) => Promise<Row[]>;

/**
 * `sql` with knex-style `?` placeholders as a named prepared statement. A `?` inside a quoted
 * literal or identifier stays as it is.
 */
export function prepare(shape: string, sql: string): Prepared {
  let text = '';
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote !== null) {
      if (ch === quote) quote = null;
      text += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      text += ch;
    } else if (ch === '?') text += `$${++n}`;
    else text += ch;
  }
  const name = `ct_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  return { name, text, shape };
}

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
}
interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
  emit(event: 'query', data: { sql: string; bindings: readonly unknown[] }): boolean;
}

/**
 * Runs prepared statements on a connection of MikroORM's pool. Each statement is still reported to
 * knex's `query` listeners (statement counts in tests and benches), without its values.
 */
export function preparedRunner(orm: MikroORM): RunPrepared {
  // knex's Client type does not declare the driver methods used here: our own narrow view of it.
  const knex = orm.em.getConnection().getKnex().client as unknown as KnexClient;
  return async (statement, values) => {
    knex.emit('query', { sql: statement.text, bindings: [] });
    const connection = await knex.acquireConnection();
    try {
      const res = await connection.query({ name: statement.name, text: statement.text, values: [...values] });
      return res.rows;
    } catch (err) {
      if (err instanceof Error) err.message = `${statement.shape} - ${err.message}`;
      throw err;
    } finally {
      await knex.releaseConnection(connection);
    }
  };
}
