/**
 * Usage for dashboards: aggregates against sums and percentiles computed here from the recorded
 * calls, the same answer before and after the roll-up, UTC bucket edges, limits, and the
 * CUSTOMER boundary. The calls are written as the service records them (turn_call rows of real
 * turns, ids made at their start time), at chosen times and durations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { createLogger } from '../../../src/logger.js';
import { rollupMarks } from '../../../src/usage/marks.js';
import { UsageRollup } from '../../../src/usage/rollup.js';
import { queryUsage, type UsageGroupBy } from '../../../src/usage/usage.query.js';
import type { UsageBucket } from '../../../src/usage/window.js';
import {
  BeginTurnDocument,
  CallToolDocument,
  CreateAssistantDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  ConnectionOperationsDocument,
} from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startUsageAt } from '../../support/usage.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** History starts here: three whole UTC days, then a few hours of a fourth. */
const BASE = Date.UTC(2031, 2, 10);
const END = BASE + 3 * DAY + 6 * HOUR;
const STATUSES = ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'TOOL_ERROR', 'TIMEOUT', 'UNAVAILABLE'] as const;
const ERRORS = new Set([
  'TOOL_ERROR',
  'UPSTREAM_ERROR',
  'TIMEOUT',
  'REJECTED',
  'UNAVAILABLE',
  'OUTCOME_UNKNOWN',
]);

function description(prefix: string): string {
  return JSON.stringify({
    openapi: '3.0.3',
    info: { title: prefix, version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      [`/${prefix}/a`]: { get: { operationId: `${prefix}A`, responses: { '200': { description: 'ok' } } } },
      [`/${prefix}/b`]: { get: { operationId: `${prefix}B`, responses: { '200': { description: 'ok' } } } },
    },
  });
}

interface Call {
  id: string;
  turnId: string;
  workspaceId: string;
  assistantId: string;
  operationId: string | null;
  operationKey: string | null;
  connectionId: string | null;
  status: string;
  durationMs: number | null;
  startedAt: number;
}

let t: TestApp;
let admin: string;
let ws: string;
let otherWs: string;
let assistants: string[];
const calls: Call[] = [];
let seed = 7;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

async function insert(batch: Call[]): Promise<void> {
  const sql = t.app.services.orm.em.getConnection();
  for (const c of batch) {
    await sql.execute(
      `insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
         status, message, attempts, resends, duration_ms, risk, started_at, finished_at)
       values (?, ?, ?, (select coalesce(max(seq), 0) + 1 from turn_call where turn_id = ?), ?, ?, 'x', '{}', ?, null, 1, 0, ?, 'READ', ?, ?)`,
      [
        c.id,
        rawId(c.turnId),
        c.workspaceId,
        rawId(c.turnId),
        c.operationKey,
        c.operationId,
        c.status,
        c.durationMs,
        new Date(c.startedAt).toISOString(),
        new Date(c.startedAt + (c.durationMs ?? 0)).toISOString(),
      ],
    );
  }
}

beforeAll(async () => {
  t = await startTestApp({ databaseUrl: await createEmptyDatabase() });
  admin = await t.token(Role.ADMIN);
  const runtime = await t.token(Role.RUNTIME);
  ws = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Dash' } }, admin)).createWorkspace.workspace!
    .id;
  otherWs = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Else' } }, admin)).createWorkspace
    .workspace!.id;
  assistants = [];
  for (const [w, name] of [
    [ws, 'A1'],
    [ws, 'A2'],
    [otherWs, 'B1'],
  ] as const) {
    const res = await t.ok(CreateAssistantDocument, { input: { workspaceId: w, name } }, admin);
    assistants.push(res.createAssistant.assistant!.id);
  }
  const ops: { id: string; key: string; connectionId: string }[] = [];
  for (const prefix of ['crm', 'shop']) {
    const res = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId: ws,
          kind: 'OPENAPI',
          name: prefix,
          descriptionText: description(prefix),
          endpointUrl: null,
        },
      },
      admin,
    );
    const connectionId = res.createConnection.connection!.id;
    const listed = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
    for (const op of listed.connection!.operations.nodes) ops.push({ id: op.id, key: op.key, connectionId });
  }
  const turns: string[] = [];
  for (const a of assistants) {
    const res = await t.ok(
      BeginTurnDocument,
      { input: { assistantId: a, conversationId: 'usage' } },
      runtime,
    );
    turns.push(res.beginTurn.turnId);
  }
  // A real call, recorded by the service (an unknown name: UNAVAILABLE, no operation).
  await t.ok(
    CallToolDocument,
    { input: { turnId: turns[0]!, name: 'no_such_tool', arguments: {} } },
    runtime,
  );
  const real = await t.app.services.orm.em
    .getConnection()
    .execute<{ id: string; started_at: Date; duration_ms: number | null }[]>(
      `select id, started_at, duration_ms from turn_call where turn_id = ?`,
      [rawId(turns[0]!)],
    );
  // Move it into the history (as if it happened then): its id is remade for that time.
  const realAt = BASE + 3 * DAY + 5 * HOUR + 17 * 60_000;
  await t.app.services.orm.em
    .getConnection()
    .execute(`update turn_call set started_at = ?, id = ? where id = ?`, [
      new Date(realAt).toISOString(),
      uuidv7(realAt),
      real[0]!.id,
    ]);
  calls.push({
    id: '',
    turnId: turns[0]!,
    workspaceId: ws,
    assistantId: assistants[0]!,
    operationId: null,
    operationKey: null,
    connectionId: null,
    status: 'UNAVAILABLE',
    durationMs: real[0]!.duration_ms,
    startedAt: realAt,
  });

  const synthetic: Call[] = [];
  const edges = [BASE + DAY, BASE + DAY - 1, BASE + 2 * DAY + 5 * HOUR, BASE + 3 * DAY - 1];
  for (let i = 0; i < 600; i++) {
    const at = i < edges.length ? edges[i]! : BASE + Math.floor(random() * (END - BASE));
    const inOther = i % 10 === 9;
    const a = inOther ? 2 : i % 3 === 0 ? 1 : 0;
    const op = i % 7 === 6 ? null : ops[Math.floor(random() * ops.length)]!;
    const status = STATUSES[Math.floor(random() * STATUSES.length)]!;
    const durationMs = i % 11 === 5 ? null : Math.floor(Math.exp(random() * 10));
    synthetic.push({
      id: uuidv7(at),
      turnId: turns[a]!,
      workspaceId: rawId(inOther ? otherWs : ws),
      assistantId: assistants[a]!,
      operationId: op && !inOther ? rawId(op.id) : null,
      operationKey: op ? op.key : null,
      connectionId: op && !inOther ? op.connectionId : null,
      status,
      durationMs,
      startedAt: at,
    });
  }
  await insert(synthetic);
  for (const c of synthetic) calls.push({ ...c, workspaceId: c.workspaceId === rawId(ws) ? ws : otherWs });
  await startUsageAt(t.app.services.orm, BASE);
}, 120_000);

afterAll(async () => {
  await t.stop();
});

type Group = 'TOOL' | 'CONNECTION' | 'STATUS' | null;

function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

interface Expected {
  calls: number;
  errors: number;
  durations: number[];
}

function expected(
  filter: (c: Call) => boolean,
  bucketMs: number,
  group: Group,
  from: number,
  to: number,
): Map<string, Map<number, Expected>> {
  const out = new Map<string, Map<number, Expected>>();
  for (const c of calls) {
    if (!filter(c) || c.startedAt < from || c.startedAt >= to) continue;
    const key =
      group === 'TOOL'
        ? String(c.operationKey)
        : group === 'CONNECTION'
          ? String(c.connectionId)
          : group === 'STATUS'
            ? c.status
            : 'all';
    const bucket = Math.floor(c.startedAt / bucketMs) * bucketMs;
    const series = out.get(key) ?? new Map<number, Expected>();
    out.set(key, series);
    const e = series.get(bucket) ?? { calls: 0, errors: 0, durations: [] };
    series.set(bucket, e);
    e.calls++;
    if (ERRORS.has(c.status)) e.errors++;
    if (c.durationMs !== null) e.durations.push(c.durationMs);
  }
  return out;
}

const USAGE = `query($id: ID!, $from: DateTimeISO!, $to: DateTimeISO!, $bucket: UsageBucket!, $groupBy: UsageGroupBy) {
  node(id: $id) {
    ... on Workspace { usage(from: $from, to: $to, bucket: $bucket, groupBy: $groupBy) { ...U } }
    ... on Assistant { usage(from: $from, to: $to, bucket: $bucket, groupBy: $groupBy) { ...U } }
  }
}
fragment S on UsageStats { calls errors errorRate p50DurationMs p95DurationMs }
fragment U on Usage {
  from to bucket groupBy
  total { ...S }
  series { tool connectionId status total { ...S } points { start calls errors errorRate p50DurationMs p95DurationMs } }
}`;

interface Stats {
  calls: number;
  errors: number;
  errorRate: number;
  p50DurationMs: number | null;
  p95DurationMs: number | null;
}
interface UsageAnswer {
  from: string;
  to: string;
  total: Stats;
  series: {
    tool: string | null;
    connectionId: string | null;
    status: string | null;
    total: Stats;
    points: (Stats & { start: string })[];
  }[];
}

async function ask(
  id: string,
  from: string,
  to: string,
  bucket: 'HOUR' | 'DAY',
  groupBy: Group,
  token = admin,
): Promise<UsageAnswer> {
  const res = await t.ok<{ node: { usage: UsageAnswer } }, unknown>(
    USAGE,
    { id, from, to, bucket, groupBy },
    token,
  );
  return res.node.usage;
}

/** Within the histogram's promise: about 9 % of the exact value, or half a millisecond. */
function close(actual: number | null, exact: number | null): void {
  if (exact === null) return expect(actual).toBeNull();
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - exact)).toBeLessThanOrEqual(Math.max(0.5, 0.1 * exact));
}

function check(answer: UsageAnswer, want: Map<string, Map<number, Expected>>, group: Group): void {
  const keyOf = (s: UsageAnswer['series'][number]) =>
    group === 'TOOL'
      ? String(s.tool)
      : group === 'CONNECTION'
        ? String(s.connectionId)
        : group === 'STATUS'
          ? String(s.status)
          : 'all';
  expect(answer.series.map(keyOf).sort()).toEqual([...want.keys()].sort());
  let total = 0;
  let errors = 0;
  for (const s of answer.series) {
    const w = want.get(keyOf(s))!;
    expect(s.points.map((p) => Date.parse(p.start))).toEqual([...w.keys()].sort((a, b) => a - b));
    for (const p of s.points) {
      const e = w.get(Date.parse(p.start))!;
      expect([p.calls, p.errors]).toEqual([e.calls, e.errors]);
      expect(p.errorRate).toBeCloseTo(e.errors / e.calls, 10);
      const sorted = [...e.durations].sort((a, b) => a - b);
      close(p.p50DurationMs, nearestRank(sorted, 0.5));
      close(p.p95DurationMs, nearestRank(sorted, 0.95));
      total += e.calls;
      errors += e.errors;
    }
  }
  expect([answer.total.calls, answer.total.errors]).toEqual([total, errors]);
}

const iso = (ms: number) => new Date(ms).toISOString();
const inWs = (c: Call) => c.workspaceId === ws;

describe('usage', () => {
  const cases: [string, 'HOUR' | 'DAY', Group, number, number][] = [
    ['30-day window, per tool, per day', 'DAY', 'TOOL', BASE - 26 * DAY, END],
    ['per connection, per day', 'DAY', 'CONNECTION', BASE, END],
    [
      'per status, per hour across a day edge',
      'HOUR',
      'STATUS',
      BASE + DAY - 6 * HOUR,
      BASE + DAY + 6 * HOUR,
    ],
    ['ungrouped, per hour, all of it', 'HOUR', null, BASE, END],
  ];

  it.each(cases)(
    'should match the recorded calls before the roll-up: %s',
    async (_n, bucket, group, from, to) => {
      const answer = await ask(ws, iso(from), iso(to), bucket, group);
      check(answer, expected(inWs, bucket === 'DAY' ? DAY : HOUR, group, from, to), group);
    },
  );

  it("should answer an assistant's own calls from the recorded calls (nothing rolled up yet)", async () => {
    const answer = await ask(assistants[0]!, iso(BASE), iso(END), 'HOUR', 'TOOL');
    check(
      answer,
      expected((c) => c.assistantId === assistants[0], HOUR, 'TOOL', BASE, END),
      'TOOL',
    );
  });

  it('should give the same answers from the roll-up as from the raw calls', async () => {
    const before = await Promise.all(cases.map(([, b, g, f, to]) => ask(ws, iso(f), iso(to), b, g)));
    // The clock of the roll-up: three days and 5 hours later, settled. Whole days, hours, and live calls mix.
    const rollup = new UsageRollup(
      t.app.services.orm,
      createLogger('silent'),
      { everyMs: 60_000, settleMs: 20 * 60_000 },
      () => BASE + 3 * DAY + 5 * HOUR + 20 * 60_000 + 1,
    );
    expect(await rollup.runOnce()).toBe(3 * 24 + 5);
    expect(await rollup.runOnce()).toBe(0);
    const counts = await t.app.services.orm.em
      .getConnection()
      .execute<{ days: string; hours: string }[]>(
        `select (select count(*) from usage_day) as days, (select count(*) from usage_hour) as hours`,
      );
    expect(Number(counts[0]!.days)).toBeGreaterThan(0);
    expect(Number(counts[0]!.hours)).toBeGreaterThan(0);
    const after = await Promise.all(cases.map(([, b, g, f, to]) => ask(ws, iso(f), iso(to), b, g)));
    expect(after).toEqual(before);
    // Marks read before (or during) a roll-up are behind, never wrong: the same rows whichever the
    // question uses, each call counted once (from a rolled-up table or from the recorded calls).
    const now = { hoursUntil: BASE + 3 * DAY + 5 * HOUR, daysUntil: BASE + 3 * DAY };
    expect(await rollupMarks(t.app.services.orm, t.app.services.orm.em.fork())).toEqual(now);
    const older = [
      { hoursUntil: BASE, daysUntil: BASE },
      { hoursUntil: BASE + DAY + 7 * HOUR, daysUntil: BASE },
      { hoursUntil: BASE + 2 * DAY + 7 * HOUR, daysUntil: BASE + 2 * DAY },
    ];
    for (const [, bucket, groupBy, from, to] of cases) {
      for (const assistantId of [null, rawId(assistants[0]!)]) {
        const q = {
          workspaceId: rawId(ws),
          assistantId,
          from: new Date(from),
          to: new Date(to),
          bucket: bucket as UsageBucket,
          groupBy: groupBy as UsageGroupBy | null,
        };
        const fresh = await queryUsage(t.app.services.orm.em.fork(), q, now);
        expect(fresh.length).toBeGreaterThan(0);
        for (const marks of older) {
          expect(await queryUsage(t.app.services.orm.em.fork(), q, marks)).toEqual(fresh);
        }
      }
    }
    for (const [i, [, bucket, group, from, to]] of cases.entries()) {
      check(after[i]!, expected(inWs, bucket === 'DAY' ? DAY : HOUR, group, from, to), group);
    }
  });

  it("should answer an assistant's own calls", async () => {
    const answer = await ask(assistants[1]!, iso(BASE), iso(END), 'DAY', 'STATUS');
    check(
      answer,
      expected((c) => c.assistantId === assistants[1], DAY, 'STATUS', BASE, END),
      'STATUS',
    );
  });

  it('should put a call at midnight UTC in the new day, and floor and ceil the range to UTC edges', async () => {
    const answer = await ask(ws, '2031-03-11T01:30:00+02:00', '2031-03-11T00:00:00.001Z', 'DAY', null);
    expect([answer.from, answer.to]).toEqual(['2031-03-10T00:00:00.000Z', '2031-03-12T00:00:00.000Z']);
    const day1 = await ask(ws, iso(BASE), iso(BASE + DAY), 'DAY', null);
    const day2 = await ask(ws, iso(BASE + DAY), iso(BASE + 2 * DAY), 'DAY', null);
    const count = (from: number, to: number) =>
      calls.filter((c) => inWs(c) && c.startedAt >= from && c.startedAt < to).length;
    expect(day1.total.calls).toBe(count(BASE, BASE + DAY));
    expect(day2.total.calls).toBe(count(BASE + DAY, BASE + 2 * DAY));
    expect(calls.some((c) => inWs(c) && c.startedAt === BASE + DAY)).toBe(true);
  });

  it('should refuse a reversed range and too many buckets, saying what to do', async () => {
    const reversed = await t.gql(USAGE, { id: ws, from: iso(END), to: iso(BASE), bucket: 'DAY' }, admin);
    expect(reversed.errors?.[0]).toMatchObject({
      message: '"to" must be after "from"',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const long = await t.gql(
      USAGE,
      { id: ws, from: iso(BASE - 40 * DAY), to: iso(BASE), bucket: 'HOUR' },
      admin,
    );
    expect(long.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(long.errors?.[0]?.message).toMatch(
      /at most 744 buckets are answered: shorten the range or use DAY buckets/,
    );
  });

  it("should show a customer its own workspace's usage and nothing of another's", async () => {
    const customer = await t.token(Role.CUSTOMER, rawId(ws));
    const own = await ask(ws, iso(BASE), iso(END), 'DAY', null, customer);
    expect(own.total.calls).toBe(calls.filter((c) => inWs(c) && c.startedAt < END).length);
    for (const id of [otherWs, assistants[2]!]) {
      const res = await t.gql<{ node: unknown }, unknown>(
        USAGE,
        { id, from: iso(BASE), to: iso(END), bucket: 'DAY' },
        customer,
      );
      expect(res.data?.node).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const other = await ask(otherWs, iso(BASE), iso(END), 'DAY', null);
    expect(other.total.calls).toBe(calls.filter((c) => c.workspaceId === otherWs).length);
  });

  it('should answer in one SQL statement, and read the marks at most once more', async () => {
    for (let i = 0; i < 3; i++) {
      t.resetQueries();
      await ask(ws, iso(BASE), iso(END), 'DAY', 'TOOL');
      const usage = t.queries.filter((q) => /usage_|turn_call/.test(q));
      const marks = usage.filter((q) => /^select hours_until, days_until from usage_rollup/.test(q));
      expect(usage.length - marks.length).toBe(1);
      expect(marks.length).toBeLessThanOrEqual(1);
    }
  });
});
