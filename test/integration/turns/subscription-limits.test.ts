/**
 * Subscription limits: per token and per socket caps on open subscriptions (refused with
 * TOO_MANY_SUBSCRIPTIONS), and a bounded replay (REPLAY_LIMIT_EXCEEDED, resumable).
 */
import { print } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BeginTurnDocument,
  CreateAssistantDocument,
  CreateWorkspaceDocument,
  TurnEventsDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { wsClient } from '../../support/subscriptions.js';

let t: TestApp;
let customer: string;
let runtime: string;
let assistantId: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp({
    env: { SUBSCRIPTIONS_PER_SOCKET: '2', SUBSCRIPTIONS_PER_TOKEN: '3', SUBSCRIPTION_REPLAY_MAX_EVENTS: '3' },
  });
  const admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Limits' } }, admin);
  const workspaceId = ws.createWorkspace.workspace!.id;
  customer = await t.token(Role.CUSTOMER, Buffer.from(workspaceId, 'base64url').toString().split(':')[1]);
  runtime = await t.token(Role.RUNTIME);
  const assistant = await t.ok(CreateAssistantDocument, { input: { workspaceId, name: 'A' } }, admin);
  assistantId = assistant.createAssistant.assistant!.id;
  for (let i = 0; i < 5; i++) {
    await t.ok(BeginTurnDocument, { input: { assistantId, conversationId: `c-${i}` } }, runtime);
  }
});

afterAll(async () => {
  await Promise.all(clients.map(async (c) => c.dispose()));
  await t.stop();
});

async function socket(token: string): Promise<Client> {
  const client = wsClient(t.wsUrl, token);
  clients.push(client);
  await new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', () => reject(new Error('closed')));
  });
  return client;
}

interface Sub {
  seqs: number[];
  /** Resolves with the errors the subscription ended with (or [] on completion). */
  ended: Promise<readonly { message: string; extensions?: Record<string, unknown> }[]>;
  /** Resolves once the server has accepted the subscription (its first event arrived). */
  firstEvent: Promise<void>;
  stop(): void;
}

function subscribe(client: Client, variables: Record<string, unknown>): Sub {
  const seqs: number[] = [];
  let first!: () => void;
  const firstEvent = new Promise<void>((r) => (first = r));
  let stop!: () => void;
  const ended = new Promise<readonly { message: string; extensions?: Record<string, unknown> }[]>(
    (resolve) => {
      stop = client.subscribe<{ turnEvents: { seq: number } }>(
        { query: print(TurnEventsDocument), variables },
        {
          next: (v) => {
            if (v.data) seqs.push(v.data.turnEvents.seq);
            first();
          },
          error: (err) => resolve(Array.isArray(err) ? err : [{ message: String(err) }]),
          complete: () => resolve([]),
        },
      );
    },
  );
  return { seqs, ended, firstEvent, stop: () => stop() };
}

describe('subscription caps', () => {
  it('should refuse a subscription over the per-socket cap, then the per-token cap, with TOO_MANY_SUBSCRIPTIONS', async () => {
    const a = await socket(customer);
    // One stored event (so acceptance is visible), then live.
    const live = { assistantId, conversationId: 'c-4', afterSeq: 0 };
    const s1 = subscribe(a, live);
    const s2 = subscribe(a, live);
    await Promise.all([s1.firstEvent, s2.firstEvent]);
    const s3 = subscribe(a, live);
    expect(await s3.ended).toEqual([
      {
        message: 'this socket already has 2 subscriptions open; complete one first',
        extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
      },
    ]);

    const b = await socket(customer);
    const s4 = subscribe(b, live);
    await s4.firstEvent;
    const s5 = subscribe(b, live);
    expect(await s5.ended).toEqual([
      {
        message: 'this API token already has 3 subscriptions open; complete one first',
        extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
      },
    ]);

    // Another token is not affected by this one's subscriptions.
    const other = await socket(await t.token(Role.ADMIN));
    const s6 = subscribe(other, live);
    await s6.firstEvent;

    // A completed subscription gives its slot back.
    s1.stop();
    await expect
      .poll(async () => {
        const s = subscribe(b, live);
        const outcome = await Promise.race([
          s.firstEvent.then(() => 'accepted'),
          s.ended.then(() => 'refused'),
        ]);
        if (outcome === 'accepted') s.stop();
        return outcome;
      })
      .toBe('accepted');

    // A closed socket gives back all of its slots.
    await a.dispose();
    await b.dispose();
    const c = await socket(customer);
    const again = [subscribe(c, live), subscribe(c, live)];
    await Promise.all(again.map((s) => s.firstEvent));
    for (const s of again) s.stop();
    s6.stop();
  });

  it('should still answer queries on a socket whose subscriptions are at the cap', async () => {
    const c = await socket(customer);
    const live = { assistantId, conversationId: 'c-4', afterSeq: 0 };
    const subs = [subscribe(c, live), subscribe(c, live)];
    await Promise.all(subs.map((s) => s.firstEvent));
    const result = await new Promise<unknown>((resolve, reject) => {
      let value: unknown;
      c.subscribe(
        { query: '{ viewer { role } }' },
        { next: (v) => (value = v), error: reject, complete: () => resolve(value) },
      );
    });
    expect(result).toEqual({ data: { viewer: { role: 'CUSTOMER' } } });
    for (const s of subs) s.stop();
  });
});

describe('bounded replay', () => {
  it('should replay at most the cap, then end with REPLAY_LIMIT_EXCEEDED naming where to resume', async () => {
    const c = await socket(customer);
    const first = subscribe(c, { assistantId, afterSeq: 0 });
    const errors = await first.ended;
    expect(first.seqs).toHaveLength(3);
    const last = first.seqs.at(-1)!;
    expect(errors).toEqual([
      {
        message: `more than 3 stored events follow afterSeq 0; subscribe again with afterSeq: ${last} to continue`,
        extensions: { code: 'REPLAY_LIMIT_EXCEEDED' },
      },
    ]);
    // Resuming where it stopped gives the rest, with no gap and no duplicate, then goes live.
    const rest = subscribe(c, { assistantId, afterSeq: last });
    await expect.poll(() => rest.seqs.length).toBe(2);
    expect(rest.seqs[0]).toBeGreaterThan(last);
    await t.ok(BeginTurnDocument, { input: { assistantId, conversationId: 'c-live' } }, runtime);
    await expect.poll(() => rest.seqs.length).toBe(3);
    rest.stop();
  });
});

describe('refused subscriptions', () => {
  it('should give back the slot of a subscription that fails validation, and refuse over the cap before validating', async () => {
    const admin = await t.token(Role.ADMIN);
    const c = await socket(admin);
    const invalid = (client: Client) =>
      new Promise<readonly { extensions?: Record<string, unknown> }[]>((resolve) => {
        client.subscribe(
          { query: 'subscription { turnEvents(afterSeq: 0) { seq noSuchField } }' },
          {
            next: () => undefined,
            error: (err) => resolve(Array.isArray(err) ? err : []),
            complete: () => resolve([]),
          },
        );
      });
    // Three invalid subscriptions on a socket whose cap is two: each is refused for what it is,
    // so none kept a slot.
    for (let i = 0; i < 3; i++) {
      const [error] = await invalid(c);
      expect(error).toMatchObject({
        message: expect.stringContaining('noSuchField'),
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    // At the cap, a subscription is refused for the cap, before any validation.
    const live = { assistantId, conversationId: 'c-4', afterSeq: 0 }; // one stored event, then live
    const s1 = subscribe(c, live);
    const s2 = subscribe(c, live);
    await Promise.all([s1.firstEvent, s2.firstEvent]);
    expect((await invalid(c))[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    s1.stop();
    s2.stop();
  });
});

describe('a subscriber that falls behind', () => {
  it('should end with SUBSCRIBER_TOO_SLOW naming where to resume, after the events it could keep', async () => {
    const hub = t.app.services.turnEvents;
    const all = { workspaceId: null, assistantId: null, conversationId: null };
    const slow = hub.subscribe(all, null, 2);
    // A reader that keeps up tells when every event has reached both subscribers (no sleeps).
    const witness = hub.subscribe(all, null);
    try {
      const first = slow.next(); // starts the slow stream; it takes one event, then nobody reads
      const seen = witness.next();
      for (let i = 0; i < 4; i++) {
        await t.ok(BeginTurnDocument, { input: { assistantId, conversationId: `slow-${i}` } }, runtime);
      }
      const witnessed = [(await seen).value!.seq];
      while (witnessed.length < 4) witnessed.push((await witness.next()).value!.seq);
      const kept = [(await first).value!.seq];
      const ended = await (async () => {
        try {
          for (;;) {
            const next = await slow.next();
            if (next.done) return null;
            kept.push(next.value.seq);
          }
        } catch (err) {
          return err as { code?: string; message: string };
        }
      })();
      // The first event, then the backlog of two; the fourth was dropped, so the stream ends.
      expect(kept).toEqual(witnessed.slice(0, 3));
      expect(ended?.code).toBe('SUBSCRIBER_TOO_SLOW');
      expect(ended?.message).toContain(`afterSeq: ${kept[2]}`);
    } finally {
      await slow.return?.(undefined);
      await witness.return?.(undefined);
    }
  });
});
