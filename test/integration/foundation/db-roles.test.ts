/**
 * A ledger the service cannot rewrite (issue 11, finding 9): with two roles, the service's own
 * connection may only INSERT and SELECT the ledger. As that role, UPDATE, DELETE, TRUNCATE,
 * `ALTER TABLE … DISABLE TRIGGER` and `SET LOCAL session_replication_role = replica` all fail;
 * the service works end to end (a WRITE leaves its ledger rows, the sweep closes an intent); and a
 * service that runs as a superuser or as the ledger's owner says so once at start.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { APPEND_ONLY_TABLES } from '../../../src/db/roles.js';
import { createLogger } from '../../../src/logger.js';
import { LedgerSweep } from '../../../src/turns/ledger-sweep.js';
import { LedgerDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { CRM_TOOLS, begin, buildWorld, call, connectTools } from '../../support/turns.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';

const suffix = randomBytes(4).toString('hex');
const owner = `ct_owner_${suffix}`;
const service = `ct_svc_${suffix}`;
const database = `${new URL(inject('databaseUrl')).pathname.slice(1)}_roles_${suffix}`;
// A server that asks for SCRAM over TCP (the embedded cluster does) refuses a role without one.
const password = randomBytes(12).toString('hex');
const apps: TestApp[] = [];
let peer: SdkServerHandle | null = null;

function urlAs(role: string, db = database): string {
  const url = new URL(inject('adminDatabaseUrl'));
  url.username = role;
  url.password = password;
  url.pathname = `/${db}`;
  return url.toString();
}

async function asAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Runs `sql` as `role` on the roles' database; resolves to the error code (or 'ok'). */
async function attempt(role: string, sql: string | string[]): Promise<string> {
  const client = new pg.Client({ connectionString: urlAs(role) });
  await client.connect();
  try {
    await client.query('begin');
    for (const s of Array.isArray(sql) ? sql : [sql]) await client.query(s);
    await client.query('rollback');
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? 'error';
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  await asAdmin(async (client) => {
    await client.query(`create role ${owner} login password '${password}'`);
    await client.query(`create role ${service} login password '${password}'`);
    await client.query(`create database ${database} owner ${owner}`);
  });
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
});

afterAll(async () => {
  for (const app of apps) await app.stop().catch(() => undefined);
  await peer?.close();
  await asAdmin(async (client) => {
    await client.query(`drop database if exists ${database} with (force)`);
    await client.query(`drop role if exists ${service}`);
    await client.query(`drop role if exists ${owner}`);
  });
});

function roleWarnings(t: TestApp): string[] {
  return t.logs.filter((line) => line.includes('could switch off or bypass the append-only ledger'));
}

describe('two roles: MIGRATION_DATABASE_URL owns, DATABASE_URL serves', () => {
  it(
    'should leave a WRITE its ledger rows, and refuse every way of rewriting them to the service role',
    { timeout: 90_000 },
    async () => {
      const t = await startTestApp({
        databaseUrl: urlAs(service),
        env: { MIGRATION_DATABASE_URL: urlAs(owner) },
        captureLogs: true,
      });
      apps.push(t);
      expect(roleWarnings(t)).toEqual([]);

      // End to end as the service role: a WRITE's intent and outcome are written and read back.
      const w = await buildWorld(t, peer!.url);
      await connectTools(t, w);
      const turn = await begin(t, w);
      const result = await call(t, w, turn.turnId, 'crm__update', { email: 'a@b.c', plan: 'pro' });
      expect(result).toMatchObject({ ok: true, status: 'SUCCEEDED' });
      const ledger = await t.ok(LedgerDocument, { id: w.workspaceId }, w.admin);
      expect(ledger.workspace!.ledger.nodes).toEqual([
        expect.objectContaining({ turnCallId: result.callId, status: 'SUCCEEDED', outcomeBy: 'CALL' }),
      ]);
      const readiness = await fetch(new URL('/readyz', t.url));
      expect(readiness.status).toBe(200);

      // The service role owns nothing and is no superuser.
      const who = await asAdmin((c) =>
        c.query<{ rolsuper: boolean; owned: number }>(
          `select rolsuper, (select count(*)::int from pg_class where relowner = r.oid) as owned from pg_roles r where rolname = $1`,
          [service],
        ),
      );
      expect(who.rows).toEqual([{ rolsuper: false, owned: 0 }]);

      for (const table of APPEND_ONLY_TABLES) {
        expect(await attempt(service, `select count(*) from ${table}`)).toBe('ok');
        expect(await attempt(service, `update ${table} set created_at = now()`)).toBe('42501');
        expect(await attempt(service, `delete from ${table}`)).toBe('42501');
        expect(await attempt(service, `truncate ${table}`)).toBe('42501');
        expect(await attempt(service, `alter table ${table} disable trigger user`)).toBe('42501');
        expect(await attempt(service, `alter table ${table} disable trigger all`)).toBe('42501');
        expect(await attempt(service, `drop table ${table}`)).toBe('42501');
      }
      expect(await attempt(service, 'set local session_replication_role = replica')).toBe('42501');
      expect(await attempt(service, 'set session_replication_role = replica')).toBe('42501');
      expect(await attempt(service, 'insert into mikro_orm_migrations (name) values ($$x$$)')).toBe('42501');
      // Everything it needs elsewhere is still there.
      // It moves the debugger's watch mark (setval needs UPDATE), and no other sequence.
      expect(await attempt(service, "select setval('turn_event_watch_until', 1)")).toBe('ok');
      expect(await attempt(service, "select setval('turn_event_seq_seq', 1)")).toBe('42501');
      expect(await attempt(service, 'update workspace set name = name')).toBe('ok');
      expect(await attempt(service, 'delete from review_reason')).toBe('ok');

      // The rows are as they were written.
      const db = new pg.Client({ connectionString: urlAs(owner) });
      await db.connect();
      const { rows } = await db
        .query<{ status: string; outcome: string }>(
          'select l.status, o.status as outcome from ledger_entry l join ledger_outcome o on o.ledger_entry_id = l.id where l.turn_call_id = $1',
          [rawId(result.callId!)],
        )
        .finally(() => db.end());
      expect(rows).toEqual([{ status: 'RUNNING', outcome: 'SUCCEEDED' }]);

      // The sweep closes an intent without an outcome, with nothing but INSERT and SELECT.
      const orm = t.app.services.orm;
      const ws = rawId(w.workspaceId);
      await orm.em.getConnection().execute(
        `insert into ledger_entry (id, workspace_id, assistant_id, turn_id, turn_call_id, operation_key, arguments, status, attempts, created_at)
         values (gen_random_uuid(), ?, ?, gen_random_uuid(), gen_random_uuid(), 'connector.crm.update', '{}', 'RUNNING', 0, now() - interval '1 hour')`,
        [ws, rawId(w.assistantId)],
      );
      const sweep = new LedgerSweep(orm, createLogger('silent'), { afterMs: 1_000, everyMs: 60_000 });
      expect(await sweep.runOnce()).toBe(1);
      expect(await sweep.runOnce()).toBe(0);
    },
  );

  it('should warn once at start when the service runs as the ledger owner', { timeout: 60_000 }, async () => {
    const t = await startTestApp({ databaseUrl: urlAs(owner), captureLogs: true });
    apps.push(t);
    const warnings = roleWarnings(t);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("the ledger tables' owner");
    expect(warnings[0]).toContain('"level":40');
  });

  it('should warn once at start when the service runs as a superuser', { timeout: 60_000 }, async () => {
    const t = await startTestApp({ captureLogs: true });
    apps.push(t);
    const warnings = roleWarnings(t);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('a superuser');
    expect(warnings[0]).not.toMatch(/postgres:\/\//);
  });
});
