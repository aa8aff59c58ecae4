/**
 * The call path's SQL and the JSON of its records (src/turns/call-path.ts writes them, batched by
 * src/turns/call-record.ts): a call's start (seq + CALL_STARTED, a WRITE's ledger intent), its
 * finish (TurnCall, the ledger outcome, CALL_FINISHED), a quick READ's whole record, and a refused
 * call's record. Each statement takes a batch as one JSON array (src/db/group-commit.ts) and is
 * atomic.
 */
import type { TraceContext } from './trace.js';
import type { Keyed, Row } from '../db/group-commit.js';
import { prepare } from '../db/prepared.js';
import { uuidv7 } from '../db/ids.js';
import { eventNotifySql } from '../db/notifier.js';
import type { TurnState } from './call-answer.js';
import { eventResult, type EventArguments } from './event-payload.js';
import type { ProgressRecord } from './progress.js';
import type { CallResult } from './result.js';
import { storableJson, storableRecordJson } from './storable.js';
import type { CachedOperation } from './tool-cache.js';

/** The NOTIFY of each event `e`, sent only while some instance watches (src/db/notifier.ts). */
const NOTIFY = eventNotifySql('e');

/**
 * The seqs of a batch of calls `r` (one row per call: `ord`, `turn_id`), as `c`: `r` with each
 * call's `call_seq` and its turn's workspace, assistant and conversation. Turns are locked in id
 * order before they are updated, so batches (of this instance or another) cannot deadlock each
 * other; a finished turn's calls get no row; several calls of one turn get consecutive seqs, in
 * batch order. Shared by CALL_START_SQL and CALL_RECORD_SQL, which must number calls alike.
 */
const TAKE_SEQS = `n as (
  select turn_id, count(*)::int as calls from r group by turn_id
), locked as (
  select id from turn where id in (select turn_id from n) and finished_at is null order by id for update
), s as (
  update turn t set call_seq = t.call_seq + n.calls from n
  where t.id = n.turn_id and t.id in (select id from locked) and t.finished_at is null
  returning t.id, t.call_seq, n.calls, t.workspace_id, t.assistant_id, t.conversation_id
), c as (
  select r.*, s.workspace_id, s.assistant_id, s.conversation_id,
         (s.call_seq - s.calls + row_number() over (partition by r.turn_id order by r.ord))::int as call_seq
  from r join s on s.id = r.turn_id
)`;

/**
 * The starts of a batch of calls (group commit, `jsonBatchIo`), in one statement: each call's turn
 * gets its next seq and the call its CALL_STARTED event; a WRITE also gets its ledger intent
 * (status RUNNING), so the request goes out only after this commits and a WRITE that may have
 * reached a tool server always has a ledger row, whatever happens to the database afterwards.
 *
 * - Turns are locked in id order before they are updated, so batches (of this instance or another)
 *   cannot deadlock each other. A finished turn's calls get no row: "turn finished".
 * - Several calls of one turn in one batch get consecutive seqs, in batch order.
 * - A batch of READ starts only is committed without waiting for its WAL flush (as BEGIN_SQL): the
 *   call's answer waits for its finish, whose synchronous commit flushes the WAL up to itself, the
 *   start included. A crash before that loses the start of a call whose result was never reported
 *   as recorded; CALL_FINISH_SQL then restores the turn's seq counter (see there). A batch with a
 *   WRITE start commits synchronously: the intent is durable before the request goes out.
 */
export const CALL_START_SQL = prepare(
  'with: update turn',
  `
with r as (
  select * from jsonb_to_recordset(?::jsonb) as r(
    ord int, turn_id uuid, call_id uuid, payload jsonb, intent_id uuid, connection_id uuid,
    operation_id uuid, operation_key text, arguments jsonb, declared_name text)
), cfg as (
  select set_config('synchronous_commit', case when bool_or(intent_id is not null) then 'on' else 'off' end, true) as v
  from r
), ${TAKE_SEQS}, e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, turn_id, call_id, 'CALL_STARTED',
         jsonb_build_object('seq', call_seq) || payload, now()
  from c order by ord
  returning seq, workspace_id
), l as (
  insert into ledger_entry (id, workspace_id, assistant_id, turn_id, turn_call_id, connection_id, operation_id,
                            operation_key, arguments, status, attempts, message, call_seq, declared_name, created_at)
  select intent_id, workspace_id, assistant_id, turn_id, call_id, connection_id, operation_id, operation_key,
         arguments, 'RUNNING', 0, null, call_seq, declared_name, now()
  from c where intent_id is not null
  returning id
), sent as (
  select count(${NOTIFY}) as n from e
)
select c.ord, c.call_seq, (select v from cfg) as commit, (select n from sent) as notified,
       (select count(*) from l) as intents
from c`,
);

/**
 * The finishes of a batch of calls (group commit, `jsonBatchIo`), in one statement, committed
 * synchronously: each call's TurnCall, its CALL_FINISHED event, and for a WRITE the outcome of its
 * ledger intent. Nothing is locked in the usual case.
 *
 * A READ's start may have been lost in a crash of PostgreSQL (it commits without waiting for its
 * flush) while the call went on: the turn's seq counter then lags this call's seq, and is moved
 * forward here, so that a later call cannot be given the same seq.
 */
export const CALL_FINISH_SQL = prepare(
  'with: insert into turn_call',
  `
with r as (
  select * from jsonb_to_recordset(?::jsonb) as r(
    id uuid, turn_id uuid, workspace_id uuid, assistant_id uuid, conversation_id text, seq int,
    operation_key text, operation_id uuid, declared_name text, arguments jsonb, status text, message text,
    attempts int, resends int, duration_ms int, risk text, started_at timestamptz, traceparent text,
    tracestate text, outcome_id uuid, intent_id uuid, payload jsonb, model_arguments jsonb)
), c as (
  insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
                         status, message, attempts, resends, duration_ms, risk, started_at, finished_at,
                         traceparent, tracestate, model_arguments)
  select id, turn_id, workspace_id, seq, operation_key, (select o.id from operation o where o.id = r.operation_id),
         declared_name, arguments, status, message, attempts, resends, duration_ms, risk, started_at, now(),
         traceparent, tracestate, model_arguments
  from r
  returning id
), l as (
  insert into ledger_outcome (id, ledger_entry_id, workspace_id, status, attempts, message, closed_by, created_at)
  select outcome_id, intent_id, workspace_id, status, attempts, message, 'CALL', now() from r
  where intent_id is not null
  on conflict (ledger_entry_id) do nothing
  returning id
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, turn_id, id, 'CALL_FINISHED', payload, now() from r
  returning seq, workspace_id
), g as (
  update turn t set call_seq = m.seq
  from (select turn_id, max(seq) as seq from r group by turn_id) m
  where t.id = m.turn_id and t.call_seq < m.seq
  returning t.id
)
select (select count(*) from c) as calls, (select count(*) from l) as ledger,
       (select count(*) from g) as restored, count(${NOTIFY}) as notified
from e`,
);

/**
 * A READ answered within READ_START_HOLD_MS, whole (group commit, `jsonBatchIo`), in one statement:
 * its seq, CALL_STARTED, TurnCall and CALL_FINISHED. Half the statements, commits and wake-ups of
 * start-then-finish, for the calls that are most of the traffic.
 *
 * - `READ_RECORD_COMMIT=async` (the default, CALL_RECORD_ASYNC_SQL) commits it without waiting for
 *   its WAL flush, as beginTurn's turn and a READ's start are: the record is committed, and seen
 *   by every instance, before the answer; it is on disk once the WAL writer or any later
 *   synchronous commit flushes it (within about 3 × wal_writer_delay, 0.6 s by default). Only a
 *   crash of PostgreSQL itself within that time loses it, with its seq, which a later call of the
 *   turn may then get again; nothing was sent that changes anything (a READ). Waiting for the flush
 *   was about 0.26 ms of a c=1 call's 1.8 ms on the bench machine (same-run A/B). `sync`
 *   (CALL_RECORD_SQL) waits. WRITE records never take this path.
 *
 * - As in CALL_START_SQL, turns are locked in id order, a finished turn's calls get no row, and
 *   several calls of one turn get consecutive seqs in batch order. A READ's seq is thus the order
 *   in which its record was taken, not the order its request went out.
 * - Both events of a call come from one insert, CALL_STARTED first, so their seqs are in order.
 * - The events' payloads get `seq` here (it is only known here): `||` puts it last, over the
 *   placeholder the finish payload carries.
 */
const callRecordSql = (synchronousCommit: 'on' | 'off') =>
  prepare(
    'with: insert into turn_call',
    `
with cfg as (
  select set_config('synchronous_commit', '${synchronousCommit}', true) as v
), r as (
  select * from jsonb_to_recordset(?::jsonb) as r(
    ord int, id uuid, turn_id uuid, operation_key text, operation_id uuid, declared_name text,
    arguments jsonb, status text, message text, attempts int, resends int, duration_ms int, risk text,
    started_at timestamptz, traceparent text, tracestate text, start_payload jsonb, payload jsonb,
    model_arguments jsonb)
), ${TAKE_SEQS}, tc as (
  insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
                         status, message, attempts, resends, duration_ms, risk, started_at, finished_at,
                         traceparent, tracestate, model_arguments)
  select id, turn_id, workspace_id, call_seq, operation_key, (select o.id from operation o where o.id = c.operation_id),
         declared_name, arguments, status, message, attempts, resends, duration_ms, risk, started_at, now(),
         traceparent, tracestate, model_arguments
  from c
  returning id
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, turn_id, id, type, payload_ || jsonb_build_object('seq', call_seq), now()
  from (
    select c.*, 0 as k, 'CALL_STARTED' as type, start_payload as payload_ from c
    union all
    select c.*, 1 as k, 'CALL_FINISHED' as type, payload as payload_ from c
  ) x
  order by ord, k
  returning seq, workspace_id
), sent as (
  select count(${NOTIFY}) as n from e
)
select c.ord, c.call_seq, (select count(*) from tc) as calls, (select n from sent) as notified,
       (select v from cfg) as commit
from c`,
  );
export const CALL_RECORD_SQL = callRecordSql('on');
export const CALL_RECORD_ASYNC_SQL = callRecordSql('off');

/**
 * A call refused before anything was sent (arguments over a limit): seq, its TurnCall and its
 * CALL_FINISHED event in one statement. No CALL_STARTED: nothing started.
 */
export const CALL_REFUSED_SQL = `
with s as (
  update turn set call_seq = call_seq + 1 where id = ? and finished_at is null
  returning id, call_seq, workspace_id, assistant_id, conversation_id
), c as (
  insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
                         status, message, attempts, duration_ms, risk, started_at, finished_at, model_arguments)
  select ?, s.id, s.workspace_id, s.call_seq, ?, (select id from operation where id = ?::uuid), ?, ?::jsonb,
         ?, ?, 0, ?, ?, ?, now(), ?::jsonb from s
  returning id, seq
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select s.workspace_id, s.assistant_id, s.conversation_id, s.id, c.id, 'CALL_FINISHED',
         jsonb_build_object('seq', c.seq) || ?::jsonb, now() from s, c
  returning seq, workspace_id
)
select s.call_seq, ${NOTIFY} from s, e`;

/** A call record for the group commit: one item of its batch statement's JSON array. */
export interface RecordItem extends Keyed {
  json: string;
}

/**
 * A call's start record (CALL_START_SQL): with `intent`, a WRITE's, whose ledger intent keeps the
 * call's operation, name and arguments.
 */
export function startJson(
  turnId: string,
  callId: string,
  intent: { intentId: string; op: CachedOperation; name: string } | null,
  startPayloadJson: string,
  argsJson: string,
): string {
  if (intent === null)
    return storableRecordJson({ turn_id: turnId, call_id: callId }, { payload: startPayloadJson });
  const { intentId, op, name } = intent;
  return storableRecordJson(
    {
      turn_id: turnId,
      call_id: callId,
      intent_id: intentId,
      connection_id: op.connection.id,
      operation_id: op.id,
      operation_key: op.key,
      declared_name: name,
    },
    { payload: startPayloadJson, arguments: argsJson },
  );
}

/** The CALL_STARTED event's payload (its `seq` is added by the statement). */
export function startPayload(
  name: string,
  op: CachedOperation | undefined,
  args: EventArguments,
  modelArgs: EventArguments | null,
): string {
  const fields = {
    name,
    operationKey: op?.key ?? null,
    risk: op?.risk ?? null,
    argumentsCut: args.argumentsCut,
  };
  return modelArgs === null
    ? storableRecordJson(fields, { arguments: args.argumentsJson })
    : storableRecordJson(fields, { arguments: args.argumentsJson, modelArguments: modelArgs.argumentsJson });
}

/** A call's seq from its start (or whole) record's rows: null when its turn had finished. */
export function seqOf(rows: Row[]): number | null {
  return (rows[0]?.call_seq as number | undefined) ?? null;
}

/** What a call's finish record is made of. */
export interface FinishedCall {
  callId: string;
  turn: TurnState;
  op: CachedOperation | undefined;
  name: string;
  result: CallResult;
  /** The result's message, storable. */
  message: string | null;
  durationMs: number;
  started: Date;
  trace: TraceContext | null;
  intentId: string | null;
  argsJson: string;
  /** The model's own arguments (JSON text), when the dialect's mapping changed them; else null. */
  modelArgsJson: string | null;
}

/** What is said in a record for content the database refused (call-record.ts, CallRecords.finish). */
export const UNSTORABLE_NOTE = 'the database refused what this call sent and received; not kept';

/** The call with everything the model and the tool sent replaced by a note: a record that can be stored. */
export function unstorableCall(c: FinishedCall): FinishedCall {
  const result: CallResult = {
    ...c.result,
    content: [],
    structuredContent: null,
    message: `(${UNSTORABLE_NOTE})`,
    truncated: true,
  };
  return { ...c, result, message: result.message, argsJson: JSON.stringify({ _refused: UNSTORABLE_NOTE }) };
}

/**
 * A call's finish record (CALL_FINISH_SQL), or with `startPayloadJson` its whole record
 * (CALL_RECORD_SQL, `seq` null: the statement gives it).
 */
export function finishJson(
  c: FinishedCall,
  seq: number | null,
  progress: ProgressRecord,
  startPayloadJson: string | null,
): string {
  const { result, op, turn } = c;
  const isWrite = c.intentId !== null;
  const fields: Record<string, unknown> = {
    seq,
    name: c.name,
    operationKey: op?.key ?? null,
    risk: op?.risk ?? null,
    status: result.status,
    durationMs: c.durationMs,
    attempts: result.attempts,
    resends: result.resends,
    message: c.message,
    result: eventResult(result),
    progress,
  };
  // A limit or breaker refused the call: which one, for the debugger (src/guards/call-guard.ts).
  if (result.refused) fields.refused = result.refused;
  const payload = storableJson(fields);
  return storableRecordJson(
    {
      id: c.callId,
      turn_id: turn.id,
      workspace_id: turn.workspaceId,
      assistant_id: turn.assistantId,
      conversation_id: turn.conversationId,
      seq,
      operation_key: op?.key ?? null,
      operation_id: op?.id ?? null,
      declared_name: c.name,
      status: result.status,
      message: c.message,
      attempts: result.attempts,
      resends: result.resends,
      duration_ms: c.durationMs,
      risk: op?.risk ?? null,
      started_at: c.started,
      traceparent: c.trace?.traceparent ?? null,
      tracestate: c.trace?.tracestate ?? null,
      // The outcome of a WRITE's ledger intent.
      outcome_id: isWrite ? uuidv7() : null,
      intent_id: c.intentId,
    },
    startPayloadJson === null
      ? { arguments: c.argsJson, payload, model_arguments: c.modelArgsJson ?? 'null' }
      : {
          arguments: c.argsJson,
          payload,
          start_payload: startPayloadJson,
          model_arguments: c.modelArgsJson ?? 'null',
        },
  );
}
