/**
 * What the turn debugger shows of a call: arguments when it starts, the server's progress and log
 * notifications as they arrive on the call's stream, and the result as the model received it —
 * live, on replay, and on the TurnCall for later reading; bounded against a flooding server.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnCallsDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import {
  startSdkServer,
  type PeerExtra,
  type PeerTool,
  type SdkServerHandle,
} from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { begin, buildWorld, call, connectTools, type World } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

const KEY = 'dbg-key-0123456789abcdef';

/** How many of long_job's steps the test has seen on its subscription: the job sends the next only then. */
const longJob = { seen: 0 };

async function progress(extra: PeerExtra, progress: number, total: number, message: string) {
  const token = extra._meta?.progressToken;
  if (token === undefined) throw new Error('the call carried no progressToken');
  await extra.sendNotification({
    method: 'notifications/progress',
    params: { progressToken: token, progress, total, message },
  });
}

const TOOLS: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string() },
    annotations: { readOnlyHint: true },
    handler: (args) => ({
      content: [{ type: 'text', text: `found ${String(args.email)}` }],
      structuredContent: { customer: { email: args.email, plan: 'pro' } },
    }),
  },
  {
    name: 'long_job',
    description: 'Works in steps and says how far it got',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      for (let i = 1; i <= 3; i++) {
        await progress(extra, i, 3, `step ${i} of 3`);
        await waitUntil(() => longJob.seen >= i);
      }
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'job', data: `done; key was ${KEY}` },
      });
      return { content: [{ type: 'text', text: 'all 3 steps done' }] };
    },
  },
  {
    name: 'flood',
    description: 'Floods its stream with notifications',
    annotations: { readOnlyHint: true },
    handler: async (_args, extra) => {
      for (let i = 0; i < 900; i++) await progress(extra, i, 900, `tick ${i}`);
      return { content: [{ type: 'text', text: 'flooded' }] };
    },
  },
];

let t: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  // Every progress line goes out live as it arrives, up to the cap of 30 (the 0.2 s throttle is
  // the unit test's, in test/unit/turns/progress.test.ts): the order comes from events, not sleeps.
  t = await startTestApp({ env: { PROGRESS_INTERVAL_MS: '0' } });
  peer = await startSdkServer({ stateful: false, json: false, tools: TOOLS });
  w = await buildWorld(t, peer.url, 'Jobs', undefined, { kind: 'BEARER', key: KEY });
  await connectTools(t, w);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('what the debugger shows of a call', () => {
  it('should show the arguments on CALL_STARTED and the result as the model got it on CALL_FINISHED', async () => {
    const stream = await subscribeTurnEvents(t.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'details-1',
    });
    try {
      const turn = await begin(t, w, 'details-1');
      const answer = await call(t, w, turn.turnId, 'jobs__lookup', { email: 'ann@example.com' });
      const events = await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      const started = events.find((e) => e.type === 'CALL_STARTED')!;
      expect(started.call).toMatchObject({ status: 'RUNNING', arguments: { email: 'ann@example.com' } });
      const finished = events.find((e) => e.type === 'CALL_FINISHED')!;
      expect(finished.call!.result).toEqual({
        content: answer.content,
        structuredContent: answer.structuredContent,
        truncated: false,
      });
      expect(finished.call!.result!.structuredContent).toEqual({
        customer: { email: 'ann@example.com', plan: 'pro' },
      });
      expect(Date.parse(finished.at)).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      await stream.close();
    }
  });

  it('should stream progress and log lines as they arrive, before the call finishes, with secrets scrubbed', async () => {
    // From the start of the conversation (a replay, then live): the socket's subscription may
    // reach the server after beginTurn's TURN_STARTED was signalled.
    const stream = await subscribeTurnEvents(t.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'details-2',
      afterSeq: 0,
    });
    try {
      const turn = await begin(t, w, 'details-2');
      const pending = call(t, w, turn.turnId, 'jobs__long_job');
      // Each progress line is on screen while the call is still running: the job sends the next
      // step only once the subscriber has received this one.
      for (let step = 1; step <= 3; step++) {
        const seen = await stream.waitFor((e) => e.filter((x) => x.type === 'CALL_PROGRESS').length >= step);
        expect(seen.some((x) => x.type === 'CALL_FINISHED')).toBe(false);
        longJob.seen = step;
      }
      const result = await pending;
      expect(result.status).toBe('SUCCEEDED');
      const events = await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      const lines = events.filter((e) => e.type === 'CALL_PROGRESS').map((e) => e.call!.progress!);
      expect(lines.filter((l) => l.kind === 'PROGRESS').map((l) => [l.progress, l.total, l.message])).toEqual(
        [
          [1, 3, 'step 1 of 3'],
          [2, 3, 'step 2 of 3'],
          [3, 3, 'step 3 of 3'],
        ],
      );
      const log = lines.find((l) => l.kind === 'LOG')!;
      expect(log).toMatchObject({ level: 'info', message: 'job: done; key was [redacted]' });
      expect(JSON.stringify(events)).not.toContain(KEY);
      // In order: started, the lines, finished; every progress event belongs to the call.
      expect(events.map((e) => e.type)).toEqual([
        'TURN_STARTED',
        'CALL_STARTED',
        'CALL_PROGRESS',
        'CALL_PROGRESS',
        'CALL_PROGRESS',
        'CALL_PROGRESS',
        'CALL_FINISHED',
      ]);
      expect(new Set(events.slice(1).map((e) => e.call!.seq))).toEqual(new Set([1]));

      // The same, later, on the TurnCall.
      const later = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.customer);
      const c = later.turn!.calls.nodes[0]!;
      expect(c.result!.content).toEqual([{ type: 'text', text: 'all 3 steps done' }]);
      expect(c.progress.map((l) => l.message)).toEqual([
        'step 1 of 3',
        'step 2 of 3',
        'step 3 of 3',
        'job: done; key was [redacted]',
      ]);
      expect(c.progressDropped).toBe(0);
    } finally {
      await stream.close();
    }
  });

  it('should bound what a flooding server costs: a few events and the last lines, the rest counted', async () => {
    const stream = await subscribeTurnEvents(t.wsUrl, w.admin, {
      assistantId: w.assistantId,
      conversationId: 'details-3',
    });
    try {
      const turn = await begin(t, w, 'details-3');
      const result = await call(t, w, turn.turnId, 'jobs__flood');
      expect(result.status).toBe('SUCCEEDED');
      await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      const rows = await t.app.services.orm.em
        .getConnection()
        .execute<{ n: string }[]>(
          `select count(*) as n from turn_event where type = 'CALL_PROGRESS' and turn_id = ?`,
          [Buffer.from(turn.turnId, 'base64url').toString().split(':')[1]],
        );
      const stored = Number(rows[0]!.n);
      expect(stored).toBeGreaterThanOrEqual(1);
      expect(stored).toBeLessThanOrEqual(30);
      expect(stream.events.filter((e) => e.type === 'CALL_PROGRESS')).toHaveLength(stored);
      const later = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
      const c = later.turn!.calls.nodes[0]!;
      expect(c.progress).toHaveLength(50);
      expect(c.progress.at(-1)!.message).toBe('tick 899');
      expect(c.progressDropped).toBe(900 - 50);
    } finally {
      await stream.close();
    }
  });

  it('should replay the same details after a resubscribe', async () => {
    const turn = await begin(t, w, 'details-4');
    await call(t, w, turn.turnId, 'jobs__lookup', { email: 'bob@example.com' });
    const stream = await subscribeTurnEvents(t.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'details-4',
      afterSeq: 0,
    });
    try {
      const events = await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      expect(events.find((e) => e.type === 'CALL_STARTED')!.call!.arguments).toEqual({
        email: 'bob@example.com',
      });
      expect(events.find((e) => e.type === 'CALL_FINISHED')!.call!.result!.content).toEqual([
        { type: 'text', text: 'found bob@example.com' },
      ]);
    } finally {
      await stream.close();
    }
  });
});
