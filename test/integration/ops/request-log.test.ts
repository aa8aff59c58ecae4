import { print } from 'graphql';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../support/wait.js';
import { TurnEventsDocument } from '../../generated/graphql.js';
import type { TestApp } from '../../support/app.js';
import { begin, call, startCrmWorld, type CrmFixture, type World } from '../../support/turns.js';
import { wsClient } from '../../support/subscriptions.js';

let t: TestApp;
let w: World;

interface Line {
  msg: string;
  reqId?: string;
  operation?: string;
  actor?: { tokenId: string; role: string; label: string };
  status?: number;
  ms?: number;
  errors?: string[];
  path?: string;
  reason?: string;
  id?: string;
}

const lines = (): Line[] => t.logs.map((l) => JSON.parse(l) as Line);
const requestLine = (reqId: string): Line | undefined =>
  lines().find((l) => l.msg === 'request' && l.reqId === reqId);

/** The log line once written (the test's timeout bounds the wait). */
async function waitFor<T>(get: () => T | undefined): Promise<T> {
  await waitUntil(() => get() !== undefined, 20);
  return get()!;
}

async function post(body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

let fixture: CrmFixture;

beforeAll(async () => {
  fixture = await startCrmWorld('CRM', { captureLogs: true });
  ({ t, w } = fixture);
});

afterAll(() => fixture.stop());

describe('request ids', () => {
  it('should echo a sane x-request-id and replace an unsafe or overlong one', async () => {
    const sane = await post(
      { query: '{ viewer { role } }' },
      { authorization: `Bearer ${w.admin}`, 'x-request-id': 'abc-123.def:9' },
    );
    expect(sane.headers.get('x-request-id')).toBe('abc-123.def:9');
    for (const bad of ['has space', 'x'.repeat(129), 'quote"inside', '']) {
      const res = await post(
        { query: '{ viewer { role } }' },
        { authorization: `Bearer ${w.admin}`, 'x-request-id': bad },
      );
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    // Also on refusals made before the body is read, and on other routes.
    const refused = await post({ query: '{ viewer { role } }' }, { 'x-request-id': 'refused-1' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toBe('refused-1');
    const health = await fetch(new URL('/healthz', t.url), { headers: { 'x-request-id': 'health-1' } });
    expect(health.headers.get('x-request-id')).toBe('health-1');
  });
});

describe('one log line per request', () => {
  it('should name the operation, the actor, the status, the duration and the error codes', async () => {
    const res = await post(
      { query: 'query WhoAmI { viewer { role } workspace(id: "V29ya3NwYWNlOm5vcGU") { name } }' },
      { authorization: `Bearer ${w.operator}`, 'x-request-id': 'log-1' },
    );
    expect(res.status).toBe(200);
    const line = await waitFor(() => requestLine('log-1'));
    expect(line).toMatchObject({
      operation: 'WhoAmI',
      status: 200,
      path: '/graphql',
      actor: { role: 'OPERATOR', label: 'test operator' },
    });
    expect(line.actor!.tokenId).toMatch(/^[0-9a-f-]{36}$/);
    expect(line.errors).toEqual(['NOT_FOUND']);
    expect(typeof line.ms).toBe('number');
  });

  it('should log a refused request with its code and no actor', async () => {
    await post(
      { query: '{ viewer { role } }' },
      { authorization: 'Bearer ctk_not-a-real-token', 'x-request-id': 'log-2' },
    );
    const line = await waitFor(() => requestLine('log-2'));
    expect(line).toMatchObject({ status: 401, errors: ['UNAUTHENTICATED'] });
    expect(line.actor).toBeUndefined();
  });

  it('should never log the token, the arguments, the variables or the query string', async () => {
    const turn = await begin(t, w, 'log-conv');
    await call(t, w, turn.turnId, 'crm__lookup', { email: 'MARKER-ARG-7731@example.com' });
    await fetch(
      `${t.url}?query=${encodeURIComponent('query Q($e: String) { viewer { role } }')}&variables=${encodeURIComponent('{"e":"MARKER-VAR-5521"}')}`,
      {
        headers: {
          authorization: `Bearer ${w.admin}`,
          'apollo-require-preflight': 'true',
          'x-request-id': 'log-3',
        },
      },
    );
    await waitFor(() => requestLine('log-3'));
    const all = t.logs.join('\n');
    for (const secret of [w.admin, w.operator, w.runtime, w.customer, 'MARKER-ARG-7731', 'MARKER-VAR-5521'])
      expect(all).not.toContain(secret);
    const callLine = lines().find((l) => l.msg === 'request' && l.operation === 'CallTool');
    expect(callLine).toMatchObject({ status: 200, actor: { role: 'RUNTIME' } });
  });
});

describe('graphql-ws', () => {
  it('should log a subscription start and stop under the upgrade request id, with its actor', async () => {
    class TaggedSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { 'x-request-id': 'ws-log-1' } });
      }
    }
    const client = wsClient(t.wsUrl, w.customer, { webSocketImpl: TaggedSocket });
    const done = new Promise<void>((resolve) => {
      const stop = client.subscribe(
        {
          query: print(TurnEventsDocument),
          variables: { assistantId: w.assistantId, conversationId: 'ws-log' },
        },
        { next: () => undefined, error: () => resolve(), complete: () => resolve() },
      );
      void waitFor(() => lines().find((l) => l.msg === 'subscription start' && l.reqId === 'ws-log-1')).then(
        () => {
          stop();
          resolve();
        },
      );
    });
    await done;
    const stop = await waitFor(() =>
      lines().find((l) => l.msg === 'subscription stop' && l.reqId === 'ws-log-1'),
    );
    expect(stop).toMatchObject({ operation: 'TurnEvents', actor: { role: 'CUSTOMER' }, reason: 'complete' });
    expect(typeof stop.ms).toBe('number');
    await client.dispose();
    await waitFor(() => lines().find((l) => l.msg === 'websocket closed' && l.reqId === 'ws-log-1'));
    expect(t.logs.join('\n')).not.toContain(w.customer);
  });
});
