/**
 * The call path's guarantees under a 32-way load (issue 15), asserted on the records, not on time:
 * every answered call is on record exactly once, with its events; seqs are gapless per turn; a
 * WRITE has its ledger intent and outcome, and the tool saw each WRITE once; the records were in
 * fact group-committed. And the group commit's own promise against the real database: a batch the
 * database refuses leaves nothing behind, and each statement then gets its own outcome.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupCommit, jsonBatchIo } from '../../../src/db/group-commit.js';
import { prepare, preparedRunner } from '../../../src/db/prepared.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';

const WORKERS = 32;
const TURNS = 8;
const CALLS_PER_WORKER = 8;

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
/** How often the tool server ran each WRITE (by its argument `n`). */
const writesSeen = new Map<number, number>();

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({
    stateful: false,
    json: true,
    record: false,
    tools: [
      {
        name: 'lookup',
        description: 'Look a customer up',
        inputSchema: { n: z.number() },
        annotations: { readOnlyHint: true },
      },
      {
        name: 'update',
        description: 'Update a customer',
        inputSchema: { n: z.number() },
        annotations: { idempotentHint: false },
        handler: (args) => {
          const n = args.n as number;
          writesSeen.set(n, (writesSeen.get(n) ?? 0) + 1);
          return { content: [{ type: 'text', text: `updated ${n}` }] };
        },
      },
      {
        name: 'fails',
        description: 'Always reports an error',
        annotations: { readOnlyHint: true },
        handler: () => ({ isError: true, content: [{ type: 'text', text: 'customer not found' }] }),
      },
    ],
  });
  w = await buildWorld(t, peer.url, 'CRM');
  await connectTools(t, w);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('the call path under a 32-way load', () => {
  it('should record every call once, with gapless seqs per turn, and a ledger row for each WRITE the tool saw', async () => {
    const turns = await Promise.all(Array.from({ length: TURNS }, (_, i) => begin(t, w, `load-${i}`)));
    const before = { ...t.app.services.turns.groupCommitStats };
    const answers: {
      turnId: string;
      name: string;
      n: number;
      callId: string | null;
      recorded: boolean;
      status: string;
    }[] = [];
    let next = 0;
    const names = ['crm__lookup', 'crm__update', 'crm__fails', 'crm__lookup', 'crm__no_such_tool'];
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        for (let k = 0; k < CALLS_PER_WORKER; k++) {
          const n = next++;
          const turnId = turns[(worker + k) % TURNS]!.turnId;
          const name = names[n % names.length]!;
          const r = await call(t, w, turnId, name, { n });
          answers.push({ turnId, name, n, callId: r.callId, recorded: r.recorded, status: r.status });
        }
      }),
    );
    const total = WORKERS * CALLS_PER_WORKER;
    expect(answers).toHaveLength(total);
    expect(answers.filter((a) => !a.recorded || a.callId === null)).toEqual([]);

    const sql = t.app.services.orm.em.getConnection();
    const turnIds = turns.map((x) => rawId(x.turnId));
    const calls = await sql.execute<
      { id: string; turn_id: string; seq: number; declared_name: string; status: string }[]
    >('select id, turn_id, seq, declared_name, status from turn_call where turn_id in (?)', [turnIds]);
    // Every answered call has exactly one record, with the status it was answered with.
    expect(calls).toHaveLength(total);
    const byId = new Map(calls.map((c) => [c.id, c]));
    for (const a of answers) expect(byId.get(rawId(a.callId!))?.status, a.name).toBe(a.status);
    // Seqs are 1..n in every turn, no gap, no repeat.
    for (const turnId of turnIds) {
      const seqs = calls
        .filter((c) => c.turn_id === turnId)
        .map((c) => c.seq)
        .sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    }
    const events = await sql.execute<{ type: string; n: string }[]>(
      `select type, count(*) as n from turn_event where turn_id in (?) group by type`,
      [turnIds],
    );
    const count = (type: string) => Number(events.find((e) => e.type === type)?.n ?? 0);
    expect(count('CALL_STARTED')).toBe(total);
    expect(count('CALL_FINISHED')).toBe(total);
    expect(count('TURN_STARTED')).toBe(TURNS);

    // Ledger rows equal the WRITE calls: one intent and one outcome each, and the tool ran each once.
    const writes = answers.filter((a) => a.name === 'crm__update');
    const ledger = await sql.execute<{ turn_call_id: string; outcome: string | null }[]>(
      `select e.turn_call_id, o.status as outcome from ledger_entry e
       left join ledger_outcome o on o.ledger_entry_id = e.id where e.turn_id in (?)`,
      [turnIds],
    );
    expect(ledger.map((l) => l.turn_call_id).sort()).toEqual(writes.map((a) => rawId(a.callId!)).sort());
    expect(ledger.every((l) => l.outcome === 'SUCCEEDED')).toBe(true);
    expect([...writesSeen.values()].every((v) => v === 1)).toBe(true);
    expect([...writesSeen.keys()].sort((a, b) => a - b)).toEqual(
      writes.map((a) => a.n).sort((a, b) => a - b),
    );

    // The records of concurrent calls did go together.
    const after = t.app.services.turns.groupCommitStats;
    expect(after.batches).toBeGreaterThan(before.batches);
    expect(after.fallbacks).toBe(before.fallbacks);
  });
});

describe('group commit on the real database', () => {
  const table = `gc_probe_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    await t.app.services.orm.em
      .getConnection()
      .execute(`create table ${table} (id int primary key, note text)`);
  });

  afterAll(async () => {
    await t.app.services.orm.em.getConnection().execute(`drop table ${table}`);
  });

  interface ProbeRow {
    id: number;
    note: string;
    lockKey: string;
  }
  /** A group commit of inserts into the probe table: one prepared statement per batch, as the call records. */
  const probeCommit = () =>
    new GroupCommit<ProbeRow>(
      jsonBatchIo<ProbeRow>(
        preparedRunner(t.app.services.orm),
        prepare(
          'with: insert into probe',
          `with r as (select * from jsonb_to_recordset(?::jsonb) as r(ord int, id int, note text)),
                 i as (insert into ${table} select id, note from r returning id)
                 select r.ord, r.id, r.note from r join i using (id)`,
        ),
        (item) => JSON.stringify({ id: item.id, note: item.note }),
      ),
      { inFlight: 1 },
    );

  it('should keep nothing of a refused batch, then give each statement its own outcome', async () => {
    await t.app.services.orm.em.getConnection().execute(`insert into ${table} values (1, 'there before')`);
    const gc = probeCommit();
    const insert = (id: number, note: string) => gc.run({ id, note, lockKey: String(id) });
    // The first goes alone and holds the only slot; the next three queue and go as one batch.
    const first = insert(10, 'alone');
    const batch = [insert(2, "it's fine; -- not a comment"), insert(1, 'duplicate'), insert(3, 'also fine')];
    const settled = await Promise.allSettled([first, ...batch]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' }); // unique_violation
    expect(gc.stats).toMatchObject({ batches: 1, batched: 3, fallbacks: 1 });
    const rows = await t.app.services.orm.em
      .getConnection()
      .execute<{ id: number; note: string }[]>(`select id, note from ${table} order by id`);
    expect(rows).toEqual([
      { id: 1, note: 'there before' },
      { id: 2, note: "it's fine; -- not a comment" },
      { id: 3, note: 'also fine' },
      { id: 10, note: 'alone' },
    ]);
  });

  it('should commit a batch as one and answer each statement with its own rows', async () => {
    const gc = probeCommit();
    const insert = (id: number) => gc.run({ id, note: `n${id}`, lockKey: 'x' });
    const results = await Promise.all([insert(20), insert(21), insert(22), insert(23)]);
    // The first went alone (a batch of one); the other three as one batch, each with its own row.
    expect(results).toEqual([
      [{ ord: 0, id: 20, note: 'n20' }],
      [{ ord: 0, id: 21, note: 'n21' }],
      [{ ord: 1, id: 22, note: 'n22' }],
      [{ ord: 2, id: 23, note: 'n23' }],
    ]);
    expect(gc.stats.batches).toBe(1);
  });
});
