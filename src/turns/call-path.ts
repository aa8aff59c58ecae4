/**
 * The call path (I/O), shared by both front doors: GraphQL `callTool` (src/turns/turn.resolver.ts,
 * through TurnService.call) and the MCP endpoint (src/mcp-server/). A customer is waiting on every
 * call, so it is short and never fails loudly: one statement before the request (seq +
 * CALL_STARTED, and a WRITE's ledger intent), one after (TurnCall, the ledger outcome,
 * CALL_FINISHED), each atomic; a quick READ is recorded whole in one statement. Every failure is
 * a result for the model. Discovery is never called from here.
 *
 * This module is the flow, step by step; the checks are in call-check.ts, the statements and
 * their JSON in call-sql.ts, their batching and retries in call-record.ts. Time is read and
 * waited on only through TurnDeps.clock (src/clock.ts).
 */
import type { TraceContext } from './trace.js';
import { dateOf, type ClockTimer } from '../clock.js';
import type { Row } from '../db/group-commit.js';
import type { RunPrepared } from '../db/prepared.js';
import { uuidv7 } from '../db/ids.js';
import type { JsonObject } from '../operations/types.js';
import type { TurnDeps } from './deps.js';
import { resolveDeclaredName } from './declare.js';
import { SEARCH_TOOLS_NAME } from './search/declare-search.js';
import type { ToolSearch } from './search/tool-search.js';
import { answer, turnFinished, type CallLive, type CallToolResult, type TurnState } from './call-answer.js';
import { checkCall, type Call, type Checked } from './call-check.js';
import { CallProgress } from './call-progress.js';
import { CallRecords, DEFAULT_RECORD_RETRY_DELAYS_MS } from './call-record.js';
import {
  finishJson,
  seqOf,
  startJson,
  startPayload,
  type FinishedCall,
  type RecordItem,
} from './call-sql.js';
import { dispatch } from './dispatch.js';
import { eventArguments } from './event-payload.js';
import { failure, type CallResult } from './result.js';
import { fitText, RECORD_COLUMN_LIMITS, storableText } from './storable.js';
import type { AssistantTools, CachedOperation, ToolCache } from './tool-cache.js';
import { CallStatus } from './call-status.js';

export { FINISHED_MESSAGE, type CallLive, type CallToolResult, type TurnState } from './call-answer.js';

/** The most of a model-given tool name that goes into records and messages (its column's limit). */
const DECLARED_NAME_LIMIT = RECORD_COLUMN_LIMITS.declared_name!;

/** The call's start record, written once: at once (a WRITE, or no hold), held back, or never. */
interface StartRecord {
  callId: string;
  intentId: string | null;
  startPayloadJson: string;
  /** Writes the start (once): its seq, or null when the turn had finished. */
  now: () => Promise<number | null>;
  /** Whether the start was written (or is being written). */
  written: () => boolean;
  /** The hold of a READ's start (READ_START_HOLD_MS), on the injected clock; null: none. */
  hold: ClockTimer | null;
}

/**
 * The call path (I/O) both front doors use: GraphQL `callTool` and the MCP endpoint. A call goes
 * through five steps, each its own method: resolve (the name and its operation, from the cache),
 * check (the arguments, the dialect, both gates, the guards: call-check.ts), record (the start,
 * and a WRITE's ledger intent before its request), dispatch (the request, with progress), finish
 * (the TurnCall, the ledger outcome, CALL_FINISHED). Every failure is a result for the model.
 */
export class CallPath {
  /** The call records' statements, batches and retries. */
  readonly #records: CallRecords;

  constructor(
    private readonly services: TurnDeps,
    private readonly cache: ToolCache,
    run: RunPrepared,
    /** Tool search (issue 31): answers `search_tools` and knows the tools a turn found. */
    private readonly search: ToolSearch,
    recordRetryDelaysMs: readonly number[] = DEFAULT_RECORD_RETRY_DELAYS_MS,
  ) {
    this.#records = new CallRecords(services, run, recordRetryDelaysMs);
  }

  /** How the records were committed so far (batches of several records; for tests and the bench). */
  get groupCommitStats(): CallRecords['stats'] {
    return this.#records.stats;
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
      if (turn.finished) return turnFinished();
      const tools = await this.cache.get(turn.assistantId).catch(() => null);
      const found = await this.search.search(turn, tools, modelArgs);
      return answer(found.result, found.callId, found.seq, found.recorded);
    }
    const resolved = await this.#resolve(turn, rawName, trace, seen);
    if (!('turn' in resolved)) return resolved;
    const call = resolved;
    const checked = await checkCall(
      { services: this.services, records: this.#records, search: this.search },
      call,
      modelArgs,
    );
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
    const started = dateOf(this.services.clock);
    const t0 = this.services.clock.monotonic();
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
    if (turn.finished) return turnFinished();
    return { turn, rawName, name, started, t0, trace, operationId, op, tools };
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
    const item: RecordItem = {
      json: startJson(
        turn.id,
        callId,
        intentId === null ? null : { intentId, op: op!, name },
        startPayloadJson,
        checked.argsJson,
      ),
      lockKey: turn.id,
    };
    let startP: Promise<number | null> | null = null;
    const now = (): Promise<number | null> => {
      if (startP === null) {
        startP = this.#records.start(item);
        startP.catch(() => undefined); // observed where it is awaited; never an unhandled rejection
      }
      return startP;
    };
    const holdMs = this.services.config.readStartHoldMs;
    let hold: ClockTimer | null = null;
    if (intentId !== null || holdMs === 0) void now();
    else if (checked.early === null) {
      hold = this.services.clock.setTimeout(() => void now(), holdMs);
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
    if (seq === null) return turnFinished();
    return null;
  }

  /** The call's progress lines, recorded as CALL_PROGRESS events once its start has a seq. */
  #progress(call: Call, start: StartRecord): CallProgress {
    const { turn, name } = call;
    return new CallProgress(
      this.services.orm,
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
      () => this.services.clock.monotonic(),
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
    if (start.hold !== null) this.services.clock.clearTimeout(start.hold);
    if (checked.permit !== null) this.services.guard.report(call.op!, checked.permit, result.status);
  }

  /**
   * Step 5, finish: the TurnCall, a WRITE's ledger outcome and CALL_FINISHED. A call with nothing
   * on record yet is recorded whole in one statement. Otherwise its finish is tried twice; then
   * the runtime is told (recorded: false) and a bounded number of retries continue in the
   * background (call-record.ts). A WRITE's intent is already stored: if none of them lands, the
   * ledger sweep closes it as OUTCOME_UNKNOWN.
   */
  async #finish(
    call: Call,
    checked: Checked,
    start: StartRecord,
    progress: CallProgress,
    result: CallResult,
  ): Promise<CallToolResult> {
    const { turn, name } = call;
    const durationMs = Math.max(result.durationMs, Math.round(this.services.clock.monotonic() - call.t0));
    const finished: FinishedCall = {
      callId: start.callId,
      turn,
      op: call.op,
      name,
      result,
      message: storableText(result.message),
      durationMs,
      started: call.started,
      trace: call.trace,
      intentId: start.intentId,
      argsJson: checked.argsJson,
      modelArgsJson: checked.modelArgsJson,
    };
    // Nothing of the call is on record yet (and no progress was sent): all of it in one statement.
    const whole = start.written() ? null : await this.#recordWhole(finished, start, progress);
    if (whole === 'finished') return turnFinished();
    if (whole !== null) {
      result.durationMs = durationMs;
      return answer(result, start.callId, whole, true);
    }
    let seq: number | null;
    try {
      seq = await start.now();
    } catch (err) {
      // The database is unreachable: a READ's result still reaches the model; its record is lost, and logged.
      this.services.logger.error(
        { err, turnId: turn.id, name, status: result.status },
        'could not record a tool call',
      );
      return answer(result, null, null, false);
    }
    // Finished by another instance meanwhile: a READ changed nothing; report the turn as over.
    if (seq === null) return turnFinished();
    await progress.drain();
    const recorded = await this.#records.finish(finished, seq, progress.record());
    result.durationMs = durationMs;
    return answer(result, start.callId, seq, recorded);
  }

  /**
   * A call with nothing on record yet, recorded whole: its seq, `finished` when its turn finished
   * meanwhile (on another instance: a READ changed nothing), null when the statement failed.
   */
  async #recordWhole(
    finished: FinishedCall,
    start: StartRecord,
    progress: CallProgress,
  ): Promise<number | 'finished' | null> {
    let rows: Row[];
    try {
      rows = await this.#records.whole({
        lockKey: finished.turn.id,
        json: finishJson(finished, null, progress.record(), start.startPayloadJson),
      });
    } catch (err) {
      // Whatever failed, the call is recorded the usual way: its start first, so that a finish
      // that cannot be written leaves a CALL_STARTED for the ledger sweep to close.
      this.services.logger.warn({ err }, 'recording a tool call failed');
      return null;
    }
    return seqOf(rows) ?? 'finished';
  }

  /** Stops the background retries of records (shutdown); the ledger sweep closes what they leave. */
  close(): void {
    this.#records.close();
  }
}
