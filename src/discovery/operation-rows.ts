/**
 * A connection's operations read and written as sets (I/O), for discovery's apply step.
 *
 * Discovery may save 300 operations whose input schemas hold megabytes of JSON. Through the ORM
 * that took the event loop for seconds: hydrating and snapshotting every entity, comparing the
 * snapshots at flush, and (above all) inlining every value into the SQL text, escaped character
 * by character. Here each step is one statement whose rows travel as ONE bound JSON parameter
 * (`JSON.stringify`, native) and are unpacked by PostgreSQL, off our event loop; rows are read
 * without entities. Every statement runs on the transaction's own connection.
 */
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { uuidv7 } from '../db/ids.js';
import type { OperationFields, StoredOperation } from './reconcile.js';
import type { JsonObject, OpenApiBinding, Risk } from '../operations/types.js';
import type { DiffEntry } from '../operations/diff.js';
import { ON_BY_DEFAULT_RISK } from '../operations/risk.js';

/** Runs one statement with bound parameters on `tx`'s transaction; database errors become MikroORM's classes. */
async function query<T>(tx: EntityManager, sql: string, bindings: readonly Knex.RawBinding[]): Promise<T[]> {
  const trx = tx.getTransactionContext<Knex.Transaction>();
  if (!trx) throw new Error('operation rows are read and written inside a transaction only');
  try {
    const result = await trx.raw<{ rows: T[] }>(sql, [...bindings]);
    return result.rows;
  } catch (err) {
    throw tx.getDriver().convertException(err as Error);
  }
}

/** jsonb comes back parsed from `pg`; accept text too rather than depend on a type parser. */
const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

interface StoredRow {
  id: string;
  key: string;
  name: string;
  title: string | null;
  description: string | null;
  input_schema: unknown;
  check_schema: unknown;
  output_schema: unknown;
  annotations: unknown;
  binding: unknown;
  risk: Risk;
  source_risk: Risk;
  idempotent: boolean;
  enabled: boolean;
  risk_set_by_admin: boolean;
}

/** The connection's operations, oldest first, as the reconciler reads them (reasons filled in by the caller). */
export async function readStoredOperations(
  tx: EntityManager,
  connectionId: string,
): Promise<Omit<StoredOperation, 'openReasons'>[]> {
  const rows = await query<StoredRow>(
    tx,
    `select id, key, name, title, description, input_schema, check_schema, output_schema, annotations, binding, risk, source_risk,
            idempotent, enabled, risk_set_by_admin
       from operation where connection_id = ? order by id`,
    [connectionId],
  );
  return rows.map((r) => ({
    id: r.id,
    key: r.key,
    name: r.name,
    title: r.title,
    description: r.description,
    inputSchema: json<JsonObject>(r.input_schema),
    checkSchema: json<JsonObject | null>(r.check_schema),
    outputSchema: json<JsonObject | null>(r.output_schema),
    annotations: json<JsonObject | null>(r.annotations),
    binding: json<OpenApiBinding | null>(r.binding),
    risk: r.risk,
    sourceRisk: r.source_risk,
    idempotent: r.idempotent,
    enabled: r.enabled,
    riskSetByAdmin: r.risk_set_by_admin,
  }));
}

/** Deletes operations by id; their review reasons go with them (foreign key `on delete cascade`). */
export async function deleteOperations(tx: EntityManager, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await query(tx, `delete from operation where id = any(?::uuid[])`, [ids as string[]]);
}

/** A new operation's row. Columns not named here take their default (null, false). */
export interface NewOperationRow {
  id: string;
  key: string;
  name: string;
  title: string | null;
  description: string | null;
  inputSchema: JsonObject;
  checkSchema: JsonObject | null;
  outputSchema: JsonObject | null;
  annotations: JsonObject | null;
  binding: OpenApiBinding | null;
  risk: Risk;
  idempotent: boolean;
  enabled: boolean;
  /** Held by discovery (its reasons are saved by the caller); absent means false. */
  needsReview?: boolean;
}

/** Inserts new operations of one connection in one statement. */
export async function insertOperations(
  tx: EntityManager,
  ids: { workspaceId: string; connectionId: string },
  rows: readonly NewOperationRow[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await query(
    tx,
    `insert into operation (id, workspace_id, connection_id, key, name, title, description, input_schema,
                            check_schema, output_schema, annotations, risk, risk_set_by_admin, source_risk, enabled, idempotent,
                            needs_review, binding, created_at, updated_at)
     select (e->>'id')::uuid, ?::uuid, ?::uuid, e->>'key', e->>'name', e->>'title', e->>'description',
            e->'inputSchema', nullif(e->'checkSchema', 'null'::jsonb), nullif(e->'outputSchema', 'null'::jsonb), nullif(e->'annotations', 'null'::jsonb), e->>'risk', false, e->>'risk',
            (e->>'enabled')::boolean, (e->>'idempotent')::boolean, coalesce((e->>'needsReview')::boolean, false),
            nullif(e->'binding', 'null'::jsonb), ?::timestamptz, ?::timestamptz
       from jsonb_array_elements(?::jsonb) with ordinality as t(e, n)
      order by n`,
    [ids.workspaceId, ids.connectionId, now.toISOString(), now.toISOString(), JSON.stringify(rows)],
  );
}

/** What one run did to one operation, for `operation_change` (the run's change list). */
export interface OperationChangeRow {
  /** Null for a removed operation: its row is gone by the time this one is written. */
  operationId: string | null;
  kind: string;
  operationKey: string;
  operationName: string;
  entries: DiffEntry[];
}

/** Inserts a run's change list in one statement, in the given order (ids follow it). */
export async function insertOperationChanges(
  tx: EntityManager,
  runId: string,
  rows: readonly OperationChangeRow[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await query(
    tx,
    `insert into operation_change (id, discovery_run_id, operation_id, kind, operation_key, operation_name, entries, created_at)
     select (e->>'id')::uuid, ?::uuid, (e->>'operationId')::uuid, e->>'kind', e->>'operationKey', e->>'operationName',
            e->'entries', ?::timestamptz
       from jsonb_array_elements(?::jsonb) with ordinality as t(e, n)
      order by n`,
    [runId, now.toISOString(), JSON.stringify(rows.map((r) => ({ ...r, id: uuidv7() })))],
  );
}

/**
 * What one refresh writes to one operation: only the fields that changed (as the ORM would), so a
 * column nobody changed keeps whatever a concurrent writer put there; `hold` turns it off for review.
 */
export interface OperationChange {
  id: string;
  fields: Partial<OperationFields>;
  hold: boolean;
  /** Its holds cleared and nothing else is open: no review, on only when its risk (as written) is READ. */
  release?: boolean;
}

const TEXT_COLUMNS = [
  ['title', 'title'],
  ['description', 'description'],
  ['risk', 'risk'],
  ['sourceRisk', 'source_risk'],
] as const;
const JSON_COLUMNS = [
  ['inputSchema', 'input_schema'],
  ['checkSchema', 'check_schema'],
  ['outputSchema', 'output_schema'],
  ['annotations', 'annotations'],
  ['binding', 'binding'],
] as const;

/** Updates changed operations in one statement; a field absent from `fields` is left as it is. */
export async function updateOperations(
  tx: EntityManager,
  changes: readonly OperationChange[],
  now: Date,
): Promise<void> {
  if (changes.length === 0) return;
  // `e->'f' is not null` is true exactly when the key is present (a JSON null is not SQL NULL).
  const has = (f: string) => `e->'${f}' is not null`;
  const sets = [
    ...TEXT_COLUMNS.map(([f, c]) => `${c} = case when ${has(f)} then e->>'${f}' else o.${c} end`),
    ...JSON_COLUMNS.map(
      ([f, c]) => `${c} = case when ${has(f)} then nullif(e->'${f}', 'null'::jsonb) else o.${c} end`,
    ),
    `idempotent = case when ${has('idempotent')} then (e->>'idempotent')::boolean else o.idempotent end`,
    `enabled = case when (e->>'hold')::boolean then false when (e->>'release')::boolean then coalesce(e->>'risk', o.risk) = '${ON_BY_DEFAULT_RISK}' else o.enabled end`,
    `needs_review = case when (e->>'hold')::boolean then true when (e->>'release')::boolean then false else o.needs_review end`,
    `updated_at = ?::timestamptz`,
  ];
  await query(
    tx,
    `update operation o set ${sets.join(', ')}
       from jsonb_array_elements(?::jsonb) as e
      where o.id = (e->>'id')::uuid`,
    [
      now.toISOString(),
      JSON.stringify(
        changes.map((c) => ({ ...c.fields, id: c.id, hold: c.hold, release: c.release ?? false })),
      ),
    ],
  );
}

/**
 * A digest of a connection's operations and their open review reasons, as a re-discovery would
 * reconcile them: equal stamps mean nothing changed them in between. Every column a plan reads is
 * in it directly, except the JSON ones (schema, binding, annotations) and the texts, which only
 * discovery writes and whose rows' `updated_at` moves with every write (the ORM's `onUpdate`, and
 * `updateOperations` here). Computed by PostgreSQL: no schema travels.
 */
export async function operationsStamp(tx: EntityManager, connectionId: string): Promise<string> {
  const [row] = await query<{ stamp: string }>(tx, `select ${STAMP_SQL} as stamp`, [
    connectionId,
    connectionId,
  ]);
  return row!.stamp;
}

/** {@link operationsStamp} as an SQL expression; its two bindings are both the connection's id. */
export const STAMP_SQL = `md5(
       coalesce((select string_agg(concat_ws('|', o.id, o.key, o.name, o.risk, o.source_risk, o.risk_set_by_admin,
                                             o.enabled, o.needs_review, o.idempotent, extract(epoch from o.updated_at)),
                                   ',' order by o.id)
                   from operation o where o.connection_id = ?), '')
       || '/' ||
       coalesce((select string_agg(concat_ws('|', r.id, r.code, r.detail), ',' order by r.id)
                   from review_reason r join operation o on o.id = r.operation_id
                  where o.connection_id = ? and r.resolved_at is null), ''))`;
