/**
 * The usage roll-up against calls still being recorded: an hour is summed only once it is settled
 * (USAGE_SETTLE_MS after it ends), so a call whose transaction is still open when the roll-up runs
 * is counted once it commits, exactly once; two instances rolling up at once, while calls keep
 * arriving, sum every hour once. Own database: the roll-up's marks are global.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { openOrm } from '../../../src/db/orm.js';
import { createLogger } from '../../../src/logger.js';
import { UsageRollup } from '../../../src/usage/rollup.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  BeginTurnDocument,
  CreateAssistantDocument,
  CreateWorkspaceDocument,
} from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startUsageAt } from '../../support/usage.js';

const HOUR = 3_600_000;
const SETTLE = 20 * 60_000;
/** History starts here (a whole UTC day, long after any real call in this database). */
const BASE = Date.UTC(2033, 4, 2);

let t: TestApp;
let url: string;
let admin: string;
let ws: string;
let turnId: string;
let seq = 0;

const INSERT = `insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name,
  arguments, status, message, attempts, resends, duration_ms, risk, started_at, finished_at)
  values ($1, $2, $3, $4, 'k', null, 'x', '{}', 'SUCCEEDED', null, 1, 0, 5, 'READ', $5, $5)`;

/** A call started at `at`, recorded through `client` (its transaction, if one is open). */
async function record(client: pg.ClientBase, at: number): Promise<void> {
  await client.query(INSERT, [uuidv7(at), turnId, rawId(ws), ++seq, new Date(at).toISOString()]);
}

function rollup(orm: MikroORM, at: number): UsageRollup {
  return new UsageRollup(orm, createLogger('silent'), { everyMs: 60_000, settleMs: SETTLE }, () => at);
}

/** The workspace's calls in [from, to), through the API. */
async function counted(from: number, to: number): Promise<number> {
  const res = await t.ok<{ workspace: { usage: { total: { calls: number } } } }, unknown>(
    `query($w: ID!, $from: DateTimeISO!, $to: DateTimeISO!) {
      workspace(id: $w) { usage(from: $from, to: $to, bucket: HOUR) { total { calls } } } }`,
    { w: ws, from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    admin,
  );
  return res.workspace.usage.total.calls;
}

async function rolledUp(): Promise<{ calls: number; until: number }> {
  const rows = await t.app.services.orm.em.getConnection().execute<{ calls: string | null; until: Date }[]>(
    `select (select sum(calls) from usage_hour where workspace_id = ?) as calls,
              (select hours_until from usage_rollup) as until`,
    [rawId(ws)],
  );
  return { calls: Number(rows[0]!.calls ?? 0), until: new Date(rows[0]!.until).getTime() };
}

beforeAll(async () => {
  url = await createEmptyDatabase();
  t = await startTestApp({ databaseUrl: url });
  admin = await t.token(Role.ADMIN);
  ws = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Rollup' } }, admin)).createWorkspace.workspace!
    .id;
  const assistant = (await t.ok(CreateAssistantDocument, { input: { workspaceId: ws, name: 'A' } }, admin))
    .createAssistant.assistant!.id;
  const turn = await t.ok(
    BeginTurnDocument,
    { input: { assistantId: assistant, conversationId: 'rollup' } },
    await t.token(Role.RUNTIME),
  );
  turnId = rawId(turn.beginTurn.turnId);
  seq = 1000;
  await startUsageAt(t.app.services.orm, BASE);
}, 120_000);

afterAll(async () => {
  await t.stop();
});

describe('usage roll-up', () => {
  it('should leave an hour until it is settled, and count a call recorded late in it exactly once', async () => {
    const inFlight = new pg.Client({ connectionString: url });
    await inFlight.connect();
    try {
      await record(inFlight, BASE + 5 * 60_000); // recorded earlier, committed
      await inFlight.query('begin');
      await record(inFlight, BASE + 50 * 60_000); // its transaction still open
      // One millisecond before the hour is settled: nothing is summed.
      expect(await rollup(t.app.services.orm, BASE + HOUR + SETTLE - 1).runOnce()).toBe(0);
      expect(await rolledUp()).toEqual({ calls: 0, until: BASE });
      expect(await counted(BASE, BASE + 2 * HOUR)).toBe(1);
      await inFlight.query('commit');
      expect(await counted(BASE, BASE + 2 * HOUR)).toBe(2);
      // Settled: the hour is summed with both calls, and they are read from the roll-up only.
      expect(await rollup(t.app.services.orm, BASE + HOUR + SETTLE).runOnce()).toBe(1);
      expect(await rolledUp()).toEqual({ calls: 2, until: BASE + HOUR });
      expect(await counted(BASE, BASE + 2 * HOUR)).toBe(2);
    } finally {
      await inFlight.end();
    }
  });

  it('should sum every hour once when two instances roll up at once while calls keep arriving', async () => {
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    const second = await openOrm({ databaseUrl: url });
    try {
      const history = Array.from({ length: 300 }, (_, i) => BASE + HOUR + i * 7 * 60_000 + i);
      for (const at of history) await record(writer, at);
      const last = history.at(-1)!;
      const now = last + 10 * 60_000; // the last hours are not settled
      const target = Math.floor((now - SETTLE) / HOUR) * HOUR;
      let arriving = true;
      let added = 0;
      const arrivals = (async () => {
        // Calls recorded while the roll-ups run, as a live service records them: in unsettled hours.
        while (arriving || added < 20) {
          await record(writer, target + ((added * 37_000) % (now - target)));
          added++;
        }
      })();
      const [a, b] = await Promise.all([
        rollup(t.app.services.orm, now).runOnce(),
        rollup(second, now).runOnce(),
      ]);
      arriving = false;
      await arrivals;
      expect(a + b).toBe((target - (BASE + HOUR)) / HOUR);
      const summed = await rolledUp();
      expect(summed.until).toBe(target);
      expect(summed.calls).toBe(2 + history.filter((at) => at < target).length);
      expect(await counted(BASE, now + HOUR)).toBe(2 + history.length + added);
    } finally {
      await writer.end();
      await second.close();
    }
  });
});
