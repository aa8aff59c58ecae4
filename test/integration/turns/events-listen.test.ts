/**
 * The turn-events channel is LISTENed only while someone watches (issue 15): an instance with no
 * debugger subscriber is not woken by every call of every instance, and a subscriber still gets
 * every event once, replayed or live.
 */
import 'reflect-metadata';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import {
  AUTH_CHANNEL,
  CACHE_CHANNEL,
  EVENTS_CHANNEL,
  Notifier,
  type CacheSignal,
  type EventSignal,
} from '../../../src/db/notifier.js';
import { fromGlobalId } from '../../../src/graphql/node.js';
import { createLogger } from '../../../src/logger.js';
import type { TestApp } from '../../support/app.js';
import type { SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { waitUntil } from '../../support/wait.js';
import {
  begin,
  buildWorld,
  call,
  connectTools,
  sleep,
  startTwoInstances,
  type TwoInstances,
} from '../../support/turns.js';

const quiet = createLogger(
  'error',
  new Writable({
    write: (_chunk, _encoding, done) => done(),
  }),
);
const ALWAYS = [AUTH_CHANNEL, CACHE_CHANNEL].sort();
const WATCHED = [AUTH_CHANNEL, CACHE_CHANNEL, EVENTS_CHANNEL].sort();
const LINGER_MS = 50;

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
  const notifiers: Notifier[] = [];
  const started = async (options = { eventsLingerMs: LINGER_MS }) => {
    const n = new Notifier(inject('databaseUrl'), quiet, options);
    notifiers.push(n);
    await n.start();
    return n;
  };
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
    for (const n of notifiers) await n.stop();
    await sender.end();
  });

  it('should listen to turn events only between the first watcher and the last release, plus the linger', async () => {
    const n = await started();
    expect(await n.listeningChannels()).toEqual(ALWAYS);
    expect(await eventsBeforeCacheSignal(n, 1)).toEqual([]);

    const first = await n.watchEvents();
    // Resolved: the LISTEN is in place, so an event signalled now reaches it.
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 2)).toEqual([2]);

    const second = await n.watchEvents();
    first();
    first(); // a second release of the same watch counts once
    await sleep(LINGER_MS * 3);
    expect(await n.listeningChannels()).toEqual(WATCHED);

    second();
    await waitUntil(async () => (await n.listeningChannels()).length === ALWAYS.length);
    expect(await n.listeningChannels()).toEqual(ALWAYS);
    expect(await eventsBeforeCacheSignal(n, 3)).toEqual([]);
  });

  it('should keep listening when a watcher comes back within the linger', async () => {
    const n = await started();
    (await n.watchEvents())();
    const again = await n.watchEvents();
    await sleep(LINGER_MS * 3);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 4)).toEqual([4]);
    again();
  });

  it('should listen again on a new connection while watched', async () => {
    const n = await started();
    const release = await n.watchEvents();
    n.dropConnectionForTest();
    expect(n.healthy).toBe(false);
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    expect(await eventsBeforeCacheSignal(n, 5)).toEqual([5]);
    release();
    await waitUntil(async () => (await n.listeningChannels()).length === ALWAYS.length);
    // Unwatched when it reconnects: only the channels it always listens to.
    n.dropConnectionForTest();
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(ALWAYS);
  });

  it('should come back listening, once, when the connection drops under a LISTEN', async () => {
    const n = await started();
    const reconnects = n.stats().reconnects;
    const watching = n.watchEvents();
    n.dropConnectionForTest(); // the LISTEN just sent fails with its connection
    const release = await watching;
    await waitUntil(() => n.healthy);
    expect(await n.listeningChannels()).toEqual(WATCHED);
    await sleep(LINGER_MS);
    expect(n.healthy).toBe(true);
    expect(n.stats().reconnects).toBe(reconnects + 1);
    expect(await eventsBeforeCacheSignal(n, 6)).toEqual([6]);
    release();
  });

  it('should listen when a watch arrives while the connection is being set up', async () => {
    const n = new Notifier(inject('databaseUrl'), quiet, { eventsLingerMs: LINGER_MS });
    notifiers.push(n);
    const starting = n.start();
    // No connection yet: the watch resolves at once, and the connection, once up, listens.
    const release = await n.watchEvents();
    await starting;
    expect(await n.listeningChannels()).toEqual(WATCHED);
    release();
  });
});

describe('the turn-events channel across two instances', () => {
  let instances: TwoInstances;
  let A: TestApp;
  let B: TestApp;
  let peer: SdkServerHandle;

  beforeAll(async () => {
    instances = await startTwoInstances();
    ({ A, B, peer } = instances);
  });
  afterAll(() => instances.stop());

  it("should leave an instance with no subscriber out of every call's signal", async () => {
    const w = await buildWorld(A, peer.url, 'Quiet');
    await connectTools(A, w);
    const turn = await begin(A, w, 'quiet');
    await call(A, w, turn.turnId, 'quiet__lookup', { email: 'q@q' });
    expect(await B.app.services.notifier.listeningChannels()).toEqual(ALWAYS);
    expect(await A.app.services.notifier.listeningChannels()).toEqual(ALWAYS);
  });

  it('should give a subscriber on B, from afterSeq 0, every event of calls recorded on A meanwhile, once', async () => {
    const w = await buildWorld(A, peer.url, 'Busy');
    await connectTools(A, w);
    const turn = await begin(A, w, 'busy');
    const CALLS = 30;
    let made = 0;
    // Calls go on while the subscription starts, listens, replays and goes live.
    const calling = (async () => {
      for (; made < CALLS; made++) await call(A, w, turn.turnId, 'busy__lookup', { email: `${made}@b` });
    })();
    await waitUntil(() => made >= 3);
    const stream = await subscribeTurnEvents(B.wsUrl, w.customer, {
      assistantId: w.assistantId,
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
