/**
 * Connection.health and Operation.health (issue 28): every number against a count over the raw
 * turn_call rows of the same window, with part of the history rolled up and the rest live; the
 * same key in another workspace never counted; a constant number of statements for a page of 2
 * or 12 operations. The calls are written as the service records them (rows of real turns, ids
 * made at their start time), at chosen times.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { createLogger } from '../../../src/logger.js';
import { bucketOf, HISTOGRAM_BUCKETS, percentile } from '../../../src/usage/histogram.js';
import { healthRange, HealthWindow } from '../../../src/usage/health.js';
import { UsageRollup } from '../../../src/usage/rollup.js';
import {
  BeginTurnDocument,
  ConnectionHealthDocument,
  ConnectionOperationsDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  SetConnectedToolsDocument,
} from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startUsageAt } from '../../support/usage.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.UTC(2031, 5, 1);
/** "Now" for the questions: two days and 5 h 10 min after the history starts. */
const UNTIL = BASE + 2 * DAY + 5 * HOUR + 10 * 60_000;
const STATUSES = ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'TOOL_ERROR', 'TIMEOUT', 'UPSTREAM_ERROR'];

function description(prefix: string, count: number): string {
  const paths = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `/${prefix}/${i}`,
      { get: { operationId: `${prefix}${i}`, responses: { '200': { description: 'ok' } } } },
    ]),
  );
  return JSON.stringify({
    openapi: '3.0.3',
    info: { title: prefix, version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths,
  });
}

let t: TestApp;
let admin: string;
let customer: string;
let otherCustomer: string;
let crm: string;
let big: string;
let seed = 11;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

async function connect(workspaceId: string, name: string, count: number) {
  const res = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId,
        kind: 'OPENAPI',
        name,
        descriptionText: description(name, count),
        endpointUrl: null,
      },
    },
    admin,
  );
  const id = res.createConnection.connection!.id;
  const ops = await t.ok(ConnectionOperationsDocument, { id }, admin);
  return { id, ops: ops.connection!.operations.nodes.map((o) => ({ id: rawId(o.id), key: o.key })) };
}

async function insertCalls(
  turnId: string,
  workspaceId: string,
  ops: { id: string; key: string }[],
  n: number,
): Promise<void> {
  const sql = t.app.services.orm.em.getConnection();
  for (let i = 0; i < n; i++) {
    const at = BASE + Math.floor(random() * (UNTIL + HOUR - BASE));
    const op = ops[Math.floor(random() * ops.length)]!;
    const duration = i % 9 === 4 ? null : Math.floor(Math.exp(random() * 9));
    await sql.execute(
      `insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
         status, message, attempts, resends, duration_ms, risk, started_at, finished_at)
       values (?, ?, ?, ?, ?, ?, 'x', '{}', ?, null, 1, 0, ?, 'READ', ?, ?)`,
      [
        uuidv7(at),
        turnId,
        workspaceId,
        i + 1,
        op.key,
        op.id,
        STATUSES[Math.floor(random() * STATUSES.length)],
        duration,
        new Date(at).toISOString(),
        new Date(at + (duration ?? 0)).toISOString(),
      ],
    );
  }
}

/** The numbers straight from turn_call, as health should give them. */
async function raw(where: string, params: unknown[], window: HealthWindow) {
  const { from, to } = healthRange(window, UNTIL);
  const rows = await t.app.services.orm.em
    .getConnection()
    .execute<{ status: string; duration_ms: number | null; started_at: Date }[]>(
      `select tc.status, tc.duration_ms, tc.started_at from turn_call tc join operation o on o.id = tc.operation_id
        where ${where} and tc.started_at >= ? and tc.started_at < ?`,
      [...params, new Date(from).toISOString(), new Date(to).toISOString()],
    );
  const byStatus = new Map<string, number>();
  const histogram = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  const hours = new Map<number, { calls: number; errors: number }>();
  for (const r of rows) {
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    if (r.duration_ms !== null) histogram[bucketOf(r.duration_ms)]!++;
    const hour = Math.floor(new Date(r.started_at).getTime() / HOUR) * HOUR;
    const h = hours.get(hour) ?? { calls: 0, errors: 0 };
    h.calls++;
    if (r.status !== 'SUCCEEDED') h.errors++;
    hours.set(hour, h);
  }
  const errors = rows.filter((r) => r.status !== 'SUCCEEDED').length;
  return {
    calls: rows.length,
    errors,
    byStatus: [...byStatus.entries()]
      .map(([status, calls]) => ({ status, calls }))
      .sort((a, b) => (a.status < b.status ? -1 : 1)),
    p50DurationMs: percentile(histogram, 0.5),
    p95DurationMs: percentile(histogram, 0.95),
    points: [...hours.entries()]
      .sort(([a], [b]) => a - b)
      .map(([start, h]) => ({ start: new Date(start).toISOString(), ...h })),
  };
}

const shape = (h: {
  calls: number;
  errors: number;
  byStatus: { status: string; calls: number }[];
  p50DurationMs?: number | null;
  p95DurationMs?: number | null;
  points: { start: string; calls: number; errors: number }[];
}) => ({
  calls: h.calls,
  errors: h.errors,
  byStatus: [...h.byStatus].sort((a, b) => (a.status < b.status ? -1 : 1)),
  p50DurationMs: h.p50DurationMs ?? null,
  p95DurationMs: h.p95DurationMs ?? null,
  points: h.points.map((p) => ({ start: new Date(p.start).toISOString(), calls: p.calls, errors: p.errors })),
});

beforeAll(async () => {
  t = await startTestApp({ databaseUrl: await createEmptyDatabase() });
  await startUsageAt(t.app.services.orm, BASE);
  admin = await t.token(Role.ADMIN);
  const runtime = await t.token(Role.RUNTIME);
  const ws = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Ops' } }, admin)).createWorkspace
    .workspace!.id;
  const other = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Else' } }, admin)).createWorkspace
    .workspace!.id;
  customer = await t.token(Role.CUSTOMER, rawId(ws));
  otherCustomer = await t.token(Role.CUSTOMER, rawId(other));
  const a = await connect(ws, 'crm', 2);
  const b = await connect(ws, 'big', 12);
  // The same connection name, so the same operation keys, in another workspace.
  const c = await connect(other, 'crm', 2);
  crm = a.id;
  big = b.id;
  const turns: string[] = [];
  for (const w of [ws, ws, other]) {
    const assistant = (await t.ok(CreateAssistantDocument, { input: { workspaceId: w, name: 'A' } }, admin))
      .createAssistant.assistant!.id;
    turns.push(
      (await t.ok(BeginTurnDocument, { input: { assistantId: assistant, conversationId: 'h' } }, runtime))
        .beginTurn.turnId,
    );
    if (w === ws && turns.length === 1)
      await t.ok(
        SetConnectedToolsDocument,
        { input: { assistantId: assistant, connectionId: crm, enabled: true } },
        admin,
      );
  }
  await insertCalls(rawId(turns[0]!), rawId(ws), a.ops, 300);
  await insertCalls(rawId(turns[1]!), rawId(ws), b.ops, 100);
  await insertCalls(rawId(turns[2]!), rawId(other), c.ops, 150);
  // Roll up to two hours before UNTIL: the rest is the live edge, read from turn_call.
  const rollup = new UsageRollup(
    t.app.services.orm,
    createLogger('silent'),
    { everyMs: 60_000, settleMs: 0 },
    () => UNTIL - 2 * HOUR,
  );
  expect(await rollup.runOnce()).toBeGreaterThan(40);
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('health', () => {
  it.each([HealthWindow.HOUR, HealthWindow.DAY, HealthWindow.WEEK])(
    'should match the raw calls for a connection and each operation over the %s',
    async (window) => {
      const data = await t.ok(
        ConnectionHealthDocument,
        { id: crm, window, until: new Date(UNTIL).toISOString() },
        admin,
      );
      const h = data.connection!.health;
      const expected = await raw('o.connection_id = ?', [rawId(crm)], window);
      expect(expected.calls).toBeGreaterThan(0);
      expect(shape(h)).toEqual(expected);
      expect(h.errorRate).toBeCloseTo(expected.errors / expected.calls, 10);
      const range = healthRange(window, UNTIL);
      expect([h.from, h.to]).toEqual([new Date(range.from).toISOString(), new Date(range.to).toISOString()]);
      expect(h.lastDiscovery).toMatchObject({ outcome: 'SUCCEEDED', partial: false, skipped: 0 });
      expect(h.signIn).toBeNull();
      for (const op of data.connection!.operations.nodes) {
        expect(shape(op.health)).toEqual(await raw('o.id = ?', [rawId(op.id)], window));
        expect(op.health.declaredBy).toBe(1);
      }
    },
  );

  it('should give a customer its own workspace only', async () => {
    const own = await t.ok(
      ConnectionHealthDocument,
      { id: crm, window: HealthWindow.WEEK, until: new Date(UNTIL).toISOString() },
      customer,
    );
    expect(own.connection!.health.calls).toBe(
      (await raw('o.connection_id = ?', [rawId(crm)], HealthWindow.WEEK)).calls,
    );
    const theirs = await t.gql(
      ConnectionHealthDocument,
      { id: crm, window: HealthWindow.WEEK },
      otherCustomer,
    );
    expect(theirs.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('should count declaring assistants only while both gates are on', async () => {
    const data = await t.ok(ConnectionHealthDocument, { id: big, window: HealthWindow.HOUR }, admin);
    for (const op of data.connection!.operations.nodes) expect(op.health.declaredBy).toBe(0);
  });

  it('should take the same statements for 2 operations as for 12', async () => {
    const count = async (id: string) => {
      t.resetQueries();
      const data = await t.ok(
        ConnectionHealthDocument,
        { id, window: HealthWindow.DAY, until: new Date(UNTIL).toISOString() },
        admin,
      );
      const n = t.queries.filter((q) => !/^(begin|commit|rollback|select set_config)/i.test(q)).length;
      return { n, ops: data.connection!.operations.nodes.length };
    };
    const small = await count(crm);
    const large = await count(big);
    expect([small.ops, large.ops]).toEqual([2, 12]);
    expect(large.n).toBe(small.n);
  });
});
