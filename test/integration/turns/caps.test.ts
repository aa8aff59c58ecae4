/**
 * Concurrency caps on the call path, across instances on one database (issue 29). Slots are leased
 * from PostgreSQL; lease expiry runs on an injected clock shared by the instances (fake time: a dead
 * instance's slots come back without sleeping through the lease).
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CapsOfDocument,
  GuardedCallDocument,
  SetCallCapDocument,
  UpdateConnectionDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { sendJson, startRawToolPeer, type RawServerHandle } from '../../support/mcp-servers.js';
import { waitUntil } from '../../support/wait.js';
import { FakeClock } from '../../support/fake-clock.js';
import type { Clock } from '../../../src/clock.js';
import { begin, buildWorld, connectTools, type World } from '../../support/turns.js';
import { DEFAULT_CAP_LEASE_TTL_MS } from '../../../src/guards/cap.js';

/** A tool server that holds every call until the test answers it; it notes each call's `n`. */
interface HoldPeer {
  handle: RawServerHandle;
  /** `n` of each tools/call received, in order, by tool name. */
  received: Record<string, unknown[]>;
  held: { res: ServerResponse; id: unknown; n: unknown }[];
}

async function startHoldPeer(): Promise<HoldPeer> {
  const peer: HoldPeer = { handle: null as unknown as RawServerHandle, received: {}, held: [] };
  peer.handle = await startRawToolPeer((req, res) => {
    const params = (req.body as { params?: { name?: unknown; arguments?: { n?: unknown } } }).params;
    const name = String(params?.name);
    (peer.received[name] ??= []).push(params?.arguments?.n);
    peer.held.push({ res, id: req.id, n: params?.arguments?.n });
  });
  return peer;
}

/** Answers the oldest held call. */
function answerOne(peer: HoldPeer): void {
  const h = peer.held.shift()!;
  sendJson(h.res, 200, {
    jsonrpc: '2.0',
    id: h.id,
    result: { content: [{ type: 'text', text: `ok ${String(h.n)}` }] },
  });
}

let clock = Date.now();
const now = () => clock;
/** Instance A's timers (a call's wait for a slot) on fake time; its wall time is `now`'s. */
const waits = new FakeClock();
const clockOfA: Clock = {
  now,
  monotonic: () => waits.monotonic(),
  setTimeout: (fn, ms) => waits.setTimeout(fn, ms),
  clearTimeout: (timer) => waits.clearTimeout(timer),
};
let A: TestApp;
let B: TestApp;
const peers: HoldPeer[] = [];

beforeAll(async () => {
  A = await startTestApp({ clock: clockOfA });
  B = await startTestApp({ now });
});

afterAll(async () => {
  await A.stop();
  await B.stop();
  for (const p of peers) {
    for (const h of p.held) h.res.destroy();
    await p.handle.close();
  }
});

async function ownWorld(name: string): Promise<{ w: World; peer: HoldPeer }> {
  const peer = await startHoldPeer();
  peers.push(peer);
  const w = await buildWorld(A, peer.handle.url, name);
  await connectTools(A, w);
  const updated = await A.ok(
    UpdateConnectionDocument,
    { input: { connectionId: w.connectionId, timeoutMs: 8000 } },
    w.operator,
  );
  expect(updated.updateConnection.userErrors).toEqual([]);
  return { w, peer };
}

function call(t: TestApp, w: World, turnId: string, name: string, n: number) {
  return t
    .ok(GuardedCallDocument, { input: { turnId, name, arguments: { n } } }, w.runtime)
    .then((r) => r.callTool);
}

async function setCap(w: World, maxInFlight: number | null, maxWaitMs: number) {
  const set = await A.ok(
    SetCallCapDocument,
    { input: { connectionId: w.connectionId, maxInFlight, maxWaitMs } },
    w.operator,
  );
  expect(set.setCallCap.userErrors).toEqual([]);
  return set.setCallCap.callCap;
}

const rawIdOf = (w: World) => rawId(w.connectionId);
const capIdOf = (t: TestApp, w: World) => t.app.services.guard.caps(rawIdOf(w))[0]!.id;

async function capHeardBy(t: TestApp, w: World) {
  await waitUntil(() => t.app.services.guard.caps(rawId(w.connectionId)).length === 1);
}

describe('concurrency caps', () => {
  it('should hold a cap across two instances and refuse the call over it, unsent, with a message for the model', async () => {
    const { w, peer } = await ownWorld('Narrow');
    expect(await setCap(w, 2, 0)).toEqual({
      scope: 'CONNECTION',
      maxInFlight: 2,
      maxWaitMs: 0,
      operationId: null,
    });
    await capHeardBy(B, w);
    const shown = await A.ok(
      CapsOfDocument,
      { connectionId: w.connectionId, operationId: w.ops.lookup!.id },
      w.operator,
    );
    expect(shown.connection!.callCap).toEqual({ scope: 'CONNECTION', maxInFlight: 2, maxWaitMs: 0 });
    expect(shown.operation!.callCap).toBeNull();
    const [ta, tb] = [await begin(A, w, 'narrow-a'), await begin(B, w, 'narrow-b')];
    const first = call(A, w, ta.turnId, 'narrow__lookup', 1);
    const second = call(B, w, tb.turnId, 'narrow__lookup', 2);
    await waitUntil(() => peer.held.length === 2);
    for (const [t, turn] of [
      [A, ta],
      [B, tb],
    ] as const) {
      const over = await call(t, w, turn.turnId, 'narrow__lookup', 3);
      expect(over).toMatchObject({ ok: false, status: 'RATE_LIMITED', attempts: 0, recorded: true });
      expect(over.retryAfterMs).toBeGreaterThan(0);
      expect(over.message).toBe(
        'This tool is busy: narrow__lookup already has 2 calls in flight for its connection "narrow", the most allowed at once. Nothing was done; try again in about 1 seconds, or answer without it.',
      );
    }
    expect(peer.received.lookup).toEqual([1, 2]);
    answerOne(peer);
    answerOne(peer);
    expect((await first).status).toBe('SUCCEEDED');
    expect((await second).status).toBe('SUCCEEDED');
    // The slots are free again: a call on either instance goes through.
    const again = call(B, w, tb.turnId, 'narrow__lookup', 4);
    await waitUntil(() => peer.held.length === 1);
    answerOne(peer);
    expect((await again).status).toBe('SUCCEEDED');
  });

  it('should give waiters a slot in line order, and refuse a WRITE that waited too long without ever sending it', async () => {
    const { w, peer } = await ownWorld('Queue');
    await setCap(w, 1, 3000);
    await capHeardBy(B, w);
    const turn = await begin(A, w, 'queue');
    const holder = call(A, w, turn.turnId, 'queue__lookup', 0);
    await waitUntil(() => peer.held.length === 1);
    const waiters = [1, 2, 3].map((n) => call(A, w, turn.turnId, 'queue__lookup', n));
    await waitUntil(() => A.app.services.guard.capSlots(capIdOf(A, w))?.waiting === 3);
    for (let i = 0; i < 3; i++) {
      answerOne(peer);
      await waitUntil(() => peer.held.length === 1);
    }
    answerOne(peer);
    expect((await holder).status).toBe('SUCCEEDED');
    for (const r of await Promise.all(waiters)) expect(r.status).toBe('SUCCEEDED');
    expect(peer.received.lookup).toEqual([0, 1, 2, 3]);

    // Over-wait: the cap's wait is short; a WRITE waiting behind a held call is refused, never sent.
    await setCap(w, 1, 100);
    await waitUntil(() => A.app.services.guard.caps(rawIdOf(w)).some((c) => c.maxWaitMs === 100));
    const busy = call(A, w, turn.turnId, 'queue__lookup', 10);
    await waitUntil(() => peer.held.length === 1);
    const writing = call(A, w, turn.turnId, 'queue__update', 11);
    await waitUntil(() => A.app.services.guard.capSlots(capIdOf(A, w))?.waiting === 1);
    await waits.advance(99);
    expect(A.app.services.guard.capSlots(capIdOf(A, w))?.waiting).toBe(1);
    await waits.advance(1);
    const write = await writing;
    expect(write).toMatchObject({ ok: false, status: 'RATE_LIMITED', attempts: 0, recorded: true });
    answerOne(peer);
    expect((await busy).status).toBe('SUCCEEDED');
    await new Promise((r) => setTimeout(r, 300)); // a slot freed now must not reach the refused WRITE
    expect(peer.received.update).toBeUndefined();
    expect(A.app.services.guard.capSlots(capIdOf(A, w))).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it("should give a dead instance's slots back once its lease expires (fake time)", async () => {
    const { w, peer } = await ownWorld('Dead');
    await setCap(w, 1, 0);
    const C = await startTestApp({ now });
    try {
      await capHeardBy(C, w);
      await capHeardBy(B, w);
      const tc = await begin(C, w, 'dead-c');
      const onC = call(C, w, tc.turnId, 'dead__lookup', 1);
      await waitUntil(() => peer.held.length === 1);
      C.app.services.guard.close(); // what a crash leaves: the lease stays, unrenewed
      const tb = await begin(B, w, 'dead-b');
      expect((await call(B, w, tb.turnId, 'dead__lookup', 2)).status).toBe('RATE_LIMITED');
      clock += DEFAULT_CAP_LEASE_TTL_MS + 1;
      const onB = call(B, w, tb.turnId, 'dead__lookup', 3);
      await waitUntil(() => peer.held.length === 2);
      expect(peer.received.lookup).toEqual([1, 3]);
      answerOne(peer);
      answerOne(peer);
      expect((await onB).status).toBe('SUCCEEDED');
      expect((await onC).status).toBe('SUCCEEDED');
    } finally {
      await C.stop();
    }
  });

  it('should refuse a cap out of range, and remove one', async () => {
    const { w } = await ownWorld('Ranges');
    const bad = await A.ok(
      SetCallCapDocument,
      { input: { connectionId: w.connectionId, maxInFlight: 0 } },
      w.operator,
    );
    expect(bad.setCallCap.userErrors.map((e) => e.code)).toEqual(['LIMIT_INVALID']);
    const badWait = await A.ok(
      SetCallCapDocument,
      { input: { operationId: w.ops.lookup!.id, maxInFlight: 3, maxWaitMs: 60_000 } },
      w.operator,
    );
    expect(badWait.setCallCap.userErrors.map((e) => e.code)).toEqual(['LIMIT_INVALID']);
    const op = await A.ok(
      SetCallCapDocument,
      { input: { operationId: w.ops.lookup!.id, maxInFlight: 3 } },
      w.operator,
    );
    expect(op.setCallCap.callCap).toEqual({
      scope: 'OPERATION',
      maxInFlight: 3,
      maxWaitMs: 1000,
      operationId: w.ops.lookup!.id,
    });
    expect(await setCap(w, null, 0)).toBeNull();
    const removed = await A.ok(
      SetCallCapDocument,
      { input: { operationId: w.ops.lookup!.id, maxInFlight: null } },
      w.operator,
    );
    expect(removed.setCallCap.callCap).toBeNull();
    await waitUntil(() => A.app.services.guard.caps(rawIdOf(w)).length === 0);
    const audited = await A.app.services.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from audit_event where action = 'SET_CALL_CAP' and workspace_id = ?`,
        [rawId(w.workspaceId)],
      );
    expect(audited[0]!.n).toBe(3);
  });
});
