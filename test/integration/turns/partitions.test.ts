/**
 * Daily partitions of turn_call and turn_event (issue 15): the migration on existing rows, partitions
 * made ahead and at a day boundary (an injected clock), rows that arrive before their day's
 * partition, and retention: whole days dropped, the ledger kept, and the API still answering for a
 * call whose day is gone. Each test runs on its own database: dropping days must not touch the
 * shared one.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../../src/db/ids.js';
import { openOrm } from '../../../src/db/orm.js';
import { DAY_MS, dayOf, PartitionMaintainer } from '../../../src/db/partitions.js';
import { createLogger } from '../../../src/logger.js';
import { TurnCallsDocument } from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

const logger = createLogger('silent');

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The partition each row of `table` lives in, by a key column. */
async function homes(c: pg.Client, table: string, key: string): Promise<Record<string, string>> {
  const { rows } = await c.query<{ key: string; home: string }>(
    `select ${key}::text as key, tableoid::regclass::text as home from ${table}`,
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.home]));
}

async function partitions(c: pg.Client, table: string): Promise<string[]> {
  const { rows } = await c.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = $1::regclass order by 1`,
    [table],
  );
  return rows.map((r) => r.name);
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

describe('the partitioning migration', () => {
  it('should move existing calls and events into their days, keep the odd id in the default partition, and keep the event sequence going', async () => {
    const url = await createEmptyDatabase();
    const orm = await openOrm({ databaseUrl: url });
    try {
      await orm.getMigrator().up({ to: 'Migration20261201070000TraceContext' });
      const today = dayOf(Date.now());
      const old = today - 3 * DAY_MS + 5_000;
      const ids = { old: uuidv7(old), now: uuidv7(), odd: '6f9619ff-8b86-4d11-b42d-00c04fc964ff' };
      const ws = uuidv7();
      const asst = uuidv7();
      const turn = uuidv7();
      let maxSeq = 0;
      await withClient(url, async (c) => {
        await c.query(`insert into workspace (id, name, created_at) values ($1, 'w', now())`, [ws]);
        await c.query(
          `insert into assistant (id, workspace_id, name, created_at) values ($1, $2, 'a', now())`,
          [asst, ws],
        );
        await c.query(
          `insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools, call_seq)
           values ($1, $2, $3, 'c', now(), '[]', 3)`,
          [turn, ws, asst],
        );
        let seq = 0;
        for (const id of [ids.old, ids.now, ids.odd]) {
          seq++;
          await c.query(
            `insert into turn_call (id, turn_id, workspace_id, seq, declared_name, arguments, status, attempts, started_at)
             values ($1, $2, $3, $4, 'x', '{"q": 1}', 'SUCCEEDED', 1, now())`,
            [id, turn, ws, seq],
          );
        }
        for (const at of [new Date(old), new Date()]) {
          const r = await c.query<{ seq: string }>(
            `insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, type, payload, created_at)
             values ($1, $2, 'c', $3, 'TURN_STARTED', '{}', $4) returning seq`,
            [ws, asst, turn, at],
          );
          maxSeq = Math.max(maxSeq, Number(r.rows[0]!.seq));
        }
      });
      await orm.getMigrator().up();
      await withClient(url, async (c) => {
        expect(await homes(c, 'turn_call', 'id')).toEqual({
          [ids.old]: `turn_call_p${day(old)}`,
          [ids.now]: `turn_call_p${day(today)}`,
          [ids.odd]: 'turn_call_default',
        });
        expect(Object.values(await homes(c, 'turn_event', 'seq')).sort()).toEqual(
          [`turn_event_p${day(old)}`, `turn_event_p${day(today)}`].sort(),
        );
        // Every day from the oldest row to two days ahead, and the default partition.
        const expected = [0, 1, 2, 3, 4, 5].map((d) => `turn_call_p${day(old + d * DAY_MS)}`);
        expect(await partitions(c, 'turn_call')).toEqual([...expected, 'turn_call_default'].sort());
        // Every index the readers use is there again (usage's live reads among them).
        const indexes = await c.query<{ name: string }>(
          `select indexname as name from pg_indexes where tablename = 'turn_call' order by 1`,
        );
        expect(indexes.rows.map((r) => r.name)).toEqual([
          'turn_call_pkey',
          'turn_call_turn_id_seq_index',
          'turn_call_workspace_id_started_at_index',
        ]);
        const calls = await c.query(`select * from turn_call where id = $1`, [ids.old]);
        expect(calls.rows[0]).toMatchObject({
          turn_id: turn,
          seq: 1,
          arguments: { q: 1 },
          status: 'SUCCEEDED',
        });
        const next = await c.query<{ seq: string }>(
          `insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, type, payload, created_at)
           values ($1, $2, 'c', $3, 'TURN_FINISHED', '{}', now()) returning seq`,
          [ws, asst, turn],
        );
        expect(Number(next.rows[0]!.seq)).toBeGreaterThan(maxSeq);
      });
    } finally {
      await orm.close();
    }
  });
});

describe('partitions kept by the service, and retention', () => {
  let url: string;
  let t: TestApp;
  let peer: SdkServerHandle;
  let w: World;

  beforeAll(async () => {
    url = await createEmptyDatabase();
    t = await startTestApp({ databaseUrl: url });
    peer = await startSdkServer({ stateful: true, json: true, tools: CRM_TOOLS });
    w = await buildWorld(t, peer.url, 'CRM');
    await connectTools(t, w);
  });

  afterAll(async () => {
    await t?.stop();
    await peer?.close();
  });

  it('should have made today and two days ahead at start, and make the next day at the last millisecond before it', async () => {
    const today = dayOf(Date.now());
    await withClient(url, async (c) => {
      const have = await partitions(c, 'turn_event');
      for (const d of [0, 1, 2]) expect(have).toContain(`turn_event_p${day(today + d * DAY_MS)}`);
      expect(have).not.toContain(`turn_event_p${day(today + 3 * DAY_MS)}`);
    });
    // 23:59:59.999 on the second day ahead: that day is "today", so two more are made.
    const clock = today + 3 * DAY_MS - 1;
    const m = new PartitionMaintainer(url, logger, { retentionDays: 0, now: () => clock });
    const ran = await m.runOnce();
    expect(ran.created.sort()).toEqual(
      [3, 4]
        .flatMap((d) => [`turn_call_p${day(today + d * DAY_MS)}`, `turn_event_p${day(today + d * DAY_MS)}`])
        .sort(),
    );
    expect((await m.runOnce()).created).toEqual([]);
  });

  it('should take a row whose day has no partition yet (into the default), and move it into its day when the day is made', async () => {
    const today = dayOf(Date.now());
    const midnight = today + 9 * DAY_MS; // no partition that far ahead
    const id = uuidv7(midnight);
    const turn = (await begin(t, w)).turnId;
    await withClient(url, async (c) => {
      await c.query(
        `insert into turn_call (id, turn_id, workspace_id, seq, declared_name, arguments, status, attempts, started_at)
         values ($1, $2, $3, 99, 'x', '{}', 'SUCCEEDED', 1, $4)`,
        [id, rawId(turn), rawId(w.workspaceId), new Date(midnight)],
      );
      const ev = await c.query<{ seq: string }>(
        `insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, type, payload, created_at)
         values ($1, $2, 'c', $3, 'TURN_STARTED', '{}', $4) returning seq`,
        [rawId(w.workspaceId), rawId(w.assistantId), rawId(turn), new Date(midnight)],
      );
      expect((await homes(c, 'turn_call', 'id'))[id]).toBe('turn_call_default');
      const m = new PartitionMaintainer(url, logger, { retentionDays: 0, now: () => today });
      const ran = await m.runOnce();
      expect(ran.created.sort()).toEqual([`turn_call_p${day(midnight)}`, `turn_event_p${day(midnight)}`]);
      expect((await homes(c, 'turn_call', 'id'))[id]).toBe(`turn_call_p${day(midnight)}`);
      expect((await homes(c, 'turn_event', 'seq'))[ev.rows[0]!.seq]).toBe(`turn_event_p${day(midnight)}`);
      const left = await c.query(
        `select (select count(*) from turn_call_default) + (select count(*) from turn_event_default) as n`,
      );
      expect(Number(left.rows[0].n)).toBe(0);
    });
  });

  it('should drop whole days past retention, events first and calls once usage has summed them, keeping the ledger and answering for the dropped call', async () => {
    const turn = await begin(t, w, 'retention');
    const written = await call(t, w, turn.turnId, 'crm__update', { email: 'a@b.c', plan: 'pro' });
    expect(written).toMatchObject({ status: 'SUCCEEDED', recorded: true });
    const read = await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' });
    expect(read.recorded).toBe(true);
    const today = dayOf(Date.now());
    const later = today + 10 * DAY_MS + 1;
    const m = new PartitionMaintainer(url, logger, { retentionDays: 5, now: () => later });

    // The usage roll-up has not summed today: the calls stay, the events go.
    const first = await m.runOnce();
    expect(first.dropped).toContain(`turn_event_p${day(today)}`);
    expect(first.dropped).not.toContain(`turn_call_p${day(today)}`);
    expect((await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin)).turn!.calls.nodes).toHaveLength(2);

    await withClient(url, (c) =>
      c.query(`update usage_rollup set hours_until = $1 where id = 1`, [new Date(today + 2 * DAY_MS)]),
    );
    const second = await m.runOnce();
    expect(second.dropped).toContain(`turn_call_p${day(today)}`);
    // Days within retention stay (the one made by the test before, nine days ahead of today).
    expect(second.dropped).not.toContain(`turn_call_p${day(today + 9 * DAY_MS)}`);
    await withClient(url, async (c) =>
      expect(await partitions(c, 'turn_call')).toContain(`turn_call_p${day(today + 9 * DAY_MS)}`),
    );

    // The turn is still there, without its calls; the ledger entry keeps its own copy of the call.
    expect((await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin)).turn!.calls.nodes).toEqual([]);
    const ledger = await t.ok<
      {
        workspace: {
          ledger: {
            nodes: {
              turnCallId: string;
              operationKey: string;
              arguments: unknown;
              status: string;
              callSeq: number | null;
              declaredName: string | null;
              call: { id: string } | null;
            }[];
          };
        };
      },
      { id: string }
    >(
      `query($id: ID!) { workspace(id: $id) { ledger(first: 10) { nodes { turnCallId operationKey arguments status callSeq declaredName call { id } } } } }`,
      { id: w.workspaceId },
      w.admin,
    );
    expect(ledger.workspace.ledger.nodes).toEqual([
      {
        turnCallId: written.callId,
        operationKey: w.ops.update!.key,
        arguments: { email: 'a@b.c', plan: 'pro' },
        status: 'SUCCEEDED',
        callSeq: written.seq,
        declaredName: 'crm__update',
        call: null,
      },
    ]);
    // Asked for directly, the dropped call is what any unknown id is: NOT_FOUND.
    const node = await t.gql<{ node: unknown }, { id: string }>(
      `query($id: ID!) { node(id: $id) { id } }`,
      { id: written.callId! },
      w.admin,
    );
    expect(node.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    await withClient(url, async (c) => {
      const kept = await c.query(`select count(*)::int as n from ledger_entry where workspace_id = $1`, [
        rawId(w.workspaceId),
      ]);
      expect(kept.rows[0].n).toBe(1);
    });
  });
});
