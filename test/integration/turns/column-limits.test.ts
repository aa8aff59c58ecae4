/**
 * Every bounded column the call records write, fed a value at its limit and over it through the
 * real statements (issue 25, item 4): nothing a model or a tool sends can make a record
 * unstorable, and one record the database refuses never costs the records batched with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchJson, GroupCommit, isPermanentServerError, jsonBatchIo } from '../../../src/db/group-commit.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { preparedRunner, type Prepared, type RunPrepared } from '../../../src/db/prepared.js';
import { RECORD_COLUMN_LIMITS, storableRecordJson } from '../../../src/turns/storable.js';
import {
  CALL_FINISH_SQL,
  CALL_RECORD_SQL,
  CALL_START_SQL,
  UNSTORABLE_NOTE,
} from '../../../src/turns/call-sql.js';
import { TurnCallsDocument } from '../../generated/graphql.js';
import { rawId } from '../../support/ids.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';
import {
  begin,
  buildWorld,
  call,
  connectTools,
  CRM_TOOLS,
  startCrmWorld,
  type CrmFixture,
  type World,
} from '../../support/turns.js';

let f: CrmFixture;
let run: RunPrepared;

beforeAll(async () => {
  // A database of its own: the WRITE intents written here stay open (no outcome), which a ledger
  // sweep in another file would otherwise find and close.
  f = await startCrmWorld('Limits', { databaseUrl: await createEmptyDatabase() });
  run = preparedRunner(f.t.app.services.orm);
});

afterAll(async () => {
  await f?.stop();
});

const sql = <T>(text: string, params: unknown[] = []) =>
  f.t.app.services.orm.em.getConnection().execute<T[]>(text, params);

/** The tables the call records write. */
const RECORD_TABLES = ['turn_call', 'turn_event', 'ledger_entry', 'ledger_outcome'];

describe('the bounded columns of the call records', () => {
  it('should know every bounded column of the record tables, with the limit the database has', async () => {
    const rows = await sql<{ column_name: string; limit: number }>(
      `select distinct column_name, character_maximum_length as limit from information_schema.columns
       where table_schema = 'public' and table_name in (?, ?, ?, ?) and character_maximum_length is not null
       order by column_name`,
      RECORD_TABLES,
    );
    expect(Object.fromEntries(rows.map((r) => [r.column_name, r.limit]))).toEqual(RECORD_COLUMN_LIMITS);
  });
});

/** One batch item of a statement, and the id its stored rows are read back by. */
interface Item {
  fields: Record<string, unknown>;
  raw: Record<string, string>;
  callId: string;
}

/** Where a statement writes a bounded column: the item with `value` in it, and how to read it back. */
interface Case {
  statement: Prepared;
  column: string;
  item(turnId: string, value: string): Item;
  /** The stored value of the column, by the item's call id. */
  read: string;
}

/** A call's finish record (CALL_FINISH_SQL) with `overrides`. */
const finishItem = (turnId: string, overrides: Record<string, unknown> = {}): Item => {
  const callId = uuidv7();
  return {
    callId,
    fields: {
      id: callId,
      turn_id: turnId,
      workspace_id: rawId(f.w.workspaceId),
      assistant_id: rawId(f.w.assistantId),
      conversation_id: 'limits',
      seq: 1,
      operation_key: f.w.ops.lookup!.key,
      operation_id: rawId(f.w.ops.lookup!.id),
      declared_name: 'limits__lookup',
      status: 'SUCCEEDED',
      message: null,
      attempts: 1,
      resends: 0,
      duration_ms: 1,
      risk: 'READ',
      started_at: new Date(),
      traceparent: null,
      tracestate: null,
      outcome_id: null,
      intent_id: null,
      ...overrides,
    },
    raw: { arguments: '{}', payload: '{}' },
  };
};

/** A READ's whole record (CALL_RECORD_SQL): the finish record's fields that its statement takes. */
const recordItem = (turnId: string, overrides: Record<string, unknown>): Item => {
  const finish = finishItem(turnId, overrides);
  const {
    workspace_id: _w,
    assistant_id: _a,
    conversation_id: _c,
    seq: _s,
    outcome_id: _o,
    intent_id: _i,
    ...fields
  } = finish.fields;
  return { callId: finish.callId, fields, raw: { ...finish.raw, start_payload: '{}' } };
};

/** A WRITE's start with its ledger intent (CALL_START_SQL). */
const writeStartItem = (turnId: string, overrides: Record<string, unknown>): Item => {
  const callId = uuidv7();
  return {
    callId,
    fields: {
      turn_id: turnId,
      call_id: callId,
      intent_id: uuidv7(),
      connection_id: rawId(f.w.connectionId),
      operation_id: rawId(f.w.ops.update!.id),
      operation_key: f.w.ops.update!.key,
      declared_name: 'limits__update',
      ...overrides,
    },
    raw: { payload: '{}', arguments: '{}' },
  };
};

const CASES: Case[] = [
  ...['declared_name', 'operation_key', 'traceparent', 'tracestate'].flatMap((column): Case[] => [
    {
      statement: CALL_FINISH_SQL,
      column,
      item: (turnId, value) => finishItem(turnId, { [column]: value }),
      read: `select ${column} as v from turn_call where id = ?`,
    },
    {
      statement: CALL_RECORD_SQL,
      column,
      item: (turnId, value) => recordItem(turnId, { [column]: value }),
      read: `select ${column} as v from turn_call where id = ?`,
    },
  ]),
  {
    statement: CALL_FINISH_SQL,
    column: 'conversation_id',
    item: (turnId, value) => finishItem(turnId, { conversation_id: value }),
    read: `select conversation_id as v from turn_event where call_id = ?`,
  },
  ...['declared_name', 'operation_key'].map((column): Case => ({
    statement: CALL_START_SQL,
    column,
    item: (turnId, value) => writeStartItem(turnId, { [column]: value }),
    read: `select ${column} as v from ledger_entry where turn_call_id = ?`,
  })),
];

const PAIR = '\u{1F600}'; // two UTF-16 units, one character to PostgreSQL

describe.each(CASES)('$statement.shape: $column', (c) => {
  const limit = RECORD_COLUMN_LIMITS[c.column]!;
  /** Runs one record through the statement, fitted as the call path fits records (or raw). */
  const store = async (value: string, fitted = true) => {
    const turnId = rawId((await begin(f.t, f.w, 'limits')).turnId);
    const { fields, raw, callId } = c.item(turnId, value);
    await run(c.statement, [batchJson([fitted ? storableRecordJson(fields, raw) : rawJson(fields, raw)])]);
    const rows = await sql<{ v: string }>(c.read, [callId]);
    return rows[0]?.v;
  };

  it('should store a value at the limit as it is', async () => {
    const value = 'a'.repeat(limit);
    expect(await store(value)).toBe(value);
  });

  it('should store a value over the limit cut to it, with an ellipsis', async () => {
    expect(await store('b'.repeat(limit + 50))).toBe(`${'b'.repeat(limit - 1)}…`);
  });

  it('should never split a character that takes two UTF-16 units at the cut', async () => {
    expect(await store(`${'c'.repeat(limit - 2)}${PAIR}zz`)).toBe(`${'c'.repeat(limit - 2)}…`);
  });

  it('should be refused by the database over the limit unfitted (the limit the fit is for)', async () => {
    await expect(store('d'.repeat(limit + 1), false)).rejects.toMatchObject({ code: '22001' });
  });
});

/** A record as JSON without any fitting: what the statements got before. */
function rawJson(fields: Record<string, unknown>, raw: Record<string, string>): string {
  let json = JSON.stringify(fields).slice(0, -1);
  for (const key in raw) json += `,${JSON.stringify(key)}:${raw[key]}`;
  return `${json}}`;
}

describe('a tool name over 200 characters', () => {
  it.each([200, 201, 250, 5_000])(
    'should answer and record a call named with %i characters',
    async (length) => {
      const turn = await begin(f.t, f.w, `long-name-${length}`);
      const name = 'x'.repeat(length);
      const res = await call(f.t, f.w, turn.turnId, name, {});
      expect(res).toMatchObject({ ok: false, status: 'UNAVAILABLE', recorded: true, seq: 1 });
      const stored = length <= 200 ? name : `${'x'.repeat(199)}…`;
      expect(res.message).toContain(`There is no tool named "${stored}"`);
      const calls = await f.t.ok(TurnCallsDocument, { id: turn.turnId }, f.w.admin);
      expect(calls.turn!.calls.nodes.map((n) => [n.seq, n.declaredName, n.status])).toEqual([
        [1, stored, 'UNAVAILABLE'],
      ]);
      const events = await sql<{ type: string }>(
        'select type from turn_event where turn_id = ? order by seq',
        [rawId(turn.turnId)],
      );
      expect(events.map((e) => e.type)).toEqual(['TURN_STARTED', 'CALL_STARTED', 'CALL_FINISHED']);
    },
  );
});

describe('a batch with one record the database refuses', () => {
  it('should commit the good records once, refuse only the bad one, and leave later batches whole', async () => {
    const turnId = rawId((await begin(f.t, f.w, 'bad-batch')).turnId);
    const finishes = new GroupCommit(
      jsonBatchIo(run, CALL_FINISH_SQL, (item: { lockKey: string; json: string }) => item.json),
      { inFlight: 1 },
    );
    const good = (seq: number) => {
      const { fields, raw, callId } = finishItem(turnId, { seq });
      return { lockKey: turnId, json: storableRecordJson(fields, raw), callId, seq };
    };
    const refused = finishItem(turnId, { seq: 99, declared_name: 'y'.repeat(201) });
    const bad = { lockKey: turnId, json: rawJson(refused.fields, refused.raw) };
    const first = good(1);
    const good2 = good(2);
    const good3 = good(3);
    const batch = [good2, bad, good3];
    // The first goes alone; the three queue behind it and go as one batch.
    const settled = await Promise.allSettled([first, ...batch].map((i) => finishes.run(i)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const refusal = (settled[2] as PromiseRejectedResult).reason as { code: string };
    expect(refusal.code).toBe('22001');
    expect(isPermanentServerError(refusal)).toBe(true);
    expect(finishes.stats).toEqual({ batches: 1, batched: 3, fallbacks: 1 });

    // Later batches are not touched by it.
    const later = [good(4), good(5), good(6), good(7)];
    await Promise.all(later.map((i) => finishes.run(i)));
    expect(finishes.stats).toMatchObject({ batches: 2, fallbacks: 1 });
    const stored = await sql<{ id: string; seq: number }>(
      'select id, seq from turn_call where turn_id = ? order by seq',
      [turnId],
    );
    const kept = [first, good2, good3, ...later];
    expect(stored).toEqual(kept.map((i) => ({ id: i.callId, seq: i.seq })));
  });
});

describe('a call whose record the database refuses', () => {
  let t: TestApp;
  let peer: SdkServerHandle;
  let w: World;
  beforeAll(async () => {
    // A database of its own, with a rule that refuses one tool's answer: a stand-in for any value
    // the database may one day refuse that the record's fitting did not foresee.
    const url = await createEmptyDatabase();
    t = await startTestApp({ databaseUrl: url, captureLogs: true, env: { RECORD_BATCH_IN_FLIGHT: '1' } });
    await t.app.services.orm.em
      .getConnection()
      .execute(`alter table turn_call add constraint refuses_poison check (message not like '%POISON%')`);
    const tools: PeerTool[] = [
      ...CRM_TOOLS,
      {
        name: 'poison',
        annotations: { readOnlyHint: true },
        handler: () => ({ isError: true, content: [{ type: 'text', text: 'POISON' }] }),
      },
    ];
    peer = await startSdkServer({ stateful: false, json: true, tools });
    w = await buildWorld(t, peer.url, 'Refused');
    await connectTools(t, w);
  });
  afterAll(async () => {
    await t?.stop();
    await peer?.close();
  });

  it('should record it without what the tool sent, at once, and never try the refused record again', async () => {
    const turn = await begin(t, w, 'refused');
    const res = await call(t, w, turn.turnId, 'refused__poison', {});
    // The model still reads what the tool said.
    expect(res).toMatchObject({ ok: false, status: 'TOOL_ERROR', recorded: true, seq: 1 });
    expect(res.message).toContain('POISON');
    const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(calls.turn!.calls.nodes.map((n) => [n.seq, n.status, n.message, n.arguments])).toEqual([
      [1, 'TOOL_ERROR', `(${UNSTORABLE_NOTE})`, { _refused: UNSTORABLE_NOTE }],
    ]);
    expect(t.logs.join('')).not.toContain('retrying in the background');
  });

  it('should leave the calls recorded beside it whole', async () => {
    const turn = await begin(t, w, 'beside');
    const before = t.app.services.turns.groupCommitStats.fallbacks;
    const calls = await Promise.all([
      call(t, w, turn.turnId, 'refused__lookup', { email: 'a@b' }),
      call(t, w, turn.turnId, 'refused__poison', {}),
      call(t, w, turn.turnId, 'refused__lookup', { email: 'c@d' }),
      call(t, w, turn.turnId, 'refused__lookup', { email: 'e@f' }),
    ]);
    expect(calls.map((c) => c.recorded)).toEqual([true, true, true, true]);
    const stored = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
    expect(stored.turn!.calls.nodes.map((n) => n.status).sort()).toEqual([
      'SUCCEEDED',
      'SUCCEEDED',
      'SUCCEEDED',
      'TOOL_ERROR',
    ]);
    // At most the batch the refused record first joined was run again one by one.
    expect(t.app.services.turns.groupCommitStats.fallbacks - before).toBeLessThanOrEqual(2);
    expect(t.logs.join('')).not.toContain('retrying in the background');
  });
});
