import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisableDocument, EnableDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

let A: TestApp;
let B: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  A = await startTestApp();
  B = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  w = await buildWorld(A, peer.url, 'Shared');
  await connectTools(A, w);
});

afterAll(async () => {
  await A.stop();
  await B.stop();
  await peer.close();
});

describe('two instances on one database', () => {
  it('should stop declaring and refuse calls on B within 1 s of a disable on A', async () => {
    const turn = await begin(B, w, 'two');
    expect(turn.tools.map((x) => x.name)).toContain('shared__lookup');
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('SUCCEEDED');

    const started = performance.now();
    await A.ok(DisableDocument, { input: { operationId: w.ops.lookup!.id, reason: 'incident' } }, w.operator);
    let propagatedMs = Infinity;
    while (performance.now() - started < 2_000) {
      const res = await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' });
      if (res.status === 'UNAVAILABLE') {
        propagatedMs = performance.now() - started;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    console.log(`disable propagated from instance A to instance B in ${propagatedMs.toFixed(1)} ms`);
    expect(propagatedMs).toBeLessThan(1_000);
    expect((await begin(B, w, 'two-after')).tools.map((x) => x.name)).not.toContain('shared__lookup');
    await A.ok(EnableDocument, { input: { operationId: w.ops.lookup!.id } }, w.operator);
  });

  it('should show on a debugger subscribed to B the calls made through A', async () => {
    const stream = await subscribeTurnEvents(B.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'cross',
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const turn = await begin(A, w, 'cross');
      await call(A, w, turn.turnId, 'shared__update', { email: 'x', plan: 'pro' });
      const events = await stream.waitFor((e) => e.some((x) => x.type === 'CALL_FINISHED'));
      expect(events.map((e) => e.type)).toEqual(['TURN_STARTED', 'CALL_STARTED', 'CALL_FINISHED']);
      expect(events[2]!.call).toMatchObject({ name: 'shared__update', status: 'SUCCEEDED' });
    } finally {
      await stream.close();
    }
  });

  it('should bypass the cache while the LISTEN connection is down, never trusting it stale', async () => {
    const turn = await begin(B, w, 'bypass');
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('SUCCEEDED');
    B.app.services.notifier.dropConnectionForTest();
    expect(B.app.services.notifier.healthy).toBe(false);
    await A.ok(
      DisableDocument,
      { input: { operationId: w.ops.lookup!.id, reason: 'while B is deaf' } },
      w.operator,
    );
    // B cannot have heard the NOTIFY, yet it reads the truth from the database.
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('UNAVAILABLE');
    await A.ok(EnableDocument, { input: { operationId: w.ops.lookup!.id } }, w.operator);
    const deadline = Date.now() + 5_000;
    while (!B.app.services.notifier.healthy && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(B.app.services.notifier.healthy).toBe(true);
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('SUCCEEDED');
  });
});
