/**
 * Circuit breakers and rate limits on the call path, across two instances on one database
 * (issue 29). The breakers' cool-downs, the buckets' refills and the calls' deadlines run on one
 * FakeClock (test/support/fake-clock.ts) shared by both instances: fake time drives them, nothing
 * sleeps through a window or a call's budget, so a loaded machine cannot push a call past either.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionGuardsDocument,
  GuardedCallDocument,
  OperationGuardsDocument,
  SetBreakerDocument,
  SetCallLimitDocument,
  UpdateConnectionDocument,
} from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startRawToolPeer, type RawServerHandle } from '../../support/mcp-servers.js';
import { waitUntil } from '../../support/wait.js';
import { FakeClock } from '../../support/fake-clock.js';
import { begin, buildWorld, connectTools, type World } from '../../support/turns.js';
import { DEFAULT_BREAKER_RULE } from '../../../src/guards/breaker.js';

type Mode = 'ok' | 'hang' | 'tool_error';

/** A tool server whose answers the test switches: it answers, never answers, or says the tool failed. */
interface SwitchPeer {
  handle: RawServerHandle;
  mode: Mode;
  /** tools/call requests received, by tool name. */
  calls: Record<string, number>;
  hanging: ServerResponse[];
}

async function startSwitchPeer(): Promise<SwitchPeer> {
  const peer: SwitchPeer = { handle: null as unknown as RawServerHandle, mode: 'ok', calls: {}, hanging: [] };
  peer.handle = await startRawToolPeer((req, res, reply) => {
    const name = String((req.body as { params?: { name?: unknown } }).params?.name);
    peer.calls[name] = (peer.calls[name] ?? 0) + 1;
    if (peer.mode === 'hang') {
      peer.hanging.push(res);
      return;
    }
    if (peer.mode === 'tool_error')
      return reply({ isError: true, content: [{ type: 'text', text: 'no such customer' }] });
    reply({ content: [{ type: 'text', text: 'ok' }] });
  });
  return peer;
}

/** Both instances' clock: its wall time starts at the real one (the database's rows compare with it). */
const clock = new FakeClock(Date.now());
let A: TestApp;
let B: TestApp;
const peers: SwitchPeer[] = [];

beforeAll(async () => {
  A = await startTestApp({ clock });
  B = await startTestApp({ clock });
});

afterAll(async () => {
  await A.stop();
  await B.stop();
  for (const p of peers) {
    for (const res of p.hanging) res.destroy();
    await p.handle.close();
  }
});

/**
 * Each test owns its tool server, workspace and connection. Calls time out after 100 ms (the least
 * allowed) of the fake clock: a test moves it past the deadline once the request has arrived.
 */
const TIMEOUT_MS = 100;

async function ownWorld(name: string): Promise<{ w: World; peer: SwitchPeer }> {
  const peer = await startSwitchPeer();
  peers.push(peer);
  const w = await buildWorld(A, peer.handle.url, name);
  const updated = await A.ok(
    UpdateConnectionDocument,
    { input: { connectionId: w.connectionId, timeoutMs: TIMEOUT_MS } },
    w.operator,
  );
  expect(updated.updateConnection.userErrors).toEqual([]);
  await connectTools(A, w);
  return { w, peer };
}

async function call(t: TestApp, w: World, turnId: string, name: string) {
  return (await t.ok(GuardedCallDocument, { input: { turnId, name, arguments: {} } }, w.runtime)).callTool;
}

async function scrape(t: TestApp, token: string): Promise<string> {
  return (await fetch(new URL('/metrics', t.url), { headers: { authorization: `Bearer ${token}` } })).text();
}

async function breakerOf(t: TestApp, w: World) {
  return (await t.ok(ConnectionGuardsDocument, { id: w.connectionId }, w.operator)).connection!.breaker;
}

/**
 * Calls `tool` on A while the server hangs: each attempt (a READ's two, a WRITE's one) ends when
 * the test moves the clock past its deadline, once its request has reached the server.
 */
async function timedOut(w: World, peer: SwitchPeer, turnId: string, slug: string, tool: string) {
  const attempts = tool === 'lookup' ? 2 : 1;
  const sent = peer.calls[tool] ?? 0;
  const pending = call(A, w, turnId, `${slug}__${tool}`);
  for (let i = 1; i <= attempts; i++) {
    await waitUntil(() => peer.calls[tool] === sent + i);
    await clock.advance(TIMEOUT_MS);
  }
  const got = await pending;
  expect(got).toMatchObject({ status: 'TIMEOUT', attempts, durationMs: attempts * TIMEOUT_MS });
  return got;
}

/** Calls `lookup` on A while the server hangs, until the connection's breaker opens. */
async function openByTimeouts(w: World, peer: SwitchPeer, slug: string, turnId: string) {
  peer.mode = 'hang';
  for (let i = 0; i < DEFAULT_BREAKER_RULE.consecutiveFailures; i++)
    await timedOut(w, peer, turnId, slug, 'lookup');
}

describe('circuit breakers', () => {
  it('should open after timeouts, answer later calls at once on both instances, and never send them', async () => {
    const { w, peer } = await ownWorld('Slow');
    const turn = await begin(A, w, 'slow');
    expect(turn.tools.map((t) => t.name)).toContain('slow__lookup');
    expect((await breakerOf(A, w)).state).toBe('CLOSED');
    await openByTimeouts(w, peer, 'slow', turn.turnId);
    const sent = peer.calls.lookup;
    const open = await breakerOf(A, w);
    expect(open).toMatchObject({ state: 'OPEN', enabled: true, forced: null });
    expect(open.reason).toBe('5 calls in a row failed (timeout or upstream error)');

    const refused = await call(A, w, turn.turnId, 'slow__lookup');
    expect(refused).toMatchObject({ ok: false, status: 'UNAVAILABLE', attempts: 0, recorded: true });
    expect(refused.message).toContain('the circuit breaker of the connection "slow" is open');
    expect(refused.message).toContain('Nothing was done');
    expect(refused.retryAfterMs).toBe(DEFAULT_BREAKER_RULE.cooldownMs);
    // Short-circuited: no request, no time (each timed-out call took 2 × 100 ms, a READ's retry included).
    expect(refused.durationMs).toBe(0);

    // B hears it by NOTIFY (no call of B's ever failed) and refuses too, without a request.
    await waitUntil(() => B.app.services.guard.breaker(rawId(w.connectionId))?.state === 'OPEN');
    const turnB = await begin(B, w, 'slow-b');
    expect(await call(B, w, turnB.turnId, 'slow__lookup')).toMatchObject({
      status: 'UNAVAILABLE',
      attempts: 0,
    });
    expect(peer.calls.lookup).toBe(sent);

    // The refusal is on record, with the breaker named for the debugger.
    const rows = await A.app.services.orm.em
      .getConnection()
      .execute<{ status: string; payload: { refused?: unknown } }[]>(
        `select c.status, e.payload from turn_call c join turn_event e on e.call_id = c.id and e.type = 'CALL_FINISHED'
         where c.id = ?`,
        [rawId(refused.callId!)],
      );
    expect(rows[0]).toMatchObject({
      status: 'UNAVAILABLE',
      payload: { refused: { by: 'BREAKER', scope: 'CONNECTION', name: 'slow' } },
    });
    const audited = await A.app.services.orm.em
      .getConnection()
      .execute<{ action: string; actor: string }[]>(
        `select action, actor from audit_event where target_id = ? and action like 'BREAKER%' order by id`,
        [w.connectionId],
      );
    expect(audited).toEqual([{ action: 'BREAKER_OPEN', actor: 'circuit breaker' }]);
    const metrics = await scrape(A, w.operator);
    expect(metrics).toMatch(
      /connected_tools_breaker_transitions_total\{scope="CONNECTION",transition="opened"\} 1/,
    );
  });

  it('should let one probe through after the cool-down, and close when it answers', async () => {
    const { w, peer } = await ownWorld('Probe');
    const turn = await begin(A, w, 'probe');
    await openByTimeouts(w, peer, 'probe', turn.turnId);
    peer.mode = 'ok';
    const sent = peer.calls.lookup!;
    // Still cooling down: refused, not sent.
    await clock.advance(DEFAULT_BREAKER_RULE.cooldownMs - 1);
    expect((await call(A, w, turn.turnId, 'probe__lookup')).status).toBe('UNAVAILABLE');
    expect(peer.calls.lookup).toBe(sent);
    await clock.advance(1);
    expect((await call(A, w, turn.turnId, 'probe__lookup')).status).toBe('SUCCEEDED');
    expect(peer.calls.lookup).toBe(sent + 1);
    await waitUntil(async () => (await breakerOf(A, w)).state === 'CLOSED');
    expect((await call(A, w, turn.turnId, 'probe__lookup')).status).toBe('SUCCEEDED');
    await waitUntil(() => B.app.services.guard.breaker(rawId(w.connectionId))?.state === 'CLOSED');
  });

  it('should never open on a storm of TOOL_ERROR answers', async () => {
    const { w, peer } = await ownWorld('Picky');
    const turn = await begin(A, w, 'picky');
    peer.mode = 'tool_error';
    for (let i = 0; i < DEFAULT_BREAKER_RULE.minCalls + 10; i++) {
      expect((await call(A, w, turn.turnId, 'picky__lookup')).status).toBe('TOOL_ERROR');
    }
    expect(peer.calls.lookup).toBe(DEFAULT_BREAKER_RULE.minCalls + 10);
    expect(await breakerOf(A, w)).toMatchObject({ state: 'CLOSED', reason: null });
  });

  it('should send a WRITE once per call, never while open, and reopen for longer when the probe fails', async () => {
    const { w, peer } = await ownWorld('Writer');
    const turn = await begin(A, w, 'writer');
    peer.mode = 'hang';
    for (let i = 0; i < DEFAULT_BREAKER_RULE.consecutiveFailures; i++) {
      await timedOut(w, peer, turn.turnId, 'writer', 'update');
      // A WRITE that timed out may have reached the server: never sent again.
      expect(peer.calls.update).toBe(i + 1);
    }
    expect((await breakerOf(A, w)).state).toBe('OPEN');
    for (let i = 0; i < 3; i++) {
      expect((await call(A, w, turn.turnId, 'writer__update')).status).toBe('UNAVAILABLE');
      const turnB = await begin(B, w, `writer-b-${i}`);
      await waitUntil(() => B.app.services.guard.breaker(rawId(w.connectionId))?.state === 'OPEN');
      expect((await call(B, w, turnB.turnId, 'writer__update')).status).toBe('UNAVAILABLE');
    }
    expect(peer.calls.update).toBe(DEFAULT_BREAKER_RULE.consecutiveFailures);
    const intents = async () =>
      (
        await A.app.services.orm.em
          .getConnection()
          .execute<{ n: number }[]>(`select count(*)::int as n from ledger_entry where turn_id = ?`, [
            rawId(turn.turnId),
          ])
      )[0]!.n;
    expect(await intents()).toBe(DEFAULT_BREAKER_RULE.consecutiveFailures);

    // The probe (a WRITE) is sent once; it times out: open again, for twice the cool-down.
    await clock.advance(DEFAULT_BREAKER_RULE.cooldownMs);
    await timedOut(w, peer, turn.turnId, 'writer', 'update');
    expect(peer.calls.update).toBe(DEFAULT_BREAKER_RULE.consecutiveFailures + 1);
    await waitUntil(async () => (await breakerOf(A, w)).state === 'OPEN');
    const again = await call(A, w, turn.turnId, 'writer__update');
    expect(again.status).toBe('UNAVAILABLE');
    expect(again.retryAfterMs).toBe(2 * DEFAULT_BREAKER_RULE.cooldownMs);
    expect(peer.calls.update).toBe(DEFAULT_BREAKER_RULE.consecutiveFailures + 1);
    expect(await intents()).toBe(DEFAULT_BREAKER_RULE.consecutiveFailures + 1);
  });

  it("should obey an operator's force, and never touch the operator's switch", async () => {
    const { w, peer } = await ownWorld('Forced');
    const turn = await begin(A, w, 'forced');
    const set = await A.ok(
      SetBreakerDocument,
      { input: { connectionId: w.connectionId, force: 'OPEN' } },
      w.operator,
    );
    expect(set.setBreaker.breaker).toMatchObject({ state: 'CLOSED', forced: 'OPEN' });
    const refused = await call(A, w, turn.turnId, 'forced__lookup');
    expect(refused.status).toBe('UNAVAILABLE');
    expect(refused.message).toContain('an operator opened the circuit breaker of the connection "forced"');
    expect(peer.calls.lookup).toBeUndefined();
    const op = await A.ok(OperationGuardsDocument, { id: w.ops.lookup!.id }, w.operator);
    expect(op.operation!.breaker).toMatchObject({ state: 'CLOSED', enabled: false, forced: null });

    // Forced closed, the timeouts never open it.
    await A.ok(SetBreakerDocument, { input: { connectionId: w.connectionId, force: 'CLOSED' } }, w.operator);
    await openByTimeouts(w, peer, 'forced', turn.turnId);
    await timedOut(w, peer, turn.turnId, 'forced', 'lookup');
    expect(await breakerOf(A, w)).toMatchObject({ state: 'CLOSED', forced: 'CLOSED' });
    // The operator's switch is still on.
    const enabled = await A.app.services.orm.em
      .getConnection()
      .execute<{ enabled: boolean }[]>(`select enabled from operation where id = ?`, [
        rawId(w.ops.lookup!.id),
      ]);
    expect(enabled[0]!.enabled).toBe(true);
    const audited = await A.app.services.orm.em
      .getConnection()
      .execute<{ action: string }[]>(`select action from audit_event where target_id = ? order by id`, [
        w.connectionId,
      ]);
    expect(audited.map((a) => a.action).filter((a) => a === 'SET_BREAKER')).toHaveLength(2);

    // A customer cannot force a breaker.
    const denied = await A.gql(
      SetBreakerDocument,
      { input: { connectionId: w.connectionId, force: 'CLOSED' } },
      w.customer,
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('rate limits', () => {
  it('should hold a limit of 100 calls per minute within 5 % across two instances (fake time)', async () => {
    const { w, peer } = await ownWorld('Busy');
    const set = await A.ok(
      SetCallLimitDocument,
      { input: { connectionId: w.connectionId, calls: 100, per: 'MINUTE', burst: 5 } },
      w.operator,
    );
    expect(set.setCallLimit).toMatchObject({
      callLimit: { scope: 'CONNECTION', calls: 100, per: 'MINUTE', burst: 5 },
      userErrors: [],
    });
    await waitUntil(() => B.app.services.guard.limits(rawId(w.connectionId)).length === 1);
    const [turnA, turnB] = [await begin(A, w, 'busy-a'), await begin(B, w, 'busy-b')];
    const start = clock.now();
    let passed = 0;
    let limited = 0;
    let lastRefusal: Awaited<ReturnType<typeof call>> | null = null;
    // 8 calls a second for a minute, alternating instances: far over the limit.
    while (clock.now() < start + 60_000) {
      for (const [t, turn] of [
        [A, turnA],
        [B, turnB],
      ] as const) {
        const r = await call(t, w, turn.turnId, 'busy__lookup');
        if (r.status === 'SUCCEEDED') passed++;
        else {
          expect(r.status).toBe('RATE_LIMITED');
          limited++;
          lastRefusal = r;
        }
      }
      await clock.advance(250);
    }
    expect(passed).toBeGreaterThanOrEqual(95);
    expect(passed).toBeLessThanOrEqual(105);
    expect(peer.calls.lookup).toBe(passed);
    expect(limited).toBe(480 - passed);
    expect(lastRefusal).toMatchObject({ ok: false, attempts: 0, recorded: true });
    expect(lastRefusal!.retryAfterMs).toBeGreaterThan(0);
    expect(lastRefusal!.retryAfterMs).toBeLessThanOrEqual(600);
    expect(lastRefusal!.message).toMatch(
      /^This tool is busy: busy__lookup has reached the limit of 100 calls per minute for its connection "busy"\. Nothing was done; try again in about 1 seconds, or answer without it\.$/,
    );
    const recorded = await A.app.services.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from turn_call where turn_id in (?, ?) and status = 'RATE_LIMITED'`,
        [rawId(turnA.turnId), rawId(turnB.turnId)],
      );
    expect(recorded[0]!.n).toBe(limited);
    const metrics = await scrape(A, w.operator);
    expect(metrics).toMatch(
      /connected_tools_tool_calls_total\{connection="[^"]+",status="RATE_LIMITED"\} \d+/,
    );
  });

  it('should limit one workspace on a connection for an ADMIN only, and show and remove limits', async () => {
    const { w } = await ownWorld('Quota');
    const input = {
      connectionId: w.connectionId,
      workspaceId: w.workspaceId,
      calls: 1,
      per: 'SECOND' as const,
    };
    const denied = await A.gql(SetCallLimitDocument, { input }, w.operator);
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const set = await A.ok(SetCallLimitDocument, { input }, w.admin);
    expect(set.setCallLimit.callLimit).toMatchObject({
      scope: 'WORKSPACE',
      calls: 1,
      burst: 1,
      workspaceId: w.workspaceId,
    });
    const turn = await begin(A, w, 'per-ws');
    expect((await call(A, w, turn.turnId, 'quota__lookup')).status).toBe('SUCCEEDED');
    const second = await call(A, w, turn.turnId, 'quota__lookup');
    expect(second.status).toBe('RATE_LIMITED');
    expect(second.message).toContain(`this workspace's calls on "quota"`);
    await clock.advance(1_000);
    expect((await call(A, w, turn.turnId, 'quota__lookup')).status).toBe('SUCCEEDED');
    const shown = await A.ok(ConnectionGuardsDocument, { id: w.connectionId }, w.customer);
    expect(shown.connection!.callLimits).toEqual([
      { scope: 'WORKSPACE', calls: 1, per: 'SECOND', burst: 1, workspaceId: w.workspaceId },
    ]);
    const bad = await A.ok(
      SetCallLimitDocument,
      { input: { operationId: w.ops.lookup!.id, calls: 0 } },
      w.operator,
    );
    expect(bad.setCallLimit.userErrors[0]).toMatchObject({
      field: ['input', 'calls'],
      code: 'LIMIT_INVALID',
    });
    await A.ok(SetCallLimitDocument, { input: { ...input, calls: null } }, w.admin);
    expect(
      (await A.ok(ConnectionGuardsDocument, { id: w.connectionId }, w.operator)).connection!.callLimits,
    ).toEqual([]);
    expect((await call(A, w, turn.turnId, 'quota__lookup')).status).toBe('SUCCEEDED');
    expect((await call(A, w, turn.turnId, 'quota__lookup')).status).toBe('SUCCEEDED');
    const audited = await A.app.services.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from audit_event where target_id = ? and action = 'SET_CALL_LIMIT'`,
        [w.connectionId],
      );
    expect(audited[0]!.n).toBe(2);
  });
});
