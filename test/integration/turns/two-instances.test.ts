import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { fromGlobalId } from '../../../src/graphql/node.js';
import { disableOperation, enableOperation } from '../../../src/operations/operation.service.js';
import { DisableDocument, EnableDocument } from '../../generated/graphql.js';
import type { TestApp } from '../../support/app.js';
import type { SdkServerHandle } from '../../support/mcp-servers.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { waitUntil } from '../../support/wait.js';
import {
  begin,
  buildWorld,
  call,
  connectTools,
  startTwoInstances,
  type TwoInstances,
  type World,
} from '../../support/turns.js';

let A: TestApp;
let B: TestApp;
let peer: SdkServerHandle;
let instances: TwoInstances;

beforeAll(async () => {
  instances = await startTwoInstances();
  ({ A, B, peer } = instances);
});

/** Each test owns its workspace, connection and assistant: a disable in one never reaches another. */
async function ownWorld(): Promise<World> {
  const w = await buildWorld(A, peer.url, 'Shared');
  await connectTools(A, w);
  return w;
}

afterAll(() => instances.stop());

describe('two instances on one database', () => {
  // How fast it travels (goal < 1 s) is measured by `npm run bench` (turns: disable propagation A → B).
  it("should stop declaring and refuse calls on B after a disable on A, by A's NOTIFY", async () => {
    const w = await ownWorld();
    const turn = await begin(B, w, 'two');
    expect(turn.tools.map((x) => x.name)).toContain('shared__lookup');
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('SUCCEEDED');

    // B's tool cache has no expiry: only the NOTIFY can make B refuse. Without it, this never ends.
    await A.ok(DisableDocument, { input: { operationId: w.ops.lookup!.id, reason: 'incident' } }, w.operator);
    await waitUntil(
      async () => (await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status === 'UNAVAILABLE',
    );
    expect((await begin(B, w, 'two-after')).tools.map((x) => x.name)).not.toContain('shared__lookup');
    await A.ok(EnableDocument, { input: { operationId: w.ops.lookup!.id } }, w.operator);
  });

  it('should reach B when the incident switch is thrown by the service itself, with no resolver involved', async () => {
    const w = await ownWorld();
    // The NOTIFY belongs to the service: a script or job that disables through it reaches every instance.
    const turn = await begin(B, w, 'two-service');
    expect(turn.tools.map((x) => x.name)).toContain('shared__lookup');
    const actor = { tokenId: 'none', role: Role.ADMIN, workspaceId: null, label: 'incident script' };
    const operationId = fromGlobalId(w.ops.lookup!.id)!.id;
    await disableOperation(A.app.services, A.app.services.orm.em.fork(), actor, operationId, 'incident');
    await waitUntil(
      async () => (await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status === 'UNAVAILABLE',
    );
    await enableOperation(A.app.services, A.app.services.orm.em.fork(), actor, operationId);
    await waitUntil(async () =>
      (await begin(B, w, 'two-service-after')).tools.some((x) => x.name === 'shared__lookup'),
    );
  });

  it('should show on a debugger subscribed to B the calls made through A', async () => {
    const w = await ownWorld();
    const live = B.app.services.turnEvents.subscriberCount;
    const stream = await subscribeTurnEvents(B.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'cross',
    });
    try {
      await waitUntil(() => B.app.services.turnEvents.subscriberCount > live);
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
    const w = await ownWorld();
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
    await waitUntil(() => B.app.services.notifier.healthy);
    expect((await call(B, w, turn.turnId, 'shared__lookup', { email: 'x' })).status).toBe('SUCCEEDED');
  });
});
