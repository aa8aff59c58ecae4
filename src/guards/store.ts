/**
 * The shared state of limits and breakers in PostgreSQL (I/O; migration 20261202140000). Every
 * change runs as one statement that also sends the GUARDS_CHANNEL NOTIFY (delivered at commit), so
 * every instance reloads what changed; a breaker's automatic moves write their audit row in the
 * same statement. Times the call path compares (`retry_at_ms`, `probe_until_ms`, `refilled_ms`)
 * are epoch ms by the instances' clock (injected, so tests drive them with fake time).
 */
import { auditRowsSql } from '../audit/audit.js';
import { GUARDS_CHANNEL, type SqlRunner } from '../db/notifier.js';
import { uuidv7 } from '../db/ids.js';
import { toGlobalId } from '../graphql/node.js';
import type { BreakerForce, BreakerRecord, BreakerScope, BreakerState } from './breaker.js';
import type { LimitScope, LimitSpec } from './bucket.js';

/** The actor of the audit rows a breaker writes by itself. */
export const BREAKER_ACTOR = 'circuit breaker';

const COLS = `scope, scope_id, enabled, forced, state, opened_at, reason, retry_at_ms, cooldown_ms, probe_until_ms`;

interface BreakerRow {
  scope: BreakerScope;
  scope_id: string;
  enabled: boolean;
  forced: BreakerForce | null;
  state: BreakerState;
  opened_at: Date | string | null;
  reason: string | null;
  retry_at_ms: string | number | null;
  cooldown_ms: number | null;
  probe_until_ms: string | number | null;
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

function breakerOf(row: BreakerRow): BreakerRecord {
  return {
    scope: row.scope,
    scopeId: row.scope_id,
    enabled: row.enabled,
    forced: row.forced,
    state: row.state,
    openedAt: row.opened_at === null ? null : new Date(row.opened_at),
    reason: row.reason,
    retryAtMs: num(row.retry_at_ms),
    cooldownMs: row.cooldown_ms,
    probeUntilMs: num(row.probe_until_ms),
  };
}

const notifySql = (row: string) =>
  `pg_notify('${GUARDS_CHANNEL}', json_build_object('kind', 'breaker', 'scope', ${row}.scope, 'id', ${row}.scope_id)::text)`;

const WORKSPACE_OF = `coalesce((select workspace_id from connection where id = ?::uuid), (select workspace_id from operation where id = ?::uuid))`;

/** `change` (an insert or update `returning ${COLS}, workspace_id`) with its audit row and NOTIFY. */
const transitionSql = (change: string) => `
with b as (${change}), a as (
  ${auditRowsSql('b', {
    workspaceId: 'b.workspace_id',
    after: `jsonb_build_object('state', b.state, 'reason', b.reason, 'forced', b.forced, 'enabled', b.enabled, 'cooldownMs', b.cooldown_ms)`,
  })}
  returning id
), n as (select ${notifySql('b')} from b)
select ${COLS}, (select count(*) from n) as notified, (select count(*) from a) as audited from b`;

/** A closed breaker opens (the rule was met), unless it is forced or off, or already moved. */
const OPEN_SQL = transitionSql(`
  insert into call_breaker as cb (scope, scope_id, workspace_id, enabled, state, opened_at, reason, retry_at_ms, cooldown_ms, updated_at)
  values (?, ?::uuid, ${WORKSPACE_OF}, true, 'OPEN', now(), ?, ?, ?, now())
  on conflict (scope, scope_id) do update set state = 'OPEN', opened_at = now(), reason = excluded.reason,
    retry_at_ms = excluded.retry_at_ms, cooldown_ms = excluded.cooldown_ms, probe_until_ms = null, updated_at = now()
  where cb.state = 'CLOSED' and cb.enabled and cb.forced is null
  returning ${COLS}, workspace_id`);

/** The probe answered: the breaker closes. */
const CLOSE_SQL = transitionSql(`
  update call_breaker set state = 'CLOSED', opened_at = null, reason = null, retry_at_ms = null, cooldown_ms = null,
    probe_until_ms = null, updated_at = now()
  where scope = ? and scope_id = ?::uuid and state = 'HALF_OPEN'
  returning ${COLS}, workspace_id`);

/** The probe failed: open again, for a longer cool-down. */
const REOPEN_SQL = transitionSql(`
  update call_breaker set state = 'OPEN', opened_at = now(), reason = ?, retry_at_ms = ?, cooldown_ms = ?,
    probe_until_ms = null, updated_at = now()
  where scope = ? and scope_id = ?::uuid and state = 'HALF_OPEN'
  returning ${COLS}, workspace_id`);

/** One instance takes the probe of an open breaker whose cool-down is over (or whose probe was lost). */
const CLAIM_SQL = `
with b as (
  update call_breaker set state = 'HALF_OPEN', probe_until_ms = ?, updated_at = now()
  where scope = ? and scope_id = ?::uuid and forced is null and enabled
    and ((state = 'OPEN' and retry_at_ms <= ?) or (state = 'HALF_OPEN' and probe_until_ms <= ?))
  returning ${COLS}
), n as (select ${notifySql('b')} from b)
select ${COLS}, (select count(*) from n) as notified from b`;

/** The probe never reached the server (its arguments were refused, say): the next call may probe. */
const RELEASE_SQL = `
with b as (
  update call_breaker set state = 'OPEN', probe_until_ms = null, updated_at = now()
  where scope = ? and scope_id = ?::uuid and state = 'HALF_OPEN'
  returning ${COLS}
), n as (select ${notifySql('b')} from b)
select ${COLS}, (select count(*) from n) as notified from b`;

/** The operator's hand: force, or switch the breaker on or off; either starts it closed again. */
const SET_BREAKER_SQL = transitionSql(`
  insert into call_breaker as cb (scope, scope_id, workspace_id, enabled, forced, state, updated_at)
  values (?, ?::uuid, ${WORKSPACE_OF}, ?, ?, 'CLOSED', now())
  on conflict (scope, scope_id) do update set enabled = excluded.enabled, forced = excluded.forced, state = 'CLOSED',
    opened_at = null, reason = null, retry_at_ms = null, cooldown_ms = null, probe_until_ms = null, updated_at = now()
  returning ${COLS}, workspace_id`);

/** The audit row's placeholders: id, actor, action, target type and id (the id the API shows). */
function auditParams(scope: BreakerScope, id: string, actor: string, action: string): unknown[] {
  const type = scope === 'CONNECTION' ? 'Connection' : 'Operation';
  return [uuidv7(), actor, action, type, toGlobalId(type, id)];
}

export class BreakerStore {
  constructor(private readonly sql: () => SqlRunner) {}

  async loadAll(): Promise<BreakerRecord[]> {
    const rows = (await this.sql().execute(`select ${COLS} from call_breaker`)) as BreakerRow[];
    return rows.map(breakerOf);
  }

  async load(scope: BreakerScope, id: string): Promise<BreakerRecord | null> {
    const rows = (await this.sql().execute(
      `select ${COLS} from call_breaker where scope = ? and scope_id = ?::uuid`,
      [scope, id],
    )) as BreakerRow[];
    return rows[0] ? breakerOf(rows[0]) : null;
  }

  /** Each returns the breaker as it now is, or null when it had already moved (reload it). */
  open(scope: BreakerScope, id: string, reason: string, retryAtMs: number, cooldownMs: number) {
    return this.#one(OPEN_SQL, [
      ...[scope, id, id, id, reason, retryAtMs, cooldownMs],
      ...auditParams(scope, id, BREAKER_ACTOR, 'BREAKER_OPEN'),
    ]);
  }

  close(scope: BreakerScope, id: string) {
    return this.#one(CLOSE_SQL, [scope, id, ...auditParams(scope, id, BREAKER_ACTOR, 'BREAKER_CLOSE')]);
  }

  reopen(scope: BreakerScope, id: string, reason: string, retryAtMs: number, cooldownMs: number) {
    return this.#one(REOPEN_SQL, [
      ...[reason, retryAtMs, cooldownMs, scope, id],
      ...auditParams(scope, id, BREAKER_ACTOR, 'BREAKER_OPEN'),
    ]);
  }

  claim(scope: BreakerScope, id: string, now: number, probeUntilMs: number) {
    return this.#one(CLAIM_SQL, [probeUntilMs, scope, id, now, now]);
  }

  release(scope: BreakerScope, id: string) {
    return this.#one(RELEASE_SQL, [scope, id]);
  }

  /** The operator's change, audited under `actor`. */
  set(scope: BreakerScope, id: string, enabled: boolean, forced: BreakerForce | null, actor: string) {
    return this.#one(SET_BREAKER_SQL, [
      ...[scope, id, id, id, enabled, forced],
      ...auditParams(scope, id, actor, 'SET_BREAKER'),
    ]);
  }

  async #one(sql: string, params: unknown[]): Promise<BreakerRecord | null> {
    const rows = (await this.sql().execute(sql, params)) as BreakerRow[];
    return rows[0] ? breakerOf(rows[0]) : null;
  }
}

/** A limit as stored (`call_limit`), without its bucket. */
export interface LimitRecord extends LimitSpec {
  id: string;
  scope: LimitScope;
  /** The connection's workspace. */
  workspaceId: string;
  connectionId: string;
  operationId: string | null;
  /** WORKSPACE: the workspace whose calls on the connection it counts. */
  forWorkspaceId: string | null;
}

interface LimitRow {
  id: string;
  scope: LimitScope;
  workspace_id: string;
  connection_id: string;
  operation_id: string | null;
  for_workspace_id: string | null;
  calls: number;
  period_ms: number;
  burst: number;
}

const LIMIT_COLS = `id, scope, workspace_id, connection_id, operation_id, for_workspace_id, calls, period_ms, burst`;

function limitOf(row: LimitRow): LimitRecord {
  return {
    id: row.id,
    scope: row.scope,
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    operationId: row.operation_id,
    forWorkspaceId: row.for_workspace_id,
    calls: row.calls,
    periodMs: row.period_ms,
    burst: row.burst,
  };
}

const limitNotifySql = `pg_notify('${GUARDS_CHANNEL}', json_build_object('kind', 'limit', 'scope', 'CONNECTION', 'id', ?::text)::text)`;

/**
 * A lease: the bucket refilled to now (plus what an expired lease gives back), then up to `want`
 * whole tokens taken from it. The row is locked for the statement, so instances take turns.
 */
const LEASE_SQL = `
with cur as (
  select id, least(burst::float8, tokens + ?::float8 + greatest(0, ?::bigint - refilled_ms) * calls::float8 / period_ms) as avail
  from call_limit where id = ?::uuid for update
), g as (
  select id, avail, least(?::int, floor(avail)::int) as n from cur
)
update call_limit l set tokens = g.avail - g.n, refilled_ms = greatest(l.refilled_ms, ?::bigint)
from g where l.id = g.id
returning g.n as granted, g.avail as available`;

/** Sets a limit (its bucket starts full), audited in the caller's transaction. */
const UPSERT_LIMIT_SQL = `
with l as (
  insert into call_limit as cl (id, workspace_id, connection_id, operation_id, for_workspace_id, scope, calls, period_ms, burst,
                                tokens, refilled_ms, created_at, updated_at)
  values (?::uuid, (select workspace_id from connection where id = ?::uuid), ?::uuid, ?::uuid, ?::uuid, ?, ?, ?, ?, ?, ?, now(), now())
  on conflict (connection_id, scope, coalesce(operation_id, '00000000-0000-0000-0000-000000000000'),
               coalesce(for_workspace_id, '00000000-0000-0000-0000-000000000000'))
  do update set calls = excluded.calls, period_ms = excluded.period_ms, burst = excluded.burst,
                tokens = excluded.tokens, refilled_ms = excluded.refilled_ms, updated_at = now()
  returning ${LIMIT_COLS}
)
select l.*, ${limitNotifySql} from l`;

const DELETE_LIMIT_SQL = `
with l as (
  delete from call_limit where connection_id = ?::uuid and scope = ?
    and operation_id is not distinct from ?::uuid and for_workspace_id is not distinct from ?::uuid
  returning ${LIMIT_COLS}
)
select l.*, ${limitNotifySql} from l`;

export class LimitStore {
  constructor(private readonly sql: () => SqlRunner) {}

  async loadAll(): Promise<LimitRecord[]> {
    const rows = (await this.sql().execute(`select ${LIMIT_COLS} from call_limit`)) as LimitRow[];
    return rows.map(limitOf);
  }

  async loadConnection(connectionId: string): Promise<LimitRecord[]> {
    const rows = (await this.sql().execute(
      `select ${LIMIT_COLS} from call_limit where connection_id = ?::uuid`,
      [connectionId],
    )) as LimitRow[];
    return rows.map(limitOf);
  }

  /** Takes up to `want` tokens; null when the limit is gone. */
  async lease(
    id: string,
    now: number,
    want: number,
    giveBack: number,
  ): Promise<{ granted: number; available: number } | null> {
    const rows = (await this.sql().execute(LEASE_SQL, [giveBack, now, id, want, now])) as {
      granted: number;
      available: number;
    }[];
    const row = rows[0];
    return row ? { granted: Number(row.granted), available: Number(row.available) } : null;
  }

  /** Sets (or with `spec` null removes) a limit, on `sql` (the caller's transaction); the NOTIFY goes at commit. */
  static async set(
    sql: SqlRunner,
    key: {
      scope: LimitScope;
      connectionId: string;
      operationId: string | null;
      forWorkspaceId: string | null;
    },
    spec: LimitSpec | null,
    now: number,
  ): Promise<LimitRecord | null> {
    if (spec === null) {
      const rows = (await sql.execute(DELETE_LIMIT_SQL, [
        key.connectionId,
        key.scope,
        key.operationId,
        key.forWorkspaceId,
        key.connectionId,
      ])) as LimitRow[];
      return rows[0] ? limitOf(rows[0]) : null;
    }
    const rows = (await sql.execute(UPSERT_LIMIT_SQL, [
      uuidv7(),
      key.connectionId,
      key.connectionId,
      key.operationId,
      key.forWorkspaceId,
      key.scope,
      spec.calls,
      spec.periodMs,
      spec.burst,
      spec.burst,
      now,
      key.connectionId,
    ])) as LimitRow[];
    return rows[0] ? limitOf(rows[0]) : null;
  }
}
