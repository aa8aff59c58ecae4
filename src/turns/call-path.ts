/**
 * The call path (I/O), shared by both front doors: GraphQL `callTool` (src/turns/turn.resolver.ts,
 * through TurnService.call) and the MCP endpoint (src/mcp-server/). A customer is waiting on every
 * call, so it is short and never fails loudly: one statement before the request (seq +
 * CALL_STARTED, and a WRITE's ledger intent), one after (TurnCall, the ledger outcome,
 * CALL_FINISHED), each atomic; a quick READ is recorded whole in one statement. Every failure is
 * a result for the model. Discovery is never called from here.
 */
import type { TraceContext } from './trace.js';
import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import {
  GroupCommit,
  isPermanentServerError,
  jsonBatchIo,
  type Keyed,
  type Row,
} from '../db/group-commit.js';
import { prepare, type RunPrepared } from '../db/prepared.js';
import { uuidv7 } from '../db/ids.js';
import { eventNotifySql } from '../db/notifier.js';
import type { JsonObject } from '../operations/types.js';
import type { TurnDeps } from './deps.js';
import { resolveDeclaredName } from './declare.js';
import { SEARCH_TOOLS_NAME } from './search/declare-search.js';
import { notFoundMessage, type ToolSearch } from './search/tool-search.js';
import { decodeArguments } from './dialects/decode.js';
import type { ToolDialect } from './dialects/dialect.js';
import type { Permit } from '../guards/call-guard.js';
import { CallProgress } from './call-progress.js';
import { rejectionMessage } from './arguments.js';
import { dispatch } from './dispatch.js';
import { eventArguments, eventResult, type EventArguments } from './event-payload.js';
import type { ProgressLine, ProgressRecord } from './progress.js';
import { failure, type CallResult } from './result.js';
import {
  checkArguments,
  fitText,
  RECORD_COLUMN_LIMITS,
  refusedArgumentsNote,
  storableJson,
  storableJsonText,
  storableRecordJson,
  storableText,
} from './storable.js';
import { dialectToolsOf, type AssistantTools, type CachedOperation, type ToolCache } from './tool-cache.js';
import { CallStatus } from './turn-call.entity.js';

/** The most of a model-given tool name that goes into records and messages (its column's limit). */
const DECLARED_NAME_LIMIT = RECORD_COLUMN_LIMITS.declared_name!;
export const FINISHED_MESSAGE = 'This turn has finished; start a new turn to call tools.';

/** The NOTIFY of each event `e`, sent only while some instance watches (src/db/notifier.ts). */
const NOTIFY = eventNotifySql('e');

/** What a call needs to know of its turn, kept in memory after beginTurn. */
export interface TurnState {
  id: string;
  assistantId: string;
  workspaceId: string;
  conversationId: string;
  /** Declared name → operation id (the tools declared in this turn's dialect). */
  map: Record<string, string>;
  builtIns: ReadonlySet<string>;
  /** The model API the tools were declared for: the model's arguments come back in its terms. */
  dialect: ToolDialect;
  /** finishTurn was called (on this instance, or before this instance loaded the turn). */
  finished: boolean;
  /** Tool search (issue 31): the turn declares `search_tools`; found tools are callable too. */
  search: boolean;
  /** Found tools known to this instance: declared name → operation id (src/turns/search/). */
  found?: Map<string, string>;
}

export interface CallToolResult extends CallResult {
  callId: string | null;
  seq: number | null;
  /**
   * The call's record (its TurnCall, and for a WRITE its ledger row) was stored before the answer.
   * False when the database failed: the result is still the tool's real result.
   */
  recorded: boolean;
  /** The turn's dialect: how `forModel` shapes the result (src/turns/dialects/for-model.ts). */
  dialect: ToolDialect;
}

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
const CALL_REFUSED_SQL = `
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
interface RecordItem extends Keyed {
  json: string;
}

/** The CALL_STARTED event's payload (its `seq` is added by the statement). */
function startPayload(
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

/**
 * A call's answer: its result with what the runtime needs of the record. Built property by
 * property (V8 on Node 20 takes microseconds over `{ ...result, more }`).
 */
function answer(
  result: CallResult,
  callId: string | null,
  seq: number | null,
  recorded: boolean,
): CallToolResult {
  const out = result as CallToolResult;
  out.callId = callId;
  out.seq = seq;
  out.recorded = recorded;
  // Set by call() from the turn, once the answer is known.
  out.dialect = 'GENERIC';
  return out;
}

/** A call's seq from its start (or whole) record's rows: null when its turn had finished. */
function seqOf(rows: Row[]): number | null {
  return (rows[0]?.call_seq as number | undefined) ?? null;
}

/** What a call's finish record is made of. */
interface FinishedCall {
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

/** What is said in a record for content the database refused (see TurnService#call). */
export const UNSTORABLE_NOTE = 'the database refused what this call sent and received; not kept';

/** The call with everything the model and the tool sent replaced by a note: a record that can be stored. */
function unstorableCall(c: FinishedCall): FinishedCall {
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
function finishJson(
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

/**
 * Background retries of a call's record after the two immediate tries failed: about 30 s in all,
 * well inside LEDGER_SWEEP_AFTER_MS, so the sweep never races a retry that could still land.
 */
export const DEFAULT_RECORD_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000];

/** One call as it goes along the path: what each step learns, for the next. */
interface Call {
  turn: TurnState;
  rawName: string;
  /** The model-given name, bounded and storable: what records and messages say. */
  name: string;
  started: Date;
  t0: number;
  trace: TraceContext | null;
  /** The declared name's operation (undefined: no such tool, a built-in, or switched off). */
  operationId: string | undefined;
  op: CachedOperation | undefined;
  tools: AssistantTools | null;
}

/** What the check step lets through: the arguments to send and why the call may not go out. */
interface Checked {
  /** The canonical arguments (mapped back from the turn's dialect). */
  args: JsonObject;
  argsJson: string;
  /** The model's own arguments (JSON text), when the dialect's mapping changed them; else null. */
  modelArgsJson: string | null;
  /** A result given instead of sending (the tool is gone, switched off, or a guard refused). */
  early: CallResult | null;
  permit: Permit | null;
}

/** The call's start record, written once: at once (a WRITE, or no hold), held back, or never. */
interface StartRecord {
  callId: string;
  intentId: string | null;
  startPayloadJson: string;
  /** Writes the start (once): its seq, or null when the turn had finished. */
  now: () => Promise<number | null>;
  /** Whether the start was written (or is being written). */
  written: () => boolean;
  hold: NodeJS.Timeout | null;
}

/**
 * What a front door may give one call besides its arguments: a listener of the tool server's
 * progress (passed on by the MCP endpoint) and a signal that cancels a READ (a WRITE is never
 * abandoned once sent: it runs to its end and is recorded, with its ledger row).
 */
export interface CallLive {
  onProgress?: (line: ProgressLine) => void;
  signal?: AbortSignal;
}

/**
 * The call path (I/O) both front doors use: GraphQL `callTool` and the MCP endpoint. A call goes
 * through five steps, each its own method: resolve (the name and its operation, from the cache),
 * check (the arguments, the dialect, both gates, the guards), record (the start, and a WRITE's
 * ledger intent before its request), dispatch (the request, with progress), finish (the
 * TurnCall, the ledger outcome, CALL_FINISHED). Every failure is a result for the model.
 */
export class CallPath {
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;
  /** callTool's records, group-committed under load (src/db/group-commit.ts): starts and finishes. */
  readonly #starts: GroupCommit<RecordItem>;
  readonly #finishes: GroupCommit<RecordItem>;
  /** READs answered within READ_START_HOLD_MS: start and finish as one record. */
  readonly #records: GroupCommit<RecordItem>;

  constructor(
    private readonly services: TurnDeps,
    private readonly cache: ToolCache,
    run: RunPrepared,
    /** Tool search (issue 31): answers `search_tools` and knows the tools a turn found. */
    private readonly search: ToolSearch,
    private readonly recordRetryDelaysMs: readonly number[] = DEFAULT_RECORD_RETRY_DELAYS_MS,
  ) {
    const json = (item: RecordItem) => item.json;
    this.#starts = new GroupCommit(jsonBatchIo(run, CALL_START_SQL, json), services.config.recordBatch);
    this.#finishes = new GroupCommit(jsonBatchIo(run, CALL_FINISH_SQL, json), services.config.recordBatch);
    const record = services.config.readRecordCommit === 'sync' ? CALL_RECORD_SQL : CALL_RECORD_ASYNC_SQL;
    this.#records = new GroupCommit(jsonBatchIo(run, record, json), services.config.recordBatch);
  }

  /** How the records were committed so far (batches of several records; for tests and the bench). */
  get groupCommitStats(): Readonly<GroupCommit<RecordItem>['stats']> {
    const out = { batches: 0, batched: 0, fallbacks: 0 };
    for (const { stats } of [this.#starts, this.#finishes, this.#records]) {
      out.batches += stats.batches;
      out.batched += stats.batched;
      out.fallbacks += stats.fallbacks;
    }
    return out;
  }

  get #orm(): MikroORM {
    return this.services.orm;
  }

  /** Calls a tool in a turn; every answer is counted for /metrics by connection and status. */
  async call(
    turn: TurnState,
    rawName: string,
    modelArgs: JsonObject,
    /** The runtime request's W3C trace context, validated: sent on and recorded on the TurnCall. */
    trace: TraceContext | null = null,
    /** What the MCP endpoint gives a call: a progress listener and a cancellation signal. */
    live: CallLive | null = null,
  ): Promise<CallToolResult> {
    const seen = { connectionId: null as string | null };
    const result = await this.#run(turn, rawName, modelArgs, trace, seen, live);
    result.dialect = turn.dialect;
    this.services.metrics.toolCall(seen.connectionId, result.status, result.durationMs);
    return result;
  }

  async #run(
    turn: TurnState,
    rawName: string,
    modelArgs: JsonObject,
    trace: TraceContext | null,
    seen: { connectionId: string | null },
    live: CallLive | null,
  ): Promise<CallToolResult> {
    // Tool search (issue 31): a search is answered and recorded by src/turns/search/.
    if (turn.search && rawName === SEARCH_TOOLS_NAME) {
      if (turn.finished) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
      const tools = await this.cache.get(turn.assistantId).catch(() => null);
      const found = await this.search.search(turn, tools, modelArgs);
      return answer(found.result, found.callId, found.seq, found.recorded);
    }
    const resolved = await this.#resolve(turn, rawName, trace, seen);
    if (!('turn' in resolved)) return resolved;
    const call = resolved;
    const checked = await this.#check(call, modelArgs);
    if (!('args' in checked)) return checked;
    const start = this.#record(call, checked);
    if (start.intentId !== null) {
      // A WRITE goes out only once its call (and its ledger intent) is on record.
      const refused = await this.#writeIntent(call, start);
      // A WRITE that is not sent gives back its permit (slots of concurrency caps, a probe's claim).
      if (refused && checked.permit !== null)
        this.services.guard.report(call.op!, checked.permit, CallStatus.UNAVAILABLE);
      if (refused) return refused;
    }
    const progress = this.#progress(call, start);
    progress.listener = live?.onProgress ?? null;
    const result = await this.#dispatch(call, checked, progress, live?.signal);
    this.#settle(call, checked, start, result);
    return this.#finish(call, checked, start, progress, result);
  }

  /**
   * Step 1, resolve: the model's name against the turn's declared map, and its operation from the
   * cache (both gates as they are now: the incident switch works mid-turn). Without the tools the
   * risk is unknown: nothing is attempted and nothing recorded.
   */
  async #resolve(
    turn: TurnState,
    rawName: string,
    trace: TraceContext | null,
    /** Told the operation's connection, for the metrics. */
    seen: { connectionId: string | null },
  ): Promise<Call | CallToolResult> {
    const started = new Date();
    const t0 = performance.now();
    // The name comes from the model: bounded and storable before it reaches any record or message.
    const name = storableText(fitText(rawName, DECLARED_NAME_LIMIT));
    let operationId = resolveDeclaredName(turn.map, rawName);
    // Tool search: a tool this turn found (on any instance) is callable too.
    if (operationId === undefined && turn.search && !turn.builtIns.has(rawName))
      operationId = await this.search.found(turn, rawName);
    let tools: AssistantTools | null;
    let op: CachedOperation | undefined;
    try {
      tools = await this.cache.get(turn.assistantId);
      op = operationId ? tools?.operations.get(operationId) : undefined;
      seen.connectionId = op?.connection.id ?? null;
    } catch (err) {
      this.services.logger.error({ err, turnId: turn.id }, 'could not read the tools of a turn');
      return answer(
        failure(
          CallStatus.UNAVAILABLE,
          `The tool ${name} cannot be reached right now. Nothing was done; it may work if tried again later.`,
        ),
        null,
        null,
        false,
      );
    }
    if (turn.finished) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
    return { turn, rawName, name, started, t0, trace, operationId, op, tools };
  }

  /**
   * Step 2, check: arguments over a limit, or that cannot be mapped back from the turn's dialect,
   * are refused before anything is recorded as started or sent (the record keeps a short note
   * instead of the payload). A tool that is gone or switched off, and a refusal of the rate limits
   * and breakers (src/guards/call-guard.ts), become the call's early result: recorded, never sent.
   */
  async #check(call: Call, modelArgs: JsonObject): Promise<Checked | CallToolResult> {
    const { turn, name, op, tools, started } = call;
    let checked = checkArguments(modelArgs, this.services.config.toolArguments, name);
    if (!checked.ok)
      return this.#refuse(call, checked.message, storableJson(refusedArgumentsNote(checked)), started);

    // The model wrote its arguments against the turn's dialect: mapped back to canonical ones
    // before the canonical check (in dispatch) and before anything is recorded or sent.
    let args = modelArgs;
    let modelArgsJson: string | null = null;
    let early: CallResult | null = null;
    if (turn.dialect !== 'GENERIC' && op && tools) {
      // Tool search: a found tool's shape is in the dialect's uncapped list.
      const list = turn.search
        ? this.search.fullList(tools, turn.dialect)
        : dialectToolsOf(tools, turn.dialect);
      if (!list.shapes.has(op.id)) {
        early = failure(
          CallStatus.UNAVAILABLE,
          `The tool ${name} cannot be offered to this model right now. Nothing was done; carry on without it.`,
        );
      } else {
        const decoded = decodeArguments(list.shapes.get(op.id) ?? null, modelArgs);
        if (!decoded.ok) {
          return this.#refuse(
            call,
            rejectionMessage(name, [`${decoded.field}: ${decoded.problem}`]),
            storableJsonText(checked.json),
            started,
          );
        }
        if (decoded.changed) {
          modelArgsJson = storableJsonText(checked.json);
          args = decoded.args;
          checked = checkArguments(args, this.services.config.toolArguments, name);
          if (!checked.ok)
            return this.#refuse(
              call,
              checked.message,
              storableJson(refusedArgumentsNote(checked)),
              started,
              modelArgsJson,
            );
        }
      }
    }

    if (!call.operationId) {
      early = turn.builtIns.has(call.rawName)
        ? failure(
            CallStatus.UNAVAILABLE,
            `${name} is a built-in tool; it is handled by the platform, not called through connected tools.`,
          )
        : turn.search
          ? failure(CallStatus.REJECTED, notFoundMessage(name))
          : failure(
              CallStatus.UNAVAILABLE,
              `There is no tool named "${name}" in this turn. Use one of the tools declared at the start of the turn.`,
            );
    } else if (!op && !early) {
      early = failure(
        CallStatus.UNAVAILABLE,
        `The tool ${name} is switched off right now. Nothing was done; tell the customer the team will check, and carry on without it.`,
      );
    }

    // Rate limits and breakers (src/guards/call-guard.ts): a refused call is recorded, sends nothing.
    let permit: Permit | null = null;
    if (early === null) {
      const admitted = this.services.guard.admit(op!, turn.workspaceId, name);
      const admission = admitted instanceof Promise ? await admitted : admitted;
      if (admission.ok) permit = admission;
      else early = admission.result;
    }
    return { args, argsJson: storableJsonText(checked.json), modelArgsJson, early, permit };
  }

  /**
   * Step 3, record: the call's start (seq + CALL_STARTED), and for a WRITE that will be sent its
   * ledger intent. A WRITE's start is written at once (see #writeIntent). A READ goes out at once;
   * its start is held back up to READ_START_HOLD_MS (0: written at once, while the tool works). A
   * READ answered meanwhile is recorded whole, in one statement (#finish); one that takes longer,
   * or sends progress (which needs the seq), gets its start written then.
   */
  #record(call: Call, checked: Checked): StartRecord {
    const { turn, name, op } = call;
    const callId = uuidv7();
    // A WRITE that will be dispatched gets a ledger intent before its request can go out.
    const intentId = op?.risk === 'WRITE' && !checked.early ? uuidv7() : null;
    const forEvent = eventArguments(checked.argsJson);
    const startPayloadJson = startPayload(
      name,
      op,
      forEvent,
      checked.modelArgsJson === null ? null : eventArguments(checked.modelArgsJson),
    );
    const json = storableRecordJson(
      intentId === null
        ? { turn_id: turn.id, call_id: callId }
        : {
            turn_id: turn.id,
            call_id: callId,
            intent_id: intentId,
            connection_id: op!.connection.id,
            operation_id: op!.id,
            operation_key: op!.key,
            declared_name: name,
          },
      intentId === null
        ? { payload: startPayloadJson }
        : { payload: startPayloadJson, arguments: checked.argsJson },
    );
    const item: RecordItem = { json, lockKey: turn.id };
    let startP: Promise<number | null> | null = null;
    const now = (): Promise<number | null> => {
      if (startP === null) {
        startP = this.#starts.run(item).then(seqOf);
        startP.catch(() => undefined); // observed where it is awaited; never an unhandled rejection
      }
      return startP;
    };
    const holdMs = this.services.config.readStartHoldMs;
    let hold: NodeJS.Timeout | null = null;
    if (intentId !== null || holdMs === 0) void now();
    else if (checked.early === null) {
      hold = setTimeout(() => void now(), holdMs);
      hold.unref();
    }
    return { callId, intentId, startPayloadJson, now, written: () => startP !== null, hold };
  }

  /**
   * A WRITE's start and ledger intent must be stored before its request goes out, so no side
   * effect can go unrecorded: the answer when it cannot be (nothing sent), else null.
   */
  async #writeIntent(call: Call, start: StartRecord): Promise<CallToolResult | null> {
    const { turn, name } = call;
    let seq: number | null;
    try {
      seq = await start.now();
    } catch (err) {
      this.services.logger.error(
        { err, turnId: turn.id, name },
        'could not record a tool call; the WRITE call was not made',
      );
      return answer(
        failure(
          CallStatus.UNAVAILABLE,
          `The platform could not record the call to ${name}, so it was not made. Nothing was done; it may work if tried again later.`,
        ),
        null,
        null,
        false,
      );
    }
    if (seq === null) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
    return null;
  }

  /** The call's progress lines, recorded as CALL_PROGRESS events once its start has a seq. */
  #progress(call: Call, start: StartRecord): CallProgress {
    const { turn, name } = call;
    return new CallProgress(
      this.#orm,
      this.services.logger,
      {
        workspaceId: turn.workspaceId,
        assistantId: turn.assistantId,
        conversationId: turn.conversationId,
        turnId: turn.id,
        callId: start.callId,
        name,
      },
      () => start.now().catch(() => null),
      { minIntervalMs: this.services.config.progressMinIntervalMs },
    );
  }

  /**
   * Step 4, dispatch: the request (src/turns/dispatch.ts: the budget, the retry rules, the result
   * cap), unless the check gave an early result. The tool gets exactly the model's arguments
   * (mapped back from the turn's dialect, where it has one); only the records are made storable.
   */
  async #dispatch(
    call: Call,
    checked: Checked,
    progress: CallProgress,
    signal: AbortSignal | undefined,
  ): Promise<CallResult> {
    if (checked.early) return checked.early;
    try {
      return await dispatch(
        this.services,
        checked.permit?.sendOp ?? call.op!, // a call that waited for a slot sends with what is left of its budget
        call.name,
        checked.args,
        (n, scrub) => progress.receive(n, scrub),
        call.trace,
        // Only a READ stops waiting when cancelled: a WRITE already sent runs to its end, recorded.
        call.op!.risk === 'WRITE' ? undefined : signal,
      );
    } catch (err) {
      // A bug of ours must still not break the conversation.
      this.services.logger.error(
        { err, turnId: call.turn.id, name: call.name },
        'tool call failed inside the service',
      );
      return failure(
        CallStatus.UPSTREAM_ERROR,
        `The call to ${call.name} failed inside the platform. Nothing more is known; the team will check.`,
      );
    }
  }

  /** The call is over: its start is no longer held back, and its guard permit reports the outcome. */
  #settle(call: Call, checked: Checked, start: StartRecord, result: CallResult): void {
    if (start.hold !== null) clearTimeout(start.hold);
    if (checked.permit !== null) this.services.guard.report(call.op!, checked.permit, result.status);
  }

  /**
   * Step 5, finish: the TurnCall, a WRITE's ledger outcome and CALL_FINISHED. A call with nothing
   * on record yet is recorded whole in one statement. Otherwise its finish is tried twice; then
   * the runtime is told (recorded: false) and a bounded number of retries continue in the
   * background. A WRITE's intent is already stored: if none of them lands, the ledger sweep
   * closes it as OUTCOME_UNKNOWN.
   */
  async #finish(
    call: Call,
    checked: Checked,
    start: StartRecord,
    progress: CallProgress,
    result: CallResult,
  ): Promise<CallToolResult> {
    const { turn, name } = call;
    const turnId = turn.id;
    const { callId, intentId } = start;
    const durationMs = Math.max(result.durationMs, Math.round(performance.now() - call.t0));
    const isWrite = intentId !== null;
    const finished: FinishedCall = {
      callId,
      turn,
      op: call.op,
      name,
      result,
      message: storableText(result.message),
      durationMs,
      started: call.started,
      trace: call.trace,
      intentId,
      argsJson: checked.argsJson,
      modelArgsJson: checked.modelArgsJson,
    };

    let seq: number | null = null;
    if (!start.written()) {
      // Nothing of the call is on record yet (and no progress was sent): all of it in one statement.
      let rows: Row[] | null = null;
      try {
        rows = await this.#records.run({
          lockKey: turnId,
          json: finishJson(finished, null, progress.record(), start.startPayloadJson),
        });
      } catch (err) {
        // Whatever failed, the call is recorded the usual way below: its start first, so that a
        // finish that cannot be written leaves a CALL_STARTED for the ledger sweep to close.
        this.services.logger.warn({ err }, 'recording a tool call failed');
      }
      if (rows !== null) {
        seq = seqOf(rows);
        // Finished by another instance meanwhile: a READ changed nothing; report the turn as over.
        if (seq === null) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
        result.durationMs = durationMs;
        return answer(result, callId, seq, true);
      }
    }
    try {
      seq = await start.now();
    } catch (err) {
      // The database is unreachable: a READ's result still reaches the model; its record is lost, and logged.
      this.services.logger.error(
        { err, turnId, name, status: result.status },
        'could not record a tool call',
      );
      return answer(result, null, null, false);
    }
    // Finished by another instance meanwhile: a READ changed nothing; report the turn as over.
    if (seq === null) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
    await progress.drain();
    let record: RecordItem = { lockKey: turnId, json: finishJson(finished, seq, progress.record(), null) };
    let outcome = await this.#recordFinish(record);
    if (outcome === 'failed') outcome = await this.#recordFinish(record);
    if (outcome === 'unstorable') {
      // The database refuses this record's values: the same record would fail on every try, and
      // roll back every batch it joined. The call is kept without what the tool and the model sent.
      record = {
        lockKey: turnId,
        json: finishJson(unstorableCall(finished), seq, { lines: [], dropped: 0 }, null),
      };
      outcome = await this.#recordFinish(record);
      if (outcome === 'recorded')
        this.services.logger.warn({ turnId, callId, name }, 'a tool call was recorded without its content');
    }
    const recorded = outcome === 'recorded';
    if (outcome === 'unstorable') {
      this.services.logger.error(
        { turnId, callId, name, status: result.status, write: isWrite },
        'could not record a tool call: the database refuses even its reduced record',
      );
    } else if (outcome === 'failed') {
      this.services.logger.error(
        { turnId, callId, name, status: result.status, write: isWrite },
        'could not record a tool call; retrying in the background',
      );
      this.#recordLater(record, { turnId, callId, name, write: isWrite }, 0);
    }
    result.durationMs = durationMs;
    return answer(result, callId, seq, recorded);
  }

  /**
   * Runs the finish statement: `recorded` once the call is on record (also when an earlier try
   * landed), `unstorable` when the database refuses its values (trying again cannot help,
   * isPermanentServerError), `failed` otherwise.
   */
  async #recordFinish(finish: RecordItem): Promise<'recorded' | 'unstorable' | 'failed'> {
    try {
      await this.#finishes.run(finish);
      return 'recorded';
    } catch (err) {
      // A try whose commit landed but whose answer was lost: the TurnCall is there. (Raw `execute`
      // does not convert driver errors, so the SQLSTATE is checked too: 23505, unique_violation.)
      if (err instanceof UniqueConstraintViolationException || (err as { code?: unknown }).code === '23505')
        return 'recorded';
      this.services.logger.warn({ err }, 'recording a tool call failed');
      return isPermanentServerError(err) ? 'unstorable' : 'failed';
    }
  }

  #recordLater(finish: RecordItem, about: Record<string, unknown>, retry: number): void {
    const delay = this.recordRetryDelaysMs[retry];
    if (delay === undefined) {
      this.services.logger.error(
        about,
        'gave up recording a tool call; a WRITE keeps its ledger intent, which the sweep closes as OUTCOME_UNKNOWN',
      );
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#recordFinish(finish).then((outcome) => {
        if (outcome === 'recorded')
          this.services.logger.warn({ ...about, retry: retry + 1 }, 'a tool call was recorded late');
        else if (outcome === 'failed' && !this.#closed) this.#recordLater(finish, about, retry + 1);
      });
    }, delay);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Stops the background retries (shutdown); the ledger sweep closes what they leave. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  /** Records a call whose arguments broke a limit, and gives the model a REJECTED result. */
  async #refuse(
    call: Call,
    message: string,
    /** What the record keeps as the call's arguments (storable JSON text). */
    argumentsJson: string,
    started: Date,
    modelArgsJson: string | null = null,
  ): Promise<CallToolResult> {
    const { turn, name, op } = call;
    const result = failure(CallStatus.REJECTED, message);
    const callId = uuidv7();
    try {
      const rows = await this.#orm.em.getConnection().execute<{ call_seq: number }[]>(CALL_REFUSED_SQL, [
        turn.id,
        callId,
        op?.key ?? null,
        op?.id ?? null,
        name,
        argumentsJson,
        result.status,
        result.message,
        0,
        op?.risk ?? null,
        started,
        modelArgsJson,
        storableJson({
          name,
          operationKey: op?.key ?? null,
          risk: op?.risk ?? null,
          status: result.status,
          durationMs: 0,
          attempts: 0,
          message: result.message,
          result: eventResult(result),
        }),
      ]);
      const seq = rows[0]?.call_seq ?? null;
      if (seq === null) return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
      return answer(result, callId, seq, true);
    } catch (err) {
      this.services.logger.error({ err, turnId: turn.id, name }, 'could not record a refused tool call');
      return answer(result, null, null, false);
    }
  }
}
