/**
 * Which Turn an MCP request records its calls on (I/O). Each conversation (a session, or a token
 * and conversation id: src/mcp-server/protocol.ts conversationOf) has one open Turn of the
 * assistant at a time; a Turn with no call for MCP_TURN_IDLE_MS (10 minutes) is finished, and the
 * conversation's next call opens a new one. Any instance finds the open Turn in PostgreSQL, so a
 * session continues on another instance; each instance remembers the conversations it served
 * last (MCP_CONVERSATIONS_MAX), so a call costs no lookup. Idleness is judged on the injected
 * clock (src/clock.ts), in memory and in SQL alike; only the sweep's pacing is real time.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { dateOf, systemClock, type Clock } from '../clock.js';
import { eventNotifySql } from '../db/notifier.js';
import type { Logger } from '../logger.js';
import type { TurnService } from '../turns/turn.service.js';

/** The open Turn of a conversation whose last call (or start) is recent enough. */
const OPEN_TURN_SQL = `
select t.id from turn t
where t.assistant_id = ? and t.conversation_id = ? and t.finished_at is null
  and greatest(t.started_at, (select max(c.started_at) from turn_call c where c.turn_id = t.id)) > ?::timestamptz - make_interval(secs => ?)
order by t.started_at desc limit 1`;

/**
 * Finishes the MCP Turns with no call for the idle time (TURN_FINISHED, as finishTurn). Bounded per
 * sweep; `for update skip locked`, so instances sweeping at once never finish a Turn twice.
 */
const FINISH_IDLE_SQL = `
with idle as (
  select t.id from turn t
  where t.finished_at is null and t.conversation_id like 'mcp:%'
    and t.started_at < ?::timestamptz - make_interval(secs => ?)
    and not exists (select 1 from turn_call c where c.turn_id = t.id and c.started_at > ?::timestamptz - make_interval(secs => ?))
  order by t.started_at limit 500
  for update skip locked
), t as (
  update turn set finished_at = now() where id in (select id from idle) and finished_at is null
  returning id, workspace_id, assistant_id, conversation_id, call_seq
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, id, null, 'TURN_FINISHED',
         jsonb_build_object('calls', call_seq, 'idle', true), now() from t
  returning seq, workspace_id
)
select e.seq, ${eventNotifySql('e')} from e`;

interface Remembered {
  turnId: string;
  /** The clock's monotonic time of its last call here. */
  lastAt: number;
}

export class McpConversations {
  readonly #open = new Map<string, Remembered>();
  /** Conversations whose Turn is being opened now: concurrent first calls share one Turn. */
  readonly #opening = new Map<string, Promise<string>>();
  #sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly orm: MikroORM,
    private readonly turns: TurnService,
    private readonly logger: Logger,
    private readonly limits: { conversationsMax: number; turnIdleMs: number },
    /** Decides when a Turn is idle (src/clock.ts); the sweep's pacing stays on real time. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Finishes idle Turns every minute (or every idle time, when that is shorter). */
  start(): void {
    const every = Math.min(60_000, this.limits.turnIdleMs);
    this.#sweep = setInterval(
      () =>
        void this.finishIdle().catch((err: unknown) =>
          this.logger.warn({ err }, 'finishing idle MCP turns failed'),
        ),
      every,
    );
    this.#sweep.unref();
  }

  close(): void {
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
  }

  /** Finishes the MCP Turns idle for the idle time; how many. */
  async finishIdle(): Promise<number> {
    const secs = this.limits.turnIdleMs / 1000;
    const now = dateOf(this.clock);
    const rows = await this.orm.em
      .getConnection()
      .execute<unknown[]>(FINISH_IDLE_SQL, [now, secs, now, secs]);
    return rows.length;
  }

  /** The conversation's open Turn, opened now when it has none (or its last one went idle). */
  async turnOf(principal: Principal, assistantId: string, conversationId: string): Promise<string> {
    const key = `${assistantId} ${conversationId}`;
    const now = this.clock.monotonic();
    const hit = this.#open.get(key);
    if (hit && now - hit.lastAt < this.limits.turnIdleMs) {
      hit.lastAt = now;
      return hit.turnId;
    }
    let opening = this.#opening.get(key);
    if (!opening) {
      opening = this.#find(principal, assistantId, conversationId).finally(() => this.#opening.delete(key));
      this.#opening.set(key, opening);
    }
    const turnId = await opening;
    this.#remember(key, { turnId, lastAt: this.clock.monotonic() });
    return turnId;
  }

  /** The conversation's Turn ended (finished elsewhere): the next call looks it up again. */
  forget(assistantId: string, conversationId: string): void {
    this.#open.delete(`${assistantId} ${conversationId}`);
  }

  async #find(principal: Principal, assistantId: string, conversationId: string): Promise<string> {
    const rows = await this.orm.em
      .getConnection()
      .execute<{ id: string }[]>(OPEN_TURN_SQL, [
        assistantId,
        conversationId,
        dateOf(this.clock),
        this.limits.turnIdleMs / 1000,
      ]);
    if (rows[0]) return rows[0].id;
    const begun = await this.turns.begin(principal, assistantId, conversationId, 'GENERIC', null, {
      door: 'MCP',
      token: principal.label,
    });
    return begun.turnId;
  }

  #remember(key: string, value: Remembered): void {
    this.#open.delete(key);
    if (this.#open.size >= this.limits.conversationsMax) this.#open.delete(this.#open.keys().next().value!);
    this.#open.set(key, value);
  }
}
