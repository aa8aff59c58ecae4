/**
 * The live turn debugger's event stream (I/O).
 *
 * Events are rows of `turn_event`, numbered by a global sequence. A NOTIFY carries only the seq
 * and the workspace; each instance that has subscribers for that workspace reads the rows once
 * and fans them out. A subscriber that gives `afterSeq` first gets every stored event after it
 * (replayed from the database), then the live ones, with no gap and no duplicate: live events are
 * buffered during the replay and de-duplicated by seq.
 *
 * Whenever the LISTEN connection is replaced (a dropped session, a failover, a missed heartbeat or
 * an event-loop stall: the notifier's `reset`), signals may have been missed. Each live
 * subscription then catches up: once the new connection listens, it replays from the last event
 * it had delivered before the reset (or from where it started), skipping what it already gave, so
 * the gap is filled with no duplicate, and it stays open.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EventSignal, Notifier } from '../db/notifier.js';
import { fromSqlTimestamp } from '../db/timestamps.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { JsonObject } from '../operations/types.js';
import type { TurnEventType } from './turn-event.entity.js';

/**
 * A signalled event was written moments before its NOTIFY; reading it by seq with this bound on
 * `created_at` (a day, far beyond any clock skew) keeps the read to the newest daily partitions.
 */
const SIGNALLED_EVENT_MAX_AGE_MS = 86_400_000;
/** Stored events read per query during a replay: what one subscription holds at most while replaying. */
export const DEFAULT_REPLAY_PAGE = 200;
/** Stored events one subscription replays before it is told to resubscribe from where it got to. */
export const DEFAULT_REPLAY_MAX_EVENTS = 5_000;

export interface TurnEventHubOptions {
  replayPage?: number;
  replayMaxEvents?: number;
}
/** A subscriber that falls this far behind is closed rather than allowed to grow without bound. */
export const DEFAULT_MAX_QUEUE = 10_000;

export interface TurnEventRecord {
  seq: number;
  workspaceId: string;
  assistantId: string;
  conversationId: string;
  turnId: string;
  callId: string | null;
  type: TurnEventType;
  payload: JsonObject;
  createdAt: Date;
}

export interface EventFilter {
  /** Null: every workspace (staff only). */
  workspaceId: string | null;
  assistantId: string | null;
  conversationId: string | null;
}

interface Subscriber {
  filter: EventFilter;
  push(event: TurnEventRecord): void;
  /** The LISTEN connection was replaced: signals may have been missed since. */
  reset(): void;
  /** The events channel is LISTENed for it: every event committed from now on reaches it. */
  live: boolean;
}

interface Row {
  seq: string | number;
  workspace_id: string;
  assistant_id: string;
  conversation_id: string;
  turn_id: string;
  call_id: string | null;
  type: TurnEventType;
  payload: JsonObject;
  /** Text: raw SQL gets timestamps as strings (see db/timestamps.ts). */
  created_at: string | Date;
}

function toRecord(row: Row): TurnEventRecord {
  return {
    seq: Number(row.seq),
    workspaceId: row.workspace_id,
    assistantId: row.assistant_id,
    conversationId: row.conversation_id,
    turnId: row.turn_id,
    callId: row.call_id,
    type: row.type,
    payload: row.payload,
    createdAt: fromSqlTimestamp(row.created_at),
  };
}

function matches(filter: EventFilter, e: TurnEventRecord): boolean {
  return (
    (filter.workspaceId === null || filter.workspaceId === e.workspaceId) &&
    (filter.assistantId === null || filter.assistantId === e.assistantId) &&
    (filter.conversationId === null || filter.conversationId === e.conversationId)
  );
}

/** What one subscription has given its consumer. */
interface StreamCursor {
  /** The seq of the last event handed to the consumer, else the seq the stream started after. */
  delivered: number | null;
  /** Seqs given already, so that one both replayed and pushed live goes out once. */
  seen: Set<number>;
}

export class TurnEventHub {
  readonly #subscribers = new Set<Subscriber>();
  #pending: number[] = [];
  /** True while a read of signalled events is under way; new signals join it. */
  #flushing = false;
  readonly #off: () => void;
  readonly #offReset: () => void;

  readonly #replayPage: number;
  readonly #replayMax: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly notifier: Notifier,
    private readonly logger: Logger,
    {
      replayPage = DEFAULT_REPLAY_PAGE,
      replayMaxEvents = DEFAULT_REPLAY_MAX_EVENTS,
    }: TurnEventHubOptions = {},
  ) {
    this.#replayPage = replayPage;
    this.#replayMax = replayMaxEvents;
    this.#off = notifier.onEvent((signal) => this.#onSignal(signal));
    this.#offReset = notifier.onReset(() => {
      for (const s of this.#subscribers) if (s.live) s.reset();
    });
  }

  #onSignal(signal: EventSignal): void {
    let wanted = false;
    for (const s of this.#subscribers) {
      if (s.filter.workspaceId === null || s.filter.workspaceId === signal.workspaceId) wanted = true;
    }
    if (!wanted) return;
    this.#pending.push(signal.seq);
    // Batch the signals that arrive together into one read.
    if (!this.#flushing) {
      this.#flushing = true;
      queueMicrotask(() => void this.#flush());
    }
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const seqs = this.#pending;
        this.#pending = [];
        const rows = await this.orm.em.getConnection().execute<Row[]>(
          // Only fresh events are signalled: the bound keeps the read to the last day's partitions.
          `select * from turn_event where seq in (${seqs.map(() => '?').join(',')}) and created_at >= ? order by seq`,
          [...seqs, new Date(Date.now() - SIGNALLED_EVENT_MAX_AGE_MS)],
        );
        for (const row of rows) {
          const event = toRecord(row);
          for (const s of this.#subscribers) if (matches(s.filter, event)) s.push(event);
        }
      }
    } catch (err) {
      this.logger.error({ err }, 'reading turn events failed');
    } finally {
      this.#flushing = false;
      if (this.#pending.length > 0) {
        this.#flushing = true;
        void this.#flush();
      }
    }
  }

  /** Stored events after `afterSeq` that match, in seq order, a page at a time. */
  async replay(
    filter: EventFilter,
    afterSeq: number,
    limit = DEFAULT_REPLAY_PAGE,
  ): Promise<TurnEventRecord[]> {
    const where: string[] = ['seq > ?'];
    const params: unknown[] = [afterSeq];
    const equal: [string, string | null][] = [
      ['workspace_id', filter.workspaceId],
      ['assistant_id', filter.assistantId],
      ['conversation_id', filter.conversationId],
    ];
    for (const [column, value] of equal) {
      if (value === null) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    params.push(limit);
    const rows = await this.orm.em
      .getConnection()
      .execute<Row[]>(`select * from turn_event where ${where.join(' and ')} order by seq limit ?`, params);
    return rows.map(toRecord);
  }

  /**
   * Live events (after a replay from `afterSeq`, when given) until the consumer stops. Its
   * `return()` ends the stream at once, even while it waits for the next event.
   */
  subscribe(
    filter: EventFilter,
    afterSeq: number | null,
    maxQueue = DEFAULT_MAX_QUEUE,
  ): AsyncIterableIterator<TurnEventRecord> {
    const state = { closed: false, wake: null as (() => void) | null };
    const gen = this.#stream(filter, afterSeq, maxQueue, state);
    return {
      next: () => gen.next(),
      return: (value?: unknown) => {
        state.closed = true;
        state.wake?.();
        return gen.return(value);
      },
      throw: (err?: unknown) => gen.throw(err),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  async *#stream(
    filter: EventFilter,
    afterSeq: number | null,
    maxQueue: number,
    state: { closed: boolean; wake: (() => void) | null },
  ): AsyncGenerator<TurnEventRecord> {
    const queue: TurnEventRecord[] = [];
    let overflow = false;
    const cursor: StreamCursor = { delivered: afterSeq, seen: new Set<number>() };
    const { seen } = cursor;
    /** A reset came: catch up from `gapAfter` (`delivered` when it came) once listening again. */
    let gap = false;
    let gapAfter: number | null = null;
    const subscriber: Subscriber = {
      filter,
      push: (event) => {
        if (queue.length >= maxQueue) overflow = true;
        else queue.push(event);
        state.wake?.();
      },
      reset: () => {
        if (!gap) gapAfter = cursor.delivered;
        gap = true;
        state.wake?.();
      },
      live: false,
    };
    // Listen first, then replay: whatever commits meanwhile is buffered, not lost. The instance
    // LISTENs to the events channel only while someone watches (Notifier.watchEvents): the
    // subscriber is in the set before that LISTEN is sent, so no signal answered after it is
    // dropped, and the replay starts only once it is in place.
    this.#subscribers.add(subscriber);
    let release: (() => void) | null = null;
    try {
      release = await this.notifier.watchEvents();
      subscriber.live = true;
      if (afterSeq !== null) yield* this.#replayAfter(filter, afterSeq, cursor, state);
      // Without afterSeq, a catch-up starts after the newest event stored when the stream went live.
      else cursor.delivered = await this.#newestSeq();
      while (!state.closed) {
        if (gap && this.notifier.healthy) {
          gap = false;
          const from = gapAfter ?? cursor.delivered ?? 0;
          await this.notifier.eventsListening();
          yield* this.#replayAfter(filter, from, cursor, state);
          continue;
        }
        while (queue.length > 0) {
          const event = queue.shift()!;
          if (seen.has(event.seq)) continue;
          seen.add(event.seq);
          if (seen.size > 4 * maxQueue) seen.clear(); // replayed seqs are long past by then
          cursor.delivered = event.seq;
          yield event;
        }
        if (overflow) {
          // Events past the backlog were dropped: end with a coded error that says where to resume,
          // never a silent gap (and never a masked INTERNAL).
          throw new AppError(
            'SUBSCRIBER_TOO_SLOW',
            `more than ${maxQueue} live events waited for this subscriber; ` +
              `subscribe again with afterSeq: ${cursor.delivered ?? 0} to continue`,
            { data: { resumeAfterSeq: cursor.delivered ?? 0 } },
          );
        }
        if (state.closed || (gap && this.notifier.healthy)) continue;
        await new Promise<void>((resolve) => (state.wake = resolve));
        state.wake = null;
      }
    } finally {
      this.#subscribers.delete(subscriber);
      release?.();
    }
  }

  /** Stored events after `from` not given yet, in seq order (REPLAY_LIMIT_EXCEEDED past the cap). */
  async *#replayAfter(
    filter: EventFilter,
    from: number,
    given: StreamCursor,
    state: { closed: boolean },
  ): AsyncGenerator<TurnEventRecord> {
    let cursor = from;
    let replayed = 0;
    for (;;) {
      // One more than the cap allows tells whether the history goes on past it.
      const want = Math.min(this.#replayPage, this.#replayMax - replayed + 1);
      const page = await this.replay(filter, cursor, want);
      for (const event of page) {
        if (replayed === this.#replayMax) {
          throw new AppError(
            'REPLAY_LIMIT_EXCEEDED',
            `more than ${this.#replayMax} stored events follow afterSeq ${from}; ` +
              `subscribe again with afterSeq: ${cursor} to continue`,
            { data: { resumeAfterSeq: cursor } },
          );
        }
        cursor = event.seq;
        replayed += 1;
        if (given.seen.has(event.seq)) continue;
        given.seen.add(event.seq);
        given.delivered = event.seq;
        yield event;
      }
      if (page.length < want || state.closed) return;
    }
  }

  /** The newest stored event's seq (0 when there is none). */
  async #newestSeq(): Promise<number> {
    const rows = await this.orm.em
      .getConnection()
      .execute<{ seq: string | number | null }[]>('select max(seq) as seq from turn_event');
    return Number(rows[0]?.seq ?? 0);
  }

  /**
   * Open subscriptions on this instance that are live: every event committed from now on reaches
   * them (tests and metrics).
   */
  get subscriberCount(): number {
    let n = 0;
    for (const s of this.#subscribers) if (s.live) n++;
    return n;
  }

  close(): void {
    this.#off();
    this.#offReset();
    this.#subscribers.clear();
  }
}
