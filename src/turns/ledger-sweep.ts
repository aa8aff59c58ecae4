/**
 * The ledger sweep (I/O): closes the intents of WRITE calls whose outcome never arrived.
 *
 * An intent without an outcome older than `afterMs` (longer than any call can take, with its
 * retries and the background retries of its record) belongs to a call whose result was never
 * stored: the database failed during the call, or the service died. The sweep gives it an
 * OUTCOME_UNKNOWN outcome, and, when its TurnCall is missing too, an OUTCOME_UNKNOWN TurnCall and
 * the CALL_FINISHED event that closes its CALL_STARTED, all in one statement. It runs once at start
 * and then every `everyMs`; several instances may run it at once (`on conflict do nothing`).
 *
 * Then it closes the other calls whose record never came (a READ whose finish statement failed
 * during a database outage): a CALL_STARTED as old, with no TurnCall, no CALL_FINISHED and no ledger
 * intent, gets an OUTCOME_UNKNOWN TurnCall built from the event and the CALL_FINISHED that closes
 * it. Events are read forward from a low-water mark kept in memory (a chunk of `turn_event` by
 * primary key at a time), so a run reads only the events since the last one, not the whole table.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { eventSignalSql } from '../db/notifier.js';
import type { Logger } from '../logger.js';

export const OUTCOME_UNKNOWN_MESSAGE =
  'The outcome of this call was never recorded (the platform lost its database or stopped during the call). The tool may or may not have acted; check its own records.';

export const CALL_OUTCOME_UNKNOWN_MESSAGE =
  'The result of this call was never recorded (the platform lost its database or stopped during the call).';

/** Most intents (or calls) closed per statement; the next run takes the rest. */
const BATCH = 500;
/** Events read per statement of the call sweep; a run reads several chunks, for at most CHUNKS_PER_RUN. */
const CHUNK = 50_000;
const CHUNKS_PER_RUN = 20;

/**
 * The CTEs that give each TurnCall `c` just written its OUTCOME_UNKNOWN CALL_FINISHED event (one
 * `?`: the message) and signal the debugger. `risk` is the SQL of the event's risk.
 */
function closingEvents(risk: string): string {
  return `), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select t.workspace_id, t.assistant_id, t.conversation_id, t.id, c.id, 'CALL_FINISHED',
         jsonb_build_object('seq', c.seq, 'name', c.declared_name, 'operationKey', c.operation_key, 'risk', ${risk},
                            'status', 'OUTCOME_UNKNOWN', 'attempts', 0, 'message', ?::text),
         now()
  from c join turn t on t.id = c.turn_id
  returning seq, workspace_id
), n as (
  select ${eventSignalSql('e')} from e
)`;
}

const SWEEP_SQL = `
with open as (
  select l.id, l.workspace_id, l.assistant_id, l.turn_id, l.turn_call_id, l.operation_id, l.operation_key,
         l.arguments, l.call_seq, l.declared_name, l.created_at
  from ledger_entry l
  where l.status = 'RUNNING' and l.created_at < now() - make_interval(secs => ?::double precision / 1000)
    and not exists (select 1 from ledger_outcome o where o.ledger_entry_id = l.id)
  order by l.created_at
  limit ${BATCH}
), o as (
  insert into ledger_outcome (id, ledger_entry_id, workspace_id, status, attempts, message, closed_by, created_at)
  select gen_random_uuid(), id, workspace_id, 'OUTCOME_UNKNOWN', 0, ?, 'SWEEP', now() from open
  on conflict (ledger_entry_id) do nothing
  returning ledger_entry_id
), c as (
  insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
                         status, message, attempts, duration_ms, risk, started_at, finished_at)
  select open.turn_call_id, open.turn_id, open.workspace_id, open.call_seq, open.operation_key,
         (select id from operation where id = open.operation_id), coalesce(open.declared_name, open.operation_key),
         open.arguments, 'OUTCOME_UNKNOWN', ?, 0, null, 'WRITE', open.created_at, now()
  from open join o on o.ledger_entry_id = open.id
  where open.call_seq is not null and exists (select 1 from turn where turn.id = open.turn_id)
    and not exists (select 1 from turn_call tc where tc.id = open.turn_call_id)
  on conflict do nothing
  returning id, turn_id, seq, declared_name, operation_key
${closingEvents("'WRITE'")}
select (select count(*) from o)::int as closed, (select count(*) from c)::int as calls, (select count(*) from n)::int as events`;

const CALL_SWEEP_SQL = `
with chunk as (
  select e.seq, e.type, e.created_at, e.call_id, e.turn_id, e.payload
  from turn_event e
  where e.seq > ?::bigint and e.seq <= ?::bigint
), open as (
  select * from chunk
  where chunk.type = 'CALL_STARTED' and chunk.call_id is not null
    and chunk.created_at < now() - make_interval(secs => ?::double precision / 1000)
    and not exists (select 1 from turn_call tc where tc.id = chunk.call_id)
    and not exists (select 1 from turn_event f where f.call_id = chunk.call_id and f.type = 'CALL_FINISHED'
                    and f.created_at >= chunk.created_at - interval '1 day')
    and not exists (select 1 from ledger_entry l where l.turn_call_id = chunk.call_id)
    and exists (select 1 from turn where turn.id = chunk.turn_id)
  order by chunk.seq
  limit ${BATCH}
), c as (
  insert into turn_call (id, turn_id, workspace_id, seq, operation_key, operation_id, declared_name, arguments,
                         status, message, attempts, duration_ms, risk, started_at, finished_at)
  select open.call_id, open.turn_id, t.workspace_id, (open.payload->>'seq')::int, open.payload->>'operationKey', null,
         left(coalesce(open.payload->>'name', 'unknown'), 200),
         coalesce(nullif(open.payload->'arguments', 'null'::jsonb), '{"_argumentsNotRecorded": true}'::jsonb),
         'OUTCOME_UNKNOWN', ?, 0, null,
         case when open.payload->>'risk' in ('READ', 'WRITE') then open.payload->>'risk' end,
         open.created_at, now()
  from open join turn t on t.id = open.turn_id
  where open.payload->>'seq' ~ '^[0-9]{1,9}$'
  on conflict do nothing
  returning id, turn_id, seq, declared_name, operation_key, risk
${closingEvents('c.risk')}
select (select count(*) from c)::int as calls, (select count(*) from n)::int as events,
       (select count(*) from open)::int as due,
       (select max(seq) from chunk)::text as "lastSeq",
       (select min(seq) from chunk
         where created_at >= now() - make_interval(secs => ?::double precision / 1000))::text as "firstRecent"`;

/**
 * The call sweep's new low-water mark (pure): every event up to it is settled. It stops before the
 * first event too recent to be due, and does not move while a batch was full (more may be due).
 */
export function nextCallMark(
  mark: bigint,
  row: { due: number; lastSeq: string | null; firstRecent: string | null },
  batch = BATCH,
): bigint {
  if (row.due >= batch) return mark;
  if (row.firstRecent !== null)
    return BigInt(row.firstRecent) - 1n > mark ? BigInt(row.firstRecent) - 1n : mark;
  if (row.lastSeq !== null) return BigInt(row.lastSeq) > mark ? BigInt(row.lastSeq) : mark;
  return mark;
}

export interface LedgerSweepOptions {
  /** Intents older than this without an outcome are closed. */
  afterMs: number;
  /** How often the sweep runs. */
  everyMs: number;
}

export class LedgerSweep {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;
  /** Every turn event up to this seq is settled (its call recorded, or not due yet was never the case). */
  #callMark = 0n;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly options: LedgerSweepOptions,
  ) {}

  /** Closes the intents that are due; returns how many it closed. */
  async runOnce(): Promise<number> {
    const rows = await this.orm.em
      .getConnection()
      .execute<{ closed: number; calls: number }[]>(SWEEP_SQL, [
        this.options.afterMs,
        OUTCOME_UNKNOWN_MESSAGE,
        OUTCOME_UNKNOWN_MESSAGE,
        OUTCOME_UNKNOWN_MESSAGE,
      ]);
    const closed = rows[0]?.closed ?? 0;
    if (closed > 0) {
      this.logger.warn(
        { closed, callsRecorded: rows[0]?.calls ?? 0 },
        'ledger intents without an outcome closed as OUTCOME_UNKNOWN',
      );
    }
    // After the intents, so a WRITE gets the ledger's outcome rather than a bare call record.
    const calls = await this.closeUnrecordedCalls();
    if (calls > 0)
      this.logger.warn({ calls }, 'calls whose result was never recorded closed as OUTCOME_UNKNOWN');
    return closed;
  }

  /** Closes calls left with a CALL_STARTED and nothing else; returns how many. */
  async closeUnrecordedCalls(): Promise<number> {
    let total = 0;
    for (let i = 0; i < CHUNKS_PER_RUN; i++) {
      const mark = this.#callMark;
      const rows = await this.orm.em
        .getConnection()
        .execute<{ calls: number; due: number; lastSeq: string | null; firstRecent: string | null }[]>(
          CALL_SWEEP_SQL,
          [
            mark.toString(),
            (mark + BigInt(CHUNK)).toString(),
            this.options.afterMs,
            CALL_OUTCOME_UNKNOWN_MESSAGE,
            CALL_OUTCOME_UNKNOWN_MESSAGE,
            this.options.afterMs,
          ],
        );
      const row = rows[0]!;
      total += row.calls;
      this.#callMark = nextCallMark(mark, row);
      // Go on only while whole chunks of settled events were passed (there may be more behind).
      if (row.due >= BATCH) continue;
      if (this.#callMark !== mark + BigInt(CHUNK)) break;
    }
    return total;
  }

  /** Runs every `everyMs` (the start's own run is `runOnce`); a failed run is logged and retried at the next tick. */
  start(): void {
    const tick = (): void => {
      this.#running = this.runOnce()
        .catch((err: unknown) => this.logger.error({ err }, 'the ledger sweep failed'))
        .finally(() => {
          this.#running = null;
        });
    };
    this.#timer = setInterval(tick, this.options.everyMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
