/**
 * A READ's start is held back (READ_START_HOLD_MS, issue 15): a READ answered within the hold is
 * recorded whole in ONE statement (CALL_RECORD_SQL); one that takes longer, or that sends progress,
 * has its CALL_STARTED written while it works, as before. Checked on the rows and the statements
 * sent, never on real time: the slow tools wait for the test, and the hold runs on a FakeClock
 * (test/support/fake-clock.ts) that moves only when a test advances it, so a loaded machine cannot
 * turn a quick READ into a slow one.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchJson } from '../../../src/db/group-commit.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { preparedRunner } from '../../../src/db/prepared.js';
import {
  CALL_FINISH_SQL,
  CALL_RECORD_ASYNC_SQL,
  CALL_RECORD_SQL,
  CALL_START_SQL,
} from '../../../src/turns/call-sql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { FakeClock } from '../../support/fake-clock.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

/** The held tools answer once the test opens their gate (one gate per call). */
const gate = { waiting: 0, open: () => undefined as void };
function closedGate(): Promise<void> {
  gate.waiting++;
  return new Promise<void>((resolve) => {
    gate.open = () => {
      gate.waiting--;
      resolve();
    };
  });
}

const TOOLS: PeerTool[] = [
  {
    name: 'lookup',
    inputSchema: { email: z.string() },
    annotations: { readOnlyHint: true },
    handler: (args) => ({ content: [{ type: 'text', text: `found ${String(args.email)}` }] }),
  },
  {
    name: 'held',
    annotations: { readOnlyHint: true },
    handler: async () => {
      await closedGate();
      return { content: [{ type: 'text', text: 'late' }] };
    },
  },
  {
    name: 'working',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: extra._meta!.progressToken!, progress: 1, total: 2, message: 'half way' },
      });
      await closedGate();
      return { content: [{ type: 'text', text: 'done' }] };
    },
  },
];

/** The hold of a READ's start, in ms of `clock`. */
const HOLD_MS = 1000;
const clock = new FakeClock();
let t: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  t = await startTestApp({ clock, env: { READ_START_HOLD_MS: String(HOLD_MS), PROGRESS_INTERVAL_MS: '0' } });
  peer = await startSdkServer({ stateful: false, json: false, tools: TOOLS });
  w = await buildWorld(t, peer.url, 'Hold');
  await connectTools(t, w);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

const sql = <T>(text: string, params: unknown[] = []) =>
  t.app.services.orm.em.getConnection().execute<T[]>(text, params);

interface EventRow {
  type: string;
  seq: string;
  call_seq: number | null;
  email: string | null;
  status: string | null;
}
const eventsOf = (callId: string) =>
  sql<EventRow>(
    `select type, seq, (payload->>'seq')::int as call_seq, payload->'arguments'->>'email' as email,
            payload->>'status' as status
     from turn_event where call_id = ? order by seq`,
    [rawId(callId)],
  );

/**
 * The call statements sent since `from` in `queries`: S start, R whole record (committed
 * synchronously or not, READ_RECORD_COMMIT), F finish.
 */
const callStatements = (from: number, queries = t.queries) =>
  queries
    .slice(from)
    .map((q) =>
      q === CALL_START_SQL.text
        ? 'S'
        : q === CALL_RECORD_SQL.text || q === CALL_RECORD_ASYNC_SQL.text
          ? 'R'
          : q === CALL_FINISH_SQL.text
            ? 'F'
            : null,
    )
    .filter((x) => x !== null)
    .join('');

describe('a READ answered within the hold', () => {
  it('should be recorded whole in one statement, CALL_STARTED before CALL_FINISHED, both with its seq', async () => {
    const turn = await begin(t, w, 'hold-1');
    const from = t.queries.length;
    const answer = await call(t, w, turn.turnId, 'hold__lookup', { email: 'ann@example.com' });
    expect(answer).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: true, seq: 1 });
    expect(callStatements(from)).toBe('R');
    const events = await eventsOf(answer.callId!);
    expect(events.map((e) => [e.type, e.call_seq, e.email, e.status])).toEqual([
      ['CALL_STARTED', 1, 'ann@example.com', null],
      ['CALL_FINISHED', 1, null, 'SUCCEEDED'],
    ]);
    expect(
      await sql('select seq, status, declared_name from turn_call where id = ?', [rawId(answer.callId!)]),
    ).toEqual([{ seq: 1, status: 'SUCCEEDED', declared_name: 'hold__lookup' }]);
  });

  it('should give concurrent READs of one turn distinct, consecutive seqs', async () => {
    const turn = await begin(t, w, 'hold-many');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(t, w, turn.turnId, 'hold__lookup', { email: `${i}@example.com` }),
      ),
    );
    expect(answers.map((a) => a.seq).sort((a, b) => a! - b!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const a of answers) {
      const events = await eventsOf(a.callId!);
      expect(events.map((e) => [e.type, e.call_seq])).toEqual([
        ['CALL_STARTED', a.seq],
        ['CALL_FINISHED', a.seq],
      ]);
    }
    expect(await sql('select call_seq from turn where id = ?', [rawId(turn.turnId)])).toEqual([
      { call_seq: 8 },
    ]);
    // The next call, held or not, takes the next seq.
    expect((await call(t, w, turn.turnId, 'hold__lookup', { email: 'next@example.com' })).seq).toBe(9);
  });
});

/**
 * Calls `tool` (which waits for the gate) in a new turn; once the tool is at work, runs `meanwhile`
 * (which may move the clock), waits until the turn has an event of type `seen` while the tool
 * still waits, then lets the tool answer.
 */
async function callWhileHeld(tool: string, seen: string, meanwhile: (from: number) => Promise<void>) {
  const turn = await begin(t, w, `hold-${tool}`);
  const from = t.queries.length;
  const pending = call(t, w, turn.turnId, tool, {});
  await waitUntil(() => gate.waiting === 1);
  await meanwhile(from);
  await waitUntil(
    async () =>
      (await sql(`select 1 from turn_event where turn_id = ? and type = ?`, [rawId(turn.turnId), seen]))
        .length === 1,
  );
  expect(gate.waiting).toBe(1);
  gate.open();
  const answer = await pending;
  expect(answer).toMatchObject({ ok: true, recorded: true, seq: 1 });
  return { answer, statements: callStatements(from) };
}

describe('a READ that takes longer than the hold', () => {
  it('should have its CALL_STARTED written once the hold is over, while the tool works, then its finish', async () => {
    // The tool has not answered (it waits for the gate): the start goes on record when the hold ends.
    const { answer, statements } = await callWhileHeld('hold__held', 'CALL_STARTED', async (from) => {
      await clock.advance(HOLD_MS - 1);
      expect(callStatements(from)).toBe('');
      await clock.advance(1);
    });
    expect(statements).toBe('SF');
    expect((await eventsOf(answer.callId!)).map((e) => [e.type, e.call_seq])).toEqual([
      ['CALL_STARTED', 1],
      ['CALL_FINISHED', 1],
    ]);
  });

  it('should have its CALL_STARTED written at its first progress line, however long the hold', async () => {
    // The clock does not move: only the progress line can start the record.
    const { answer, statements } = await callWhileHeld('hold__working', 'CALL_PROGRESS', async () => {});
    expect(statements).toBe('SF');
    expect((await eventsOf(answer.callId!)).map((e) => [e.type, e.call_seq])).toEqual([
      ['CALL_STARTED', 1],
      ['CALL_PROGRESS', 1],
      ['CALL_FINISHED', 1],
    ]);
  });
});

/** One whole READ record of `turnId`, as the service sends it to CALL_RECORD_SQL. */
const whole = (turnId: string) =>
  JSON.stringify({
    id: uuidv7(),
    turn_id: turnId,
    declared_name: 'hold__lookup',
    arguments: {},
    status: 'SUCCEEDED',
    attempts: 1,
    resends: 0,
    duration_ms: 1,
    risk: 'READ',
    started_at: new Date(),
    start_payload: { name: 'hold__lookup' },
    payload: { seq: null, status: 'SUCCEEDED' },
  });

describe('the batch of whole READ records', () => {
  it('should number each turn in batch order, give no row to a finished turn, and agree with later starts', async () => {
    const run = preparedRunner(t.app.services.orm);
    const a = rawId((await begin(t, w, 'whole-a')).turnId);
    const b = rawId((await begin(t, w, 'whole-b')).turnId);
    const done = rawId((await begin(t, w, 'whole-done')).turnId);
    await sql('update turn set finished_at = now() where id = ?', [done]);
    const rows = await run(CALL_RECORD_SQL, [batchJson([whole(b), whole(a), whole(done), whole(b)])]);
    expect(rows.map((r) => [r.ord, r.call_seq]).sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual([
      [0, 1],
      [1, 1],
      [3, 2],
    ]);
    expect(rows[0]).toMatchObject({ calls: '3' });
    const events = await sql<{ turn_id: string; type: string; call_seq: number }>(
      `select turn_id, type, (payload->>'seq')::int as call_seq from turn_event
       where turn_id in (?, ?, ?) and type like 'CALL_%' order by seq`,
      [a, b, done],
    );
    expect(events.filter((e) => e.turn_id === b).map((e) => [e.type, e.call_seq])).toEqual([
      ['CALL_STARTED', 1],
      ['CALL_FINISHED', 1],
      ['CALL_STARTED', 2],
      ['CALL_FINISHED', 2],
    ]);
    expect(events.filter((e) => e.turn_id === done)).toEqual([]);
    expect(await sql('select count(*)::int as n from turn_call where turn_id = ?', [done])).toEqual([
      { n: 0 },
    ]);
    // A start after them continues the count.
    const next = await run(CALL_START_SQL, [
      batchJson([JSON.stringify({ turn_id: b, call_id: uuidv7(), payload: { name: 'hold__lookup' } })]),
    ]);
    expect(next[0]!.call_seq).toBe(3);
  });
});

describe("how a quick READ's whole record commits (READ_RECORD_COMMIT)", () => {
  it('should commit without waiting for the disk in the async statement and with it in the sync one, and restore the setting', async () => {
    const run = preparedRunner(t.app.services.orm);
    const turnId = rawId((await begin(t, w, 'commit-mode')).turnId);
    const fast = await run(CALL_RECORD_ASYNC_SQL, [batchJson([whole(turnId)])]);
    expect(fast.map((r) => [r.call_seq, r.commit])).toEqual([[1, 'off']]);
    const durable = await run(CALL_RECORD_SQL, [batchJson([whole(turnId)])]);
    expect(durable.map((r) => [r.call_seq, r.commit])).toEqual([[2, 'on']]);
    // The setting was the statement's own: the connection's next statement has the server's.
    const after = await run(
      { ...CALL_RECORD_SQL, name: 'ct_probe_record_setting', text: 'select current_setting($1) as v' },
      ['synchronous_commit'],
    );
    expect(after).toEqual([{ v: 'on' }]);
  });

  it('should send a quick READ through the statement its setting names: async by default, sync when asked', async () => {
    const turn = await begin(t, w, 'commit-default');
    const from = t.queries.length;
    expect(await call(t, w, turn.turnId, 'hold__lookup', { email: 'a@example.com' })).toMatchObject({
      ok: true,
      recorded: true,
    });
    const sent = t.queries.slice(from);
    expect(sent.filter((q) => q === CALL_RECORD_ASYNC_SQL.text)).toHaveLength(1);
    expect(sent.filter((q) => q === CALL_RECORD_SQL.text)).toHaveLength(0);

    const s = await startTestApp({
      clock: new FakeClock(),
      env: { READ_START_HOLD_MS: String(HOLD_MS), READ_RECORD_COMMIT: 'sync' },
    });
    try {
      const sw = await buildWorld(s, peer.url, 'Hold');
      await connectTools(s, sw);
      const st = await begin(s, sw, 'commit-sync');
      const start = s.queries.length;
      expect(await call(s, sw, st.turnId, 'hold__lookup', { email: 'b@example.com' })).toMatchObject({
        ok: true,
        recorded: true,
        seq: 1,
      });
      expect(callStatements(start, s.queries)).toBe('R');
      expect(s.queries.slice(start).filter((q) => q === CALL_RECORD_SQL.text)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });
});
