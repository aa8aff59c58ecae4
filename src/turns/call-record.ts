/**
 * The call path's records, batched (I/O): the group commits of starts, finishes and quick READs'
 * whole records (src/db/group-commit.ts, statements in src/turns/call-sql.ts), a finish's tries
 * and its background retries, and the record of a call refused before anything was sent. Every
 * wait here is on the injected clock (TurnDeps.clock), so tests move through retries by hand.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { ClockTimer } from '../clock.js';
import { GroupCommit, isPermanentServerError, jsonBatchIo, type Row } from '../db/group-commit.js';
import type { RunPrepared } from '../db/prepared.js';
import { uuidv7 } from '../db/ids.js';
import { answer, turnFinished, type CallToolResult, type TurnState } from './call-answer.js';
import {
  CALL_FINISH_SQL,
  CALL_RECORD_ASYNC_SQL,
  CALL_RECORD_SQL,
  CALL_REFUSED_SQL,
  CALL_START_SQL,
  finishJson,
  seqOf,
  unstorableCall,
  type FinishedCall,
  type RecordItem,
} from './call-sql.js';
import type { TurnDeps } from './deps.js';
import { eventResult } from './event-payload.js';
import type { ProgressRecord } from './progress.js';
import { failure } from './result.js';
import { storableJson } from './storable.js';
import type { CachedOperation } from './tool-cache.js';
import { CallStatus } from './call-status.js';

/**
 * Background retries of a call's record after the two immediate tries failed: about 30 s in all,
 * well inside LEDGER_SWEEP_AFTER_MS, so the sweep never races a retry that could still land.
 */
export const DEFAULT_RECORD_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000];

/** How one try of a finish went: on record, refused for its values (for good), or failed. */
type FinishOutcome = 'recorded' | 'unstorable' | 'failed';

/** Which call a refused record is of (a part of the call path's Call). */
export interface RefusedCall {
  turn: TurnState;
  name: string;
  op: CachedOperation | undefined;
  started: Date;
}

export class CallRecords {
  readonly #timers = new Set<ClockTimer>();
  #closed = false;
  /** callTool's records, group-committed under load (src/db/group-commit.ts): starts and finishes. */
  readonly #starts: GroupCommit<RecordItem>;
  readonly #finishes: GroupCommit<RecordItem>;
  /** READs answered within READ_START_HOLD_MS: start and finish as one record. */
  readonly #wholes: GroupCommit<RecordItem>;

  constructor(
    private readonly services: TurnDeps,
    run: RunPrepared,
    private readonly retryDelaysMs: readonly number[] = DEFAULT_RECORD_RETRY_DELAYS_MS,
  ) {
    const json = (item: RecordItem) => item.json;
    const batch = services.config.recordBatch;
    this.#starts = new GroupCommit(jsonBatchIo(run, CALL_START_SQL, json), batch);
    this.#finishes = new GroupCommit(jsonBatchIo(run, CALL_FINISH_SQL, json), batch);
    const whole = services.config.readRecordCommit === 'sync' ? CALL_RECORD_SQL : CALL_RECORD_ASYNC_SQL;
    this.#wholes = new GroupCommit(jsonBatchIo(run, whole, json), batch);
  }

  /** How the records were committed so far (batches of several records; for tests and the bench). */
  get stats(): Readonly<GroupCommit<RecordItem>['stats']> {
    const out = { batches: 0, batched: 0, fallbacks: 0 };
    for (const { stats } of [this.#starts, this.#finishes, this.#wholes]) {
      out.batches += stats.batches;
      out.batched += stats.batched;
      out.fallbacks += stats.fallbacks;
    }
    return out;
  }

  /** Writes a call's start (CALL_START_SQL): its seq, or null when its turn had finished. */
  start(item: RecordItem): Promise<number | null> {
    return this.#starts.run(item).then(seqOf);
  }

  /** Writes a quick READ whole, start and finish (CALL_RECORD_SQL): its rows. */
  whole(item: RecordItem): Promise<Row[]> {
    return this.#wholes.run(item);
  }

  /**
   * Writes a call's finish, whose start has seq `seq`: tried twice, then (when the database refuses
   * its values) once more without its content; still failing, retried in the background while the
   * runtime is told. True once the call is on record.
   */
  async finish(finished: FinishedCall, seq: number, progress: ProgressRecord): Promise<boolean> {
    const { turn, callId, name, result } = finished;
    const turnId = turn.id;
    let record: RecordItem = { lockKey: turnId, json: finishJson(finished, seq, progress, null) };
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
    const write = finished.intentId !== null;
    if (outcome === 'unstorable') {
      this.services.logger.error(
        { turnId, callId, name, status: result.status, write },
        'could not record a tool call: the database refuses even its reduced record',
      );
    } else if (outcome === 'failed') {
      this.services.logger.error(
        { turnId, callId, name, status: result.status, write },
        'could not record a tool call; retrying in the background',
      );
      this.#recordLater(record, { turnId, callId, name, write }, 0);
    }
    return outcome === 'recorded';
  }

  /**
   * Runs the finish statement: `recorded` once the call is on record (also when an earlier try
   * landed), `unstorable` when the database refuses its values (trying again cannot help,
   * isPermanentServerError), `failed` otherwise.
   */
  async #recordFinish(finish: RecordItem): Promise<FinishOutcome> {
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
    const delay = this.retryDelaysMs[retry];
    if (delay === undefined) {
      this.services.logger.error(
        about,
        'gave up recording a tool call; a WRITE keeps its ledger intent, which the sweep closes as OUTCOME_UNKNOWN',
      );
      return;
    }
    const clock = this.services.clock;
    const timer = clock.setTimeout(() => {
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
    for (const timer of this.#timers) this.services.clock.clearTimeout(timer);
    this.#timers.clear();
  }

  /** Records a call whose arguments broke a limit, and gives the model a REJECTED result. */
  async refused(
    call: RefusedCall,
    message: string,
    /** What the record keeps as the call's arguments (storable JSON text). */
    argumentsJson: string,
    modelArgsJson: string | null = null,
  ): Promise<CallToolResult> {
    const { turn, name, op } = call;
    const result = failure(CallStatus.REJECTED, message);
    const callId = uuidv7();
    try {
      const rows = await this.services.orm.em
        .getConnection()
        .execute<{ call_seq: number }[]>(CALL_REFUSED_SQL, [
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
          call.started,
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
      if (seq === null) return turnFinished();
      return answer(result, callId, seq, true);
    } catch (err) {
      this.services.logger.error({ err, turnId: turn.id, name }, 'could not record a refused tool call');
      return answer(result, null, null, false);
    }
  }
}
