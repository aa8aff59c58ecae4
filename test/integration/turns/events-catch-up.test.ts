/**
 * A live debugger subscription never misses an event silently (issue 25, item 3): when the
 * instance's LISTEN session is replaced (killed by the server, or given up after an event-loop
 * stall past the heartbeat deadline), every live subscription catches up from the database, once
 * the new session listens, with no gap and no duplicate, and stays open.
 */
import 'reflect-metadata';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTANCE_APPLICATION_PREFIX, Notifier } from '../../../src/db/notifier.js';
import { batchJson } from '../../../src/db/group-commit.js';
import { uuidv7 } from '../../../src/db/ids.js';
import { createLogger } from '../../../src/logger.js';
import { TurnEventHub, type TurnEventRecord } from '../../../src/turns/events.js';
import { CALL_START_SQL } from '../../../src/turns/call-sql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { waitUntil } from '../../support/wait.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, sleep, type World } from '../../support/turns.js';

const quiet = createLogger(
  'error',
  new Writable({
    write: (_chunk, _encoding, done) => done(),
  }),
);

let url: string;
let t: TestApp;
let peer: SdkServerHandle;
let w: World;
/** A plain session on the database, for the statements the test itself sends. */
let admin: pg.Client;

beforeAll(async () => {
  // A database of its own: no other file's instance keeps the watch mark ahead here.
  url = await createEmptyDatabase();
  t = await startTestApp({ databaseUrl: url });
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  w = await buildWorld(t, peer.url, 'Gap');
  await connectTools(t, w);
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await t?.stop();
  await peer?.close();
});

/** The seqs stored for a turn, in order. */
async function storedSeqs(turnId: string): Promise<number[]> {
  const rows = await admin.query<{ seq: string }>(
    'select seq from turn_event where turn_id = $1 order by seq',
    [rawId(turnId)],
  );
  return rows.rows.map((r) => Number(r.seq));
}

/** Kills the LISTEN session of the instance `notifier` belongs to, as a failover or an idle-session killer does. */
async function terminateListenSession(notifier: Notifier): Promise<number> {
  const res = await admin.query<{ n: number }>(
    'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1',
    [`${INSTANCE_APPLICATION_PREFIX}${notifier.instanceId}`],
  );
  return res.rows[0]!.n;
}

describe('a LISTEN session terminated by the server', () => {
  it('should give a live subscriber every event of calls made before, during and after the reconnect, once', async () => {
    const notifier = t.app.services.notifier;
    const turn = await begin(t, w, 'killed');
    const stream = await subscribeTurnEvents(t.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'killed',
    });
    try {
      await waitUntil(() => t.app.services.turnEvents.subscriberCount === 1);
      const reconnects = notifier.stats().reconnects;
      let made = 0;
      const lookup = () => call(t, w, turn.turnId, 'gap__lookup', { email: `${made++}@gap` });
      for (let i = 0; i < 3; i++) await lookup();
      expect(await terminateListenSession(notifier)).toBe(1);
      await waitUntil(() => !notifier.healthy);
      // Calls while the instance has no LISTEN session: their signals reach no one.
      do await lookup();
      while (!notifier.healthy);
      for (let i = 0; i < 3; i++) await lookup();
      expect(notifier.stats().reconnects).toBe(reconnects + 1);

      // CALL_STARTED and CALL_FINISHED of every call (the turn's TURN_STARTED came before the subscription).
      const expected = (await storedSeqs(turn.turnId)).slice(1);
      expect(expected).toHaveLength(2 * made);
      // The last call's events come live, after any catch-up the reconnect started.
      await stream.waitFor((e) => e.some((x) => x.seq === expected.at(-1)));
      expect({ received: stream.events.length, expected: expected.length }).toEqual({
        received: expected.length,
        expected: expected.length,
      });
      expect(stream.events.map((e) => e.seq).sort((a, b) => a - b)).toEqual(expected);
      expect(stream.errors).toEqual([]);
    } finally {
      await stream.close();
    }
  });
});

describe('an event-loop stall past the heartbeat deadline', () => {
  it('should count as a dead LISTEN session, and catch the subscriber up on what was committed meanwhile', async () => {
    // This "instance" watches with a short heartbeat and a short-lived watch mark, so that a stall
    // of about a second lets the mark lapse: the calls recorded meanwhile send no NOTIFY at all.
    const notifier = new Notifier(url, quiet, {
      heartbeatMs: 100,
      heartbeatDeadlineMs: 50,
      eventsWatchTtlMs: 300,
    });
    await notifier.start();
    const hub = new TurnEventHub(t.app.services.orm, notifier, quiet);
    const turn = await begin(t, w, 'stalled');
    const filter = {
      workspaceId: rawId(w.workspaceId),
      assistantId: rawId(w.assistantId),
      conversationId: 'stalled',
    };
    const received: TurnEventRecord[] = [];
    const stream = hub.subscribe(filter, null);
    const consuming = (async () => {
      for await (const event of stream) received.push(event);
    })();
    try {
      await waitUntil(() => hub.subscriberCount === 1);
      await call(t, w, turn.turnId, 'gap__lookup', { email: 'before@gap' });
      await waitUntil(() => received.length === 2);
      const reconnects = notifier.stats().reconnects;

      // Another instance records two call starts while this one is stalled: PostgreSQL runs them
      // after half a second, once this instance's mark has lapsed.
      const starts = batchJson(
        [0, 1].map(() =>
          JSON.stringify({
            turn_id: rawId(turn.turnId),
            call_id: uuidv7(),
            payload: { name: 'gap__lookup' },
          }),
        ),
      );
      const elsewhere = admin.query(
        `select pg_sleep(0.5); ${CALL_START_SQL.text.replace('$1', admin.escapeLiteral(starts))}`,
      );
      const until = Date.now() + 1_200;
      let spins = 0;
      while (Date.now() < until) spins++; // the stall: nothing of this process runs meanwhile
      expect(spins).toBeGreaterThan(0);
      await elsewhere;

      // Given up on after the stall, then listened again (bounded, so that without it the counts below fail).
      await Promise.race([waitUntil(() => notifier.stats().reconnects > reconnects), sleep(5_000)]);
      await call(t, w, turn.turnId, 'gap__lookup', { email: 'after@gap' });
      // TURN_STARTED came before the subscription; then 2 + 2 + 2 events.
      const expected = (await storedSeqs(turn.turnId)).slice(1);
      expect(expected).toHaveLength(6);
      // The last call's events come live, after any catch-up the reconnect started.
      await Promise.race([waitUntil(() => received.some((e) => e.seq === expected.at(-1))), sleep(5_000)]);
      expect({ received: received.length, expected: expected.length }).toEqual({
        received: expected.length,
        expected: expected.length,
      });
      expect(received.map((e) => e.seq).sort((a, b) => a - b)).toEqual(expected);
      expect(notifier.stats().reconnects).toBe(reconnects + 1);
    } finally {
      await stream.return?.();
      await consuming;
      hub.close();
      await notifier.stop();
    }
  });
});
