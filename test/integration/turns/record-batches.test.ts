/**
 * The call path's two batch statements on the real database (issue 15): what one statement does
 * for several calls at once, checked on the rows, not on time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../../src/db/ids.js';
import { preparedRunner, type RunPrepared } from '../../../src/db/prepared.js';
import { batchJson } from '../../../src/db/group-commit.js';
import { CALL_FINISH_SQL, CALL_START_SQL } from '../../../src/turns/call-sql.js';
import { rawId } from '../../support/ids.js';
import { begin, call, startCrmWorld, type CrmFixture } from '../../support/turns.js';

let f: CrmFixture;
let run: RunPrepared;

beforeAll(async () => {
  f = await startCrmWorld('Batches');
  run = preparedRunner(f.t.app.services.orm);
});

afterAll(async () => {
  await f.stop();
});

const sql = <T>(text: string, params: unknown[] = []) =>
  f.t.app.services.orm.em.getConnection().execute<T[]>(text, params);

const readStart = (turnId: string) =>
  JSON.stringify({ turn_id: turnId, call_id: uuidv7(), payload: { name: 'crm__lookup' } });

describe('the batch of call starts', () => {
  it('should give the calls of one turn consecutive seqs in batch order, and no row to a finished turn', async () => {
    const a = rawId((await begin(f.t, f.w, 'batch-a')).turnId);
    const b = rawId((await begin(f.t, f.w, 'batch-b')).turnId);
    const done = rawId((await begin(f.t, f.w, 'batch-done')).turnId);
    await sql('update turn set finished_at = now() where id = ?', [done]);
    const rows = await run(CALL_START_SQL, [
      batchJson([readStart(b), readStart(a), readStart(done), readStart(b), readStart(a), readStart(b)]),
    ]);
    const seqOf = new Map(rows.map((r) => [r.ord as number, r.call_seq as number]));
    expect([...seqOf.entries()].sort((x, y) => x[0] - y[0])).toEqual([
      [0, 1],
      [1, 1],
      [3, 2],
      [4, 2],
      [5, 3],
    ]);
    const counters = await sql<{ id: string; call_seq: number }>(
      'select id, call_seq from turn where id in (?, ?, ?)',
      [a, b, done],
    );
    expect(Object.fromEntries(counters.map((c) => [c.id, c.call_seq]))).toEqual({
      [a]: 2,
      [b]: 3,
      [done]: 0,
    });
    const events = await sql<{ turn_id: string; seq: number }>(
      `select turn_id, (payload->>'seq')::int as seq from turn_event where type = 'CALL_STARTED' and turn_id in (?, ?, ?) order by turn_id, seq`,
      [a, b, done],
    );
    expect(events.map((e) => [e.turn_id, e.seq])).toEqual(
      [
        [a, 1],
        [a, 2],
        [b, 1],
        [b, 2],
        [b, 3],
      ].sort((x, y) => (x[0]! < y[0]! ? -1 : x[0]! > y[0]! ? 1 : 0)),
    );
  });

  it('should commit a batch of READ starts without waiting for the disk, and one with a WRITE start with it', async () => {
    const turnId = rawId((await begin(f.t, f.w, 'batch-commit')).turnId);
    const reads = await run(CALL_START_SQL, [batchJson([readStart(turnId), readStart(turnId)])]);
    expect(reads.map((r) => r.commit)).toEqual(['off', 'off']);
    const op = f.w.ops.update!;
    const write = JSON.stringify({
      turn_id: turnId,
      call_id: uuidv7(),
      intent_id: uuidv7(),
      connection_id: rawId(f.w.connectionId),
      operation_id: rawId(op.id),
      operation_key: op.key,
      declared_name: 'crm__update',
      arguments: { id: 1 },
      payload: { name: 'crm__update' },
    });
    const mixed = await run(CALL_START_SQL, [batchJson([readStart(turnId), write])]);
    expect(mixed.map((r) => [r.ord, r.call_seq, r.commit])).toEqual([
      [0, 3, 'on'],
      [1, 4, 'on'],
    ]);
    const intents = await sql<{ call_seq: number; status: string }>(
      'select call_seq, status from ledger_entry where turn_id = ?',
      [turnId],
    );
    expect(intents).toEqual([{ call_seq: 4, status: 'RUNNING' }]);
    // The session's setting is back to the server's own for the next statement on the connection.
    const after = await run(
      { ...CALL_START_SQL, name: 'ct_probe_setting', text: 'select current_setting($1) as v' },
      ['synchronous_commit'],
    );
    expect(after).toEqual([{ v: 'on' }]);
  });
});

describe('the batch of call finishes', () => {
  it('should move a turn seq counter forward when a call start was lost, and leave it alone otherwise', async () => {
    const turnId = (await begin(f.t, f.w, 'batch-guard')).turnId;
    expect((await call(f.t, f.w, turnId, 'crm__lookup', { email: 'a@example.com' })).seq).toBe(1);
    const id = rawId(turnId);
    // As after a crash that lost an unflushed start: the counter is behind a call that went on.
    await sql('update turn set call_seq = 0 where id = ?', [id]);
    const finish = (seq: number) =>
      JSON.stringify({
        id: uuidv7(),
        turn_id: id,
        workspace_id: rawId(f.w.workspaceId),
        assistant_id: rawId(f.w.assistantId),
        conversation_id: 'batch-guard',
        seq,
        declared_name: 'crm__lookup',
        arguments: {},
        status: 'SUCCEEDED',
        attempts: 1,
        resends: 0,
        duration_ms: 1,
        started_at: new Date(),
        payload: { seq },
      });
    const rows = await run(CALL_FINISH_SQL, [batchJson([finish(2), finish(1)])]);
    // `notified`: 2 or 0, as some instance on this shared database watches or not (the NOTIFY's own
    // rule is tested in events-listen.test.ts, on a database of its own).
    expect(rows).toEqual([
      { calls: '2', ledger: '0', restored: '1', notified: expect.stringMatching(/^[02]$/) },
    ]);
    expect(await sql('select call_seq from turn where id = ?', [id])).toEqual([{ call_seq: 2 }]);
    // The next call gets the next seq, not one already taken.
    expect((await call(f.t, f.w, turnId, 'crm__lookup', { email: 'b@example.com' })).seq).toBe(3);
    const again = await run(CALL_FINISH_SQL, [batchJson([finish(1)])]);
    expect(again[0]!.restored).toBe('0');
  });
});
