/**
 * The turn-events channel is LISTENed only while someone watches (issue 15): an instance with no
 * debugger subscriber is not woken by every call of every instance, and a subscriber still gets
 * every event once, replayed or live. The linger after the last watcher runs on a FakeClock
 * (test/support/fake-clock.ts) of each Notifier's own: the tests move it past the linger, never
 * sleep through it. The watch mark's TTL is the database's clock, and the settle waits on other
 * sessions in PostgreSQL: those stay real.
 */
import 'reflect-metadata';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import {
  AUTH_CHANNEL,
  GUARDS_CHANNEL,
  CACHE_CHANNEL,
  DEFAULT_EVENTS_LINGER_MS,
  EVENTS_CHANNEL,
  Notifier,
  type CacheSignal,
  type EventSignal,
  type NotifierOptions,
} from '../../../src/db/notifier.js';
import { fromGlobalId } from '../../../src/graphql/node.js';
import { createLogger } from '../../../src/logger.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { waitUntil } from '../../support/wait.js';
import { FakeClock } from '../../support/fake-clock.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, sleep, type World } from '../../support/turns.js';

const quiet = createLogger(
  'error',
  new Writable({
    write: (_chunk, _encoding, done) => done(),
  }),
);
const ALWAYS = [AUTH_CHANNEL, CACHE_CHANNEL, GUARDS_CHANNEL].sort();
const WATCHED = [AUTH_CHANNEL, CACHE_CHANNEL, EVENTS_CHANNEL, GUARDS_CHANNEL].sort();
/** The production linger: on fake time its length costs nothing. */
const LINGER_MS = DEFAULT_EVENTS_LINGER_MS;

const notifiers: Notifier[] = [];
/** A Notifier of its own on `url`, its linger on a FakeClock of its own; started, stopped after the file. */
async function startNotifier(url: string, options: NotifierOptions = {}) {
  const clock = new FakeClock();
  const n = new Notifier(url, quiet, { clock, ...options });
  notifiers.push(n);
  await n.start();
  return { n, clock };
}

/** Moves `clock` to just before the linger's end (still listening), then past it (no longer). */
async function throughTheLinger(n: Notifier, clock: FakeClock): Promise<void> {
  await clock.waitForTimers();
  await clock.advance(LINGER_MS - 1);
  expect(await n.listeningChannels()).toEqual(WATCHED);
  await clock.advance(1);
  await waitUntil(async () => (await n.listeningChannels()).length === ALWAYS.length);
}
afterAll(async () => {
  for (const n of notifiers) await n.stop();
});

describe('Notifier.watchEvents', () => {
  let sender: pg.Client;
  /** `sender` as a SqlRunner: knex-style `?` placeholders become `$1`, `$2`… */
  const runner = {
    execute: (sql: string, params: unknown[] = []) => {
      let n = 0;
      return sender.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      );
    },
  };
  const started = () => startNotifier(inject('databaseUrl'));
  /** Every event signal `n` receives, then a cache signal sent after them on the same connection. */
  const eventsBeforeCacheSignal = async (n: Notifier, seq: number): Promise<number[]> => {
    const got: number[] = [];
    const offEvent = n.onEvent((s: EventSignal) => got.push(s.seq));
    const marker = `marker-${seq}`;
    let seen = false;
    const offCache = n.onCache((s: CacheSignal) => (seen ||= s.id === marker));
    try {
      await Notifier.publishEvent(runner, { seq, workspaceId: 'w' });
      await Notifier.publishCache(runner, { kind: 'workspace', id: marker, workspaceId: 'w' });
      await waitUntil(() => seen);
      return got;
    } finally {
      offEvent();
      offCache();
    }
  };

  beforeAll(async () => {
    sender = new pg.Client({ connectionString: inject('databaseUrl') });
    await sender.connect();
  });
  afterAll(async () => {
    await sender.end();
  });

  it('should listen to turn events only between the first watcher and the last release, plus the linger', async () => {
    const { n, clock } = await started();
    expect(await n.listeningChannels()).toEqual(ALWAYS);
    expect(await eventsBeforeCacheSignal(n, 1)).toEqual([]);

    const first = await n.watchEvents();
    // Resolved: the LISTEN is in place, so an event signalled now reaches it.
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 2)).toEqual([2]);

    const second = await n.watchEvents();
    first();
    first(); // a second release of the same watch counts once
    expect(clock.pending).toBe(0); // a watcher is left: no linger
    await clock.advance(LINGER_MS * 3);
    expect(await n.listeningChannels()).toEqual(WATCHED);

    second();
    await throughTheLinger(n, clock);
    expect(await n.listeningChannels()).toEqual(ALWAYS);
    expect(await eventsBeforeCacheSignal(n, 3)).toEqual([]);
  });

  it('should keep listening when a watcher comes back within the linger', async () => {
    const { n, clock } = await started();
    (await n.watchEvents())();
    expect(clock.pending).toBe(1);
    const again = await n.watchEvents();
    expect(clock.pending).toBe(0); // the linger is called off
    await clock.advance(LINGER_MS * 3);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 4)).toEqual([4]);
    again();
  });

  it('should listen again on a new connection while watched', async () => {
    const { n, clock } = await started();
    const release = await n.watchEvents();
    n.dropConnectionForTest();
    expect(n.healthy).toBe(false);
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 5)).toEqual([5]);
    release();
    await throughTheLinger(n, clock);
    // Unwatched when it reconnects: only the channels it always listens to.
    n.dropConnectionForTest();
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(ALWAYS);
  });

  it('should come back listening, once, when the connection drops under a LISTEN', async () => {
    const { n } = await started();
    const reconnects = n.stats().reconnects;
    const watching = n.watchEvents();
    n.dropConnectionForTest(); // the LISTEN just sent fails with its connection
    const release = await watching;
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    // Real time: a second drop would show at once, and the reconnect's backoff is real (not the clock).
    await sleep(50);
    expect(n.healthy).toBe(true);
    expect(n.stats().reconnects).toBe(reconnects + 1);
    expect(await eventsBeforeCacheSignal(n, 6)).toEqual([6]);
    release();
  });

  it('should listen when a watch arrives while the connection is being set up', async () => {
    const n = new Notifier(inject('databaseUrl'), quiet, { clock: new FakeClock() });
    notifiers.push(n);
    const starting = n.start();
    // No connection yet: the watch resolves at once, and the connection, once up, listens.
    const release = await n.watchEvents();
    await starting;
    expect(await n.listeningChannels()).toEqual(WATCHED);
    release();
  });
});

describe('the turn-events NOTIFY across two instances on their own database', () => {
  let url: string;
  let A: TestApp;
  let B: TestApp;
  let peer: SdkServerHandle;
  /** A plain session LISTENing to the events channel, as any instance's would: sees what is sent. */
  let listener: pg.Client;
  const heard: number[] = [];
  let w: World;

  beforeAll(async () => {
    url = await createEmptyDatabase();
    A = await startTestApp({ databaseUrl: url });
    B = await startTestApp({ databaseUrl: url });
    peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (m) => {
      if (m.channel === EVENTS_CHANNEL) heard.push((JSON.parse(m.payload!) as EventSignal).seq);
    });
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
    w = await buildWorld(A, peer.url, 'Quiet');
    await connectTools(A, w);
  });
  afterAll(async () => {
    await listener.end();
    await A.stop();
    await B.stop();
    await peer.close();
  });

  /** The event signals `listener` heard for one call on A (a NOTIFY sent after it ends the wait). */
  const signalsOfCall = async (conversation: string): Promise<number[]> => {
    const turn = await begin(A, w, conversation);
    await call(A, w, turn.turnId, 'quiet__lookup', { email: 'q@q' });
    const marker = `after-${conversation}`;
    let seen = false;
    const onMarker = (m: pg.Notification) => (seen ||= m.payload === marker);
    listener.on('notification', onMarker);
    await listener.query(`LISTEN marker; NOTIFY marker, '${marker}'`);
    await waitUntil(() => seen);
    listener.off('notification', onMarker);
    return heard.splice(0);
  };

  it('should send no turn-event NOTIFY while no instance watches, and one per event while one does, until its mark lapses', async () => {
    expect(await signalsOfCall('unwatched')).toEqual([]);
    expect(await B.app.services.notifier.listeningChannels()).toEqual(ALWAYS);

    const { n, clock } = await startNotifier(url, { eventsWatchTtlMs: 300 });
    try {
      const release = await n.watchEvents();
      // TURN_STARTED, CALL_STARTED, CALL_FINISHED.
      expect(await signalsOfCall('watched')).toHaveLength(3);
      release();
      await throughTheLinger(n, clock);
      // Real time: the mark's TTL is the database's clock (clock_timestamp()).
      await sleep(300);
      expect(await signalsOfCall('lapsed')).toEqual([]);
    } finally {
      await n.stop();
    }
  });

  it('should have a new watch wait for a transaction that may have read the mark before it moved', async () => {
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    const { n } = await startNotifier(url, { eventsWatchTtlMs: 300 });
    try {
      await other.query('begin');
      await other.query('select pg_current_xact_id()'); // it has a transaction id, as a writer has
      let watching = false;
      const watched = n.watchEvents().then((release) => {
        watching = true;
        return release;
      });
      // Real time: the watch waits on the other session's transaction, in PostgreSQL.
      await sleep(150);
      expect(watching).toBe(false);
      await other.query('commit');
      (await watched)();
      expect(watching).toBe(true);
    } finally {
      await other.end();
      await n.stop();
    }
  });

  it("should leave an instance with no subscriber out of every call's signal", async () => {
    const turn = await begin(A, w, 'quiet');
    await call(A, w, turn.turnId, 'quiet__lookup', { email: 'q@q' });
    expect(await B.app.services.notifier.listeningChannels()).toEqual(ALWAYS);
    expect(await A.app.services.notifier.listeningChannels()).toEqual(ALWAYS);
  });

  it('should give a subscriber on B, from afterSeq 0, every event of calls recorded on A meanwhile, once', async () => {
    const busy = await buildWorld(A, peer.url, 'Busy');
    await connectTools(A, busy);
    const turn = await begin(A, busy, 'busy');
    const CALLS = 30;
    let made = 0;
    // Calls go on while the subscription starts, listens, marks the events watched, replays and
    // goes live.
    const calling = (async () => {
      for (; made < CALLS; made++) await call(A, busy, turn.turnId, 'busy__lookup', { email: `${made}@b` });
    })();
    await waitUntil(() => made >= 3);
    const stream = await subscribeTurnEvents(B.wsUrl, busy.customer, {
      assistantId: busy.assistantId,
      conversationId: 'busy',
      afterSeq: 0,
    });
    try {
      await calling;
      // TURN_STARTED, then CALL_STARTED and CALL_FINISHED for each call.
      await stream.waitFor((e) => e.length >= 1 + 2 * CALLS);
      const stored = await A.app.services.orm.em
        .getConnection()
        .execute<{ seq: string }[]>('select seq from turn_event where turn_id = ? order by seq', [
          fromGlobalId(turn.turnId)!.id,
        ]);
      expect(stream.events.map((e) => e.seq)).toEqual(stored.map((r) => Number(r.seq)));
      expect(await B.app.services.notifier.listeningChannels()).toEqual(WATCHED);
    } finally {
      await stream.close();
    }
  });
});
