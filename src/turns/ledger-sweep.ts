/**
 * The ledger sweep (I/O): closes the intents of WRITE calls whose outcome never arrived.
 *
 * An intent without an outcome older than `afterMs` (longer than any call can take, with its
 * retries and the background retries of its record) belongs to a call whose result was never
 * stored: the database failed during the call, or the service died. The sweep gives it an
 * OUTCOME_UNKNOWN outcome, and, when its TurnCall is missing too, an OUTCOME_UNKNOWN TurnCall and
 * the CALL_FINISHED event that closes its CALL_STARTED, all in one statement. It runs once at start
 * and then every `everyMs`; several instances may run it at once (`on conflict do nothing`).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { EVENTS_CHANNEL } from '../db/notifier.js';
import type { Logger } from '../logger.js';

export const OUTCOME_UNKNOWN_MESSAGE =
  'The outcome of this call was never recorded (the platform lost its database or stopped during the call). The tool may or may not have acted; check its own records.';

/** Most intents closed per statement; the next run takes the rest. */
const BATCH = 500;

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
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select t.workspace_id, t.assistant_id, t.conversation_id, t.id, c.id, 'CALL_FINISHED',
         jsonb_build_object('seq', c.seq, 'name', c.declared_name, 'operationKey', c.operation_key, 'risk', 'WRITE',
                            'status', 'OUTCOME_UNKNOWN', 'attempts', 0, 'message', ?::text),
         now()
  from c join turn t on t.id = c.turn_id
  returning seq, workspace_id
), n as (
  select pg_notify('${EVENTS_CHANNEL}', json_build_object('seq', e.seq, 'workspaceId', e.workspace_id)::text) from e
)
select (select count(*) from o)::int as closed, (select count(*) from c)::int as calls, (select count(*) from n)::int as events`;

export interface LedgerSweepOptions {
  /** Intents older than this without an outcome are closed. */
  afterMs: number;
  /** How often the sweep runs. */
  everyMs: number;
}

export class LedgerSweep {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;

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
    return closed;
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
