/**
 * Cross-instance signals over PostgreSQL LISTEN/NOTIFY (DESIGN.md rule 12). A NOTIFY carries ids,
 * never payloads (payloads are capped at 8000 bytes, and ids keep secrets off the channel).
 *
 * Every instance holds one dedicated LISTEN connection. It reconnects by itself; while it is down,
 * `healthy` is false, and the tool cache must be bypassed rather than trusted stale. On every
 * (re)connect, listeners get a `reset` so that anything missed meanwhile is dropped.
 *
 * The cache and auth channels are listened to always. The turn-events channel (one signal per
 * recorded call event) only while this instance has a debugger subscriber, and for
 * `eventsLingerMs` after its last one leaves (`watchEvents`); meanwhile the instance keeps the
 * watch mark (EVENTS_WATCH_SEQUENCE) ahead, and the record statements send their turn-event
 * NOTIFY only while it is (eventNotifySql). PostgreSQL wakes every listening session of the
 * database for every notifying commit, so with no one watching each call would wake every
 * instance, for nothing (issue 15: about 0.2 ms of latency and 0.18 ms of PostgreSQL CPU per call
 * at c=1, same-run A/B).
 *
 * Time: the linger runs on the injected `Clock` (src/clock.ts; tests move it on by hand). The
 * heartbeat, its deadline and the reconnect backoff stay on real time: they pace a real TCP session
 * to a real PostgreSQL, and the heartbeat's stall check measures the real event loop; on fake time
 * a test moving the clock on would fail heartbeats whose query had not had a real moment to answer.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { systemClock, type Clock, type ClockTimer } from '../clock.js';
import type { Logger } from '../logger.js';
import { isServerError } from './group-commit.js';

export const CACHE_CHANNEL = 'ct_cache';
/**
 * The LISTEN connection's `application_name` is this prefix and the instance id: while an instance
 * lives, pg_stat_activity shows it, so work it left behind can be told from work still going.
 */
export const INSTANCE_APPLICATION_PREFIX = 'connected-tools:';
export const EVENTS_CHANNEL = 'ct_turn_events';
/** API tokens revoked (or otherwise changed): every instance drops them from its cache and sockets. */
export const AUTH_CHANNEL = 'ct_auth';
/** A rate limit or a breaker changed (src/guards/): every instance reloads that one from the database. */
export const GUARDS_CHANNEL = 'ct_guards';
/**
 * The sequence whose value is the time (epoch ms, the database's clock) until which some instance
 * watches turn events (migration 20261201150000).
 */
export const EVENTS_WATCH_SEQUENCE = 'turn_event_watch_until';
/** A watching instance moves the mark this far ahead, on every heartbeat. */
export const DEFAULT_EVENTS_WATCH_TTL_MS = 30_000; // 30 seconds
/** The most a new watch waits for the transactions that may have read the mark before it moved. */
export const EVENTS_WATCH_SETTLE_MAX_MS = 2_000; // 2 seconds

/** How long the turn-events channel stays listened to after its last watcher leaves. */
export const DEFAULT_EVENTS_LINGER_MS = 30_000; // 30 seconds

/** SQL for the NOTIFY of the turn event `row` (an alias with `seq` and `workspace_id`), always sent. */
export function eventSignalSql(row: string): string {
  return `pg_notify('${EVENTS_CHANNEL}', json_build_object('seq', ${row}.seq, 'workspaceId', ${row}.workspace_id)::text)`;
}

/**
 * SQL for the NOTIFY of the turn event `row` (see eventSignalSql), sent only while some instance
 * watches turn events (its value is null otherwise). Put it in a select list over the inserted
 * events, never in a WHERE: there it is read after the statement's first write, when its
 * transaction has an id, which is what `Notifier.watchEvents` waits for.
 */
export function eventNotifySql(row: string): string {
  return (
    `case when (select last_value from ${EVENTS_WATCH_SEQUENCE}) > (extract(epoch from clock_timestamp()) * 1000)::bigint ` +
    `then ${eventSignalSql(row)} end`
  );
}

const DEFAULT_RECONNECT_MIN_MS = 100;
const DEFAULT_RECONNECT_MAX_MS = 5_000;
/**
 * A LISTEN connection can die without a word (a half-open TCP connection after a failover or a NAT
 * timeout): every this often it must answer a query within the deadline, or it is treated as down.
 */
export const DEFAULT_HEARTBEAT_MS = 5_000; // 5 seconds
export const DEFAULT_HEARTBEAT_DEADLINE_MS = 3_000; // 3 seconds

/** What changed, by id. `assistant` covers the customer's gate; `workspace` drops everything of it. */
export interface CacheSignal {
  kind: 'operation' | 'connection' | 'assistant' | 'workspace';
  id: string;
  /** The workspace the object belongs to, so an instance can drop a whole workspace cheaply. */
  workspaceId: string;
}

export interface AuthSignal {
  /** The API token (its row id, never the secret or its hash) that stopped being valid. */
  tokenId: string;
}

/**
 * An MCP session ended by its `DELETE` (src/mcp-server/ended-sessions.ts): its random key, never
 * the signed id. Sent on the auth channel, which every instance always listens to.
 */
export interface SessionEndedSignal {
  sessionEnded: string;
}

export interface GuardSignal {
  kind: 'breaker' | 'limit' | 'cap';
  /**
   * breaker: CONNECTION or OPERATION; limit: the limits of the connection `id`; cap: CONFIG (the
   * caps of the connection `id` changed), WANT (an instance is short of slots of the cap `id`) or
   * FREED (an instance gave slots of the cap `id` back).
   */
  scope: string;
  id: string;
}

export interface EventSignal {
  /** The turn event's global sequence number. */
  seq: number;
  workspaceId: string;
}

/** Anything that can run SQL (an entity manager's connection, inside or outside a transaction). */
export interface SqlRunner {
  execute(sql: string, params?: unknown[]): Promise<unknown>;
}

export interface NotifierOptions {
  /** The linger's clock (src/clock.ts). Default: `systemClock`; tests drive it with fake time. */
  clock?: Clock;
  /** See DEFAULT_EVENTS_LINGER_MS. */
  eventsLingerMs?: number;
  /** See DEFAULT_EVENTS_WATCH_TTL_MS. */
  eventsWatchTtlMs?: number;
  /** See DEFAULT_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /** See DEFAULT_HEARTBEAT_DEADLINE_MS; also how late a heartbeat may run before a stall counts. */
  heartbeatDeadlineMs?: number;
}

export class Notifier {
  /** This process's id among the service's instances (work it owns is marked with it). */
  readonly instanceId = randomUUID();
  readonly #events = new EventEmitter();
  #client: pg.Client | null = null;
  #healthy = false;
  #stopped = false;
  #retryMs = DEFAULT_RECONNECT_MIN_MS;
  #timer: NodeJS.Timeout | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #connectedOnce = false;
  #reconnects = 0;
  #lastNotificationAt: number | null = null;
  /** watchEvents() calls not yet released. */
  #eventWatchers = 0;
  /** The turn-events channel is wanted: LISTENed on the connection, or to be on the next one. */
  #eventsWanted = false;
  /** Settles once the latest LISTEN of the turn-events channel has been answered. */
  #eventsListened: Promise<void> = Promise.resolve();
  #eventsLinger: ClockTimer | null = null;
  readonly #clock: Clock;
  readonly #eventsLingerMs: number;
  readonly #eventsWatchTtlMs: number;
  readonly #heartbeatMs: number;
  readonly #heartbeatDeadlineMs: number;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    options: NotifierOptions = {},
  ) {
    this.#events.setMaxListeners(0);
    this.#clock = options.clock ?? systemClock;
    this.#eventsLingerMs = options.eventsLingerMs ?? DEFAULT_EVENTS_LINGER_MS;
    this.#eventsWatchTtlMs = options.eventsWatchTtlMs ?? DEFAULT_EVENTS_WATCH_TTL_MS;
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#heartbeatDeadlineMs = options.heartbeatDeadlineMs ?? DEFAULT_HEARTBEAT_DEADLINE_MS;
  }

  /** True while the LISTEN connection is up: only then may caches trust themselves. */
  get healthy(): boolean {
    return this.#healthy;
  }

  /** For /metrics: whether LISTEN is up, when the last NOTIFY arrived (epoch ms), reconnects so far. */
  stats(): { healthy: boolean; lastNotificationAt: number | null; reconnects: number } {
    return {
      healthy: this.#healthy,
      lastNotificationAt: this.#lastNotificationAt,
      reconnects: this.#reconnects,
    };
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: `${INSTANCE_APPLICATION_PREFIX}${this.instanceId}`,
    });
    client.on('notification', (msg) => this.#dispatch(msg.channel, msg.payload ?? ''));
    client.on('error', (err) => {
      this.logger.warn({ err: { message: err.message } }, 'LISTEN connection error');
      this.#down(client);
    });
    client.on('end', () => this.#down(client));
    const eventsListened = this.#eventsWanted;
    try {
      await client.connect();
      await client.query(`LISTEN ${CACHE_CHANNEL}`);
      if (eventsListened) {
        await client.query(`LISTEN ${EVENTS_CHANNEL}`);
        await this.#markWatched(client, true);
      }
      await client.query(`LISTEN ${AUTH_CHANNEL}`);
      await client.query(`LISTEN ${GUARDS_CHANNEL}`);
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'LISTEN connection failed; retrying');
      this.#down(client);
      return;
    }
    if (this.#stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    // watchEvents() or its release while this connection was being set up.
    if (this.#eventsWanted !== eventsListened)
      this.#eventsListened = this.#eventsWanted
        ? this.#startWatching()
        : this.#channelQuery(`UNLISTEN ${EVENTS_CHANNEL}`);
    this.#healthy = true;
    if (this.#connectedOnce) this.#reconnects++;
    this.#connectedOnce = true;
    this.#retryMs = DEFAULT_RECONNECT_MIN_MS;
    this.#events.emit('reset');
    this.#startHeartbeat(client);
  }

  /**
   * Every `heartbeatMs` the connection must answer within the deadline, or it is treated as down.
   * A heartbeat that runs later than the deadline allows (the event loop stalled) counts the same:
   * meanwhile notifications may have been missed (the watch mark may even have lapsed, so that
   * events were committed without one), and only a new connection, whose `reset` makes every
   * live subscription catch up from the database, makes up for that.
   */
  #startHeartbeat(client: pg.Client): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    // Real time, not the clock: the stall it looks for is the real event loop's (see the header).
    let last = performance.now();
    this.#heartbeat = setInterval(() => {
      if (this.#client !== client) return;
      const now = performance.now();
      const late = now - last - this.#heartbeatMs;
      last = now;
      if (late > this.#heartbeatDeadlineMs) {
        this.logger.warn(
          { lateMs: Math.round(late) },
          'the event loop stalled past the LISTEN heartbeat deadline',
        );
        this.#down(client);
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('heartbeat deadline passed')), this.#heartbeatDeadlineMs);
      });
      const beat = this.#eventsWanted ? this.#markWatched(client, false) : client.query('select 1');
      Promise.race([beat, deadline])
        .catch((err: unknown) => {
          this.logger.warn(
            { err: { message: (err as Error).message } },
            'LISTEN connection failed its heartbeat',
          );
          this.#down(client);
        })
        .finally(() => clearTimeout(timer));
    }, this.#heartbeatMs);
    this.#heartbeat.unref();
  }

  #down(client: pg.Client): void {
    if (this.#client === client) this.#client = null;
    const wasHealthy = this.#healthy;
    // Unhealthy before the listeners hear it: a cache asked during its `reset` must not trust itself.
    this.#healthy = false;
    if (wasHealthy) this.#events.emit('reset');
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (!this.#stopped) void this.#connect();
    }, this.#retryMs);
    this.#timer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, DEFAULT_RECONNECT_MAX_MS);
  }

  #dispatch(channel: string, payload: string): void {
    this.#lastNotificationAt = Date.now();
    try {
      const data = JSON.parse(payload) as unknown;
      if (channel === CACHE_CHANNEL) this.#events.emit('cache', data);
      else if (channel === EVENTS_CHANNEL) this.#events.emit('event', data);
      else if (channel === AUTH_CHANNEL)
        this.#events.emit(isSessionEnded(data) ? 'session-ended' : 'auth', data);
      else if (channel === GUARDS_CHANNEL) this.#events.emit('guards', data);
    } catch {
      this.logger.warn({ channel }, 'ignored a malformed notification');
    }
  }

  /**
   * Turn-event signals are wanted until the returned release is called. Resolves once the channel
   * is LISTENed on the connection, the watch mark moved and the writers that may have read it
   * before ended (#markWatched), so that every event committed from then on is signalled to this
   * instance; at once while the connection is down (the reconnect does all that, and says
   * `reset`). Never rejects.
   */
  async watchEvents(): Promise<() => void> {
    this.#eventWatchers++;
    if (this.#eventsLinger) this.#clock.clearTimeout(this.#eventsLinger);
    this.#eventsLinger = null;
    if (!this.#eventsWanted) {
      this.#eventsWanted = true;
      this.#eventsListened = this.#startWatching();
    }
    await this.#eventsListened;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#eventWatchers > 0 || this.#stopped) return;
      this.#eventsLinger = this.#clock.setTimeout(() => {
        this.#eventsLinger = null;
        if (this.#eventWatchers > 0 || !this.#eventsWanted) return;
        this.#eventsWanted = false;
        void this.#channelQuery(`UNLISTEN ${EVENTS_CHANNEL}`);
      }, this.#eventsLingerMs);
      this.#eventsLinger.unref();
    };
  }

  /**
   * Settles once the turn-events channel's latest LISTEN (and watch mark) on the current connection
   * has been answered: after a `reset` on a healthy connection, every event committed from then on
   * is signalled, and every earlier one is in the database for a catch-up to read. Never rejects.
   */
  eventsListening(): Promise<void> {
    return this.#eventsListened;
  }

  /** LISTEN, then mark turn events as watched, on the current connection (see #channelQuery). */
  #startWatching(): Promise<void> {
    return this.#channelQuery(`LISTEN ${EVENTS_CHANNEL}`, (client) => this.#markWatched(client, true));
  }

  /**
   * Moves the watch mark to the TTL ahead (EVENTS_WATCH_SEQUENCE), so that every instance's record
   * statements send their turn-event NOTIFY. With `settle` (a new watch), then waits until every
   * transaction of this database that had a transaction id then has ended (at most
   * EVENTS_WATCH_SETTLE_MAX_MS): one of them may have read the mark before it moved, and sent no
   * NOTIFY for the event it then commits; once it has ended, its event is in the database for a
   * replay to find. A statement without a transaction id then reads the mark after it moved
   * (eventNotifySql). The mark is never moved back: when no instance renews it, it lapses.
   */
  async #markWatched(client: pg.Client, settle: boolean): Promise<void> {
    try {
      await client.query(
        `select setval('${EVENTS_WATCH_SEQUENCE}', (extract(epoch from clock_timestamp()) * 1000)::bigint + $1::bigint)`,
        [this.#eventsWatchTtlMs],
      );
    } catch (err) {
      // Refused (a missing grant, say): the connection is fine, and dropping it would not help.
      if (!isServerError(err)) throw err;
      this.logger.warn(
        { err: { message: (err as Error).message } },
        'could not mark turn events as watched; live debugger events may not arrive',
      );
      return;
    }
    if (!settle) return;
    const running = await client.query<{ keys: string[] }>(
      `select coalesce(array_agg(pid::text || ':' || backend_xid::text), '{}') as keys from pg_stat_activity
       where datname = current_database() and backend_xid is not null and pid <> pg_backend_pid()`,
    );
    const keys = running.rows[0]?.keys ?? [];
    // Real time, not the clock: this waits on other sessions' transactions in PostgreSQL.
    const deadline = Date.now() + EVENTS_WATCH_SETTLE_MAX_MS;
    // Usually they end within a round trip or two; a long writer is asked after 2, 4, … 50 ms.
    for (let pause = 2; keys.length > 0 && Date.now() < deadline; pause = Math.min(pause * 2, 50)) {
      const left = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and (pid::text || ':' || backend_xid::text) = any($1)`,
        [keys],
      );
      if ((left.rows[0]?.n ?? 0) === 0) return;
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /**
   * LISTEN or UNLISTEN (and `then`) on the current connection (its queries run in the order sent);
   * a failure drops the connection, whose reconnect listens as `#eventsWanted` says.
   */
  async #channelQuery(sql: string, then?: (client: pg.Client) => Promise<void>): Promise<void> {
    const client = this.#client;
    if (!client) return;
    try {
      await client.query(sql);
      await then?.(client);
    } catch (err) {
      // A connection already replaced (it failed meanwhile) is not this one's to drop.
      if (this.#client !== client) return;
      this.logger.warn({ err: { message: (err as Error).message } }, 'LISTEN connection failed a LISTEN');
      this.#down(client);
    }
  }

  /** The channels the LISTEN connection listens to, as PostgreSQL says (tests); [] while it is down. */
  async listeningChannels(): Promise<string[]> {
    const client = this.#client;
    if (!client) return [];
    const res = await client.query<{ channel: string }>('select pg_listening_channels() as channel');
    return res.rows.map((r) => r.channel).sort();
  }

  onCache(listener: (signal: CacheSignal) => void): () => void {
    this.#events.on('cache', listener);
    return () => this.#events.off('cache', listener);
  }

  onEvent(listener: (signal: EventSignal) => void): () => void {
    this.#events.on('event', listener);
    return () => this.#events.off('event', listener);
  }

  onAuth(listener: (signal: AuthSignal) => void): () => void {
    this.#events.on('auth', listener);
    return () => this.#events.off('auth', listener);
  }

  onSessionEnded(listener: (signal: SessionEndedSignal) => void): () => void {
    this.#events.on('session-ended', listener);
    return () => this.#events.off('session-ended', listener);
  }

  onGuards(listener: (signal: GuardSignal) => void): () => void {
    this.#events.on('guards', listener);
    return () => this.#events.off('guards', listener);
  }

  /** Called whenever the LISTEN connection (re)connects or drops: state may have been missed. */
  onReset(listener: () => void): () => void {
    this.#events.on('reset', listener);
    return () => this.#events.off('reset', listener);
  }

  /**
   * Sends a signal. Run it on a transaction's connection to deliver at commit (and not at all on
   * rollback), or on a plain connection to deliver at once.
   */
  static async publishCache(sql: SqlRunner, signal: CacheSignal): Promise<void> {
    await sql.execute('select pg_notify(?, ?)', [CACHE_CHANNEL, JSON.stringify(signal)]);
  }

  static async publishAuth(sql: SqlRunner, signal: AuthSignal): Promise<void> {
    await sql.execute('select pg_notify(?, ?)', [AUTH_CHANNEL, JSON.stringify(signal)]);
  }

  static async publishSessionEnded(sql: SqlRunner, signal: SessionEndedSignal): Promise<void> {
    await sql.execute('select pg_notify(?, ?)', [AUTH_CHANNEL, JSON.stringify(signal)]);
  }

  static async publishEvent(sql: SqlRunner, signal: EventSignal): Promise<void> {
    await sql.execute('select pg_notify(?, ?)', [EVENTS_CHANNEL, JSON.stringify(signal)]);
  }

  /** Drops the LISTEN connection on purpose (tests of the reconnect path). */
  dropConnectionForTest(): void {
    const client = this.#client;
    if (client) this.#down(client);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#eventsLinger) this.#clock.clearTimeout(this.#eventsLinger);
    this.#eventsLinger = null;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#healthy = false;
    const client = this.#client;
    this.#client = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

function isSessionEnded(data: unknown): data is SessionEndedSignal {
  return (
    data !== null && typeof data === 'object' && typeof (data as SessionEndedSignal).sessionEnded === 'string'
  );
}
