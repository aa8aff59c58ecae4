import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { waitUntil } from '../../support/wait.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;
let a: World;
let b: World;

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  a = await buildWorld(t, peer.url, 'Alpha');
  b = await buildWorld(t, peer.url, 'Beta');
  await connectTools(t, a);
  await connectTools(t, b);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('the live turn debugger', () => {
  it("should show a customer its own workspace's calls and no other's", async () => {
    const live = t.app.services.turnEvents.subscriberCount;
    const stream = await subscribeTurnEvents(t.wsUrl, a.customer, { assistantId: a.assistantId });
    try {
      // Live once the hub counts it: what happens from here on reaches it.
      await waitUntil(() => t.app.services.turnEvents.subscriberCount > live);
      const tb = await begin(t, b, 'beta-conv');
      await call(t, b, tb.turnId, 'beta__lookup', { email: 'b@b' });
      const ta = await begin(t, a, 'alpha-conv');
      await call(t, a, ta.turnId, 'alpha__lookup', { email: 'a@a' });
      const events = await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      expect(events.map((e) => e.type)).toEqual(['TURN_STARTED', 'CALL_STARTED', 'CALL_FINISHED']);
      expect(events.every((e) => e.assistantId === a.assistantId && e.conversationId === 'alpha-conv')).toBe(
        true,
      );
      expect(events[2]!.call).toMatchObject({
        seq: 1,
        name: 'alpha__lookup',
        operationKey: 'connector.alpha.lookup',
        status: 'SUCCEEDED',
      });
      expect(events[1]!.call).toMatchObject({ seq: 1, status: 'RUNNING' });
      // More of Beta's, then one more call of Alpha's: events arrive in order, so once Alpha's
      // arrives, any of Beta's would have arrived before it.
      await call(t, b, tb.turnId, 'beta__lookup', { email: 'b2@b' });
      await call(t, a, ta.turnId, 'alpha__lookup', { email: 'a2@a' });
      await stream.waitFor((e) => e.filter((x) => x.type === 'CALL_FINISHED').length === 2);
      expect(stream.events.some((e) => e.conversationId === 'beta-conv')).toBe(false);
      expect(stream.events).toHaveLength(5);
    } finally {
      await stream.close();
    }
  });

  it("should refuse a customer's subscription to another workspace's assistant", async () => {
    const stream = await subscribeTurnEvents(t.wsUrl, a.customer, { assistantId: b.assistantId });
    try {
      await expect(stream.waitFor(() => false, 20_000)).rejects.toThrow(/not found/);
    } finally {
      await stream.close();
    }
    const noAssistant = await subscribeTurnEvents(t.wsUrl, a.customer, {});
    try {
      await expect(noAssistant.waitFor(() => false, 20_000)).rejects.toThrow(/give assistantId/);
    } finally {
      await noAssistant.close();
    }
  });

  it('should resume after a dropped socket with afterSeq: every missed event once, then live', async () => {
    const first = await subscribeTurnEvents(t.wsUrl, a.customer, {
      assistantId: a.assistantId,
      conversationId: 'resume',
    });
    const turn = await begin(t, a, 'resume');
    const seen = await first.waitFor((e) => e.length === 1);
    const lastSeq = seen[0]!.seq;
    await first.close();

    for (let i = 0; i < 3; i++) await call(t, a, turn.turnId, 'alpha__lookup', { email: `${i}@a` });

    const second = await subscribeTurnEvents(t.wsUrl, a.customer, {
      assistantId: a.assistantId,
      conversationId: 'resume',
      afterSeq: lastSeq,
    });
    try {
      const replayed = await second.waitFor((e) => e.length >= 6);
      expect(replayed.map((e) => [e.type, e.call?.seq])).toEqual([
        ['CALL_STARTED', 1],
        ['CALL_FINISHED', 1],
        ['CALL_STARTED', 2],
        ['CALL_FINISHED', 2],
        ['CALL_STARTED', 3],
        ['CALL_FINISHED', 3],
      ]);
      await call(t, a, turn.turnId, 'alpha__lookup', { email: 'live@a' });
      await second.waitFor((e) => e.length >= 8);
      // One more call: once its events arrive, a duplicate of an earlier one would have too.
      await call(t, a, turn.turnId, 'alpha__lookup', { email: 'last@a' });
      await second.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED' && x.call?.seq === 5));
      const seqs = second.events.map((e) => e.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(second.events).toHaveLength(10);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    } finally {
      await second.close();
    }
  });

  it('should release the subscription on this instance when the client goes away', async () => {
    const hub = t.app.services.turnEvents;
    const until = async (count: number) => {
      await waitUntil(() => hub.subscriberCount === count);
      return hub.subscriberCount;
    };
    // Earlier tests' streams are released asynchronously after their sockets close.
    expect(await until(0)).toBe(0);
    const stream = await subscribeTurnEvents(t.wsUrl, a.customer, { assistantId: a.assistantId });
    expect(await until(1)).toBe(1);
    await stream.close();
    expect(await until(0)).toBe(0);
  });
});
