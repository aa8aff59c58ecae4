/**
 * Concurrency caps' shared state in PostgreSQL (I/O; migration 20261202168000). A cap is a row of
 * `call_cap`; the slots each instance holds are its row of `call_cap_lease`, set by `ct_cap_hold`
 * (one statement: lock the cap, count the others' live leases, grant what is left). Changes to a
 * cap send the GUARDS_CHANNEL NOTIFY (`kind: 'cap'`, scope CONFIG); an instance short of slots sends
 * WANT, one that gave slots back FREED (call-guard.ts acts on both).
 */
import { GUARDS_CHANNEL, type SqlRunner } from '../db/notifier.js';
import { uuidv7 } from '../db/ids.js';
import type { CapScope, CapSpec } from './cap.js';

/** A cap as stored. */
export interface CapRecord extends CapSpec {
  id: string;
  scope: CapScope;
  workspaceId: string;
  connectionId: string;
  operationId: string | null;
}

interface CapRow {
  id: string;
  scope: CapScope;
  workspace_id: string;
  connection_id: string;
  operation_id: string | null;
  max_in_flight: number;
  max_wait_ms: number;
}

const CAP_COLS = `id, scope, workspace_id, connection_id, operation_id, max_in_flight, max_wait_ms`;

function capOf(row: CapRow): CapRecord {
  return {
    id: row.id,
    scope: row.scope,
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    operationId: row.operation_id,
    maxInFlight: Number(row.max_in_flight),
    maxWaitMs: Number(row.max_wait_ms),
  };
}

const configNotifySql = `pg_notify('${GUARDS_CHANNEL}', json_build_object('kind', 'cap', 'scope', 'CONFIG', 'id', ?::text)::text)`;

const UPSERT_CAP_SQL = `
with c as (
  insert into call_cap as cc (id, workspace_id, connection_id, operation_id, scope, max_in_flight, max_wait_ms, created_at, updated_at)
  values (?::uuid, (select workspace_id from connection where id = ?::uuid), ?::uuid, ?::uuid, ?, ?, ?, now(), now())
  on conflict (connection_id, scope, coalesce(operation_id, '00000000-0000-0000-0000-000000000000'))
  do update set max_in_flight = excluded.max_in_flight, max_wait_ms = excluded.max_wait_ms, updated_at = now()
  returning ${CAP_COLS}
)
select c.*, ${configNotifySql} from c`;

const DELETE_CAP_SQL = `
with c as (
  delete from call_cap where connection_id = ?::uuid and scope = ? and operation_id is not distinct from ?::uuid
  returning ${CAP_COLS}
)
select c.*, ${configNotifySql} from c`;

export class CapStore {
  constructor(private readonly sql: () => SqlRunner) {}

  async loadAll(): Promise<CapRecord[]> {
    const rows = (await this.sql().execute(`select ${CAP_COLS} from call_cap`)) as CapRow[];
    return rows.map(capOf);
  }

  async loadConnection(connectionId: string): Promise<CapRecord[]> {
    const rows = (await this.sql().execute(`select ${CAP_COLS} from call_cap where connection_id = ?::uuid`, [
      connectionId,
    ])) as CapRow[];
    return rows.map(capOf);
  }

  /**
   * This instance now wants to hold `target` slots of the cap: the slots it holds after (no more
   * than the others' live leases leave), or null when the cap is gone. `freed` sends FREED.
   */
  async hold(
    capId: string,
    instanceId: string,
    target: number,
    now: number,
    expiresMs: number,
    freed: boolean,
  ): Promise<number | null> {
    const rows = (await this.sql().execute(`select ct_cap_hold(?::uuid, ?, ?, ?, ?, ?) as held`, [
      capId,
      instanceId,
      target,
      now,
      expiresMs,
      freed,
    ])) as { held: number | null }[];
    const held = rows[0]?.held;
    return held === null || held === undefined ? null : Number(held);
  }

  /** Asks the other instances to give back the slots of the cap they hold unused. */
  async want(capId: string): Promise<void> {
    await this.sql().execute(`select pg_notify(?, ?)`, [
      GUARDS_CHANNEL,
      JSON.stringify({ kind: 'cap', scope: 'WANT', id: capId }),
    ]);
  }

  /** Drops every lease of this instance (at shutdown): its slots come back at once. */
  async dropAll(instanceId: string): Promise<void> {
    await this.sql().execute(`delete from call_cap_lease where instance_id = ?`, [instanceId]);
  }

  /** Sets (or with `spec` null removes) a cap on `sql` (the caller's transaction); the NOTIFY goes at commit. */
  static async set(
    sql: SqlRunner,
    key: { scope: CapScope; connectionId: string; operationId: string | null },
    spec: CapSpec | null,
  ): Promise<CapRecord | null> {
    if (spec === null) {
      const rows = (await sql.execute(DELETE_CAP_SQL, [
        key.connectionId,
        key.scope,
        key.operationId,
        key.connectionId,
      ])) as CapRow[];
      return rows[0] ? capOf(rows[0]) : null;
    }
    const rows = (await sql.execute(UPSERT_CAP_SQL, [
      uuidv7(),
      key.connectionId,
      key.connectionId,
      key.operationId,
      key.scope,
      spec.maxInFlight,
      spec.maxWaitMs,
      key.connectionId,
    ])) as CapRow[];
    return rows[0] ? capOf(rows[0]) : null;
  }
}
