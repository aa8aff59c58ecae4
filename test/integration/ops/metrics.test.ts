import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../support/wait.js';
import { DiscoverDocument } from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { parsePrometheus, valueOf, type Sample } from '../../support/prometheus.js';
import { subscribeTurnEvents } from '../../support/subscriptions.js';
import { begin, call, startCrmWorld, type CrmFixture, type World } from '../../support/turns.js';

let t: TestApp;
let w: World;

const metricsUrl = (app: TestApp) => new URL('/metrics', app.url).toString();

async function scrape(app: TestApp, token: string | null): Promise<Sample[]> {
  const res = await fetch(metricsUrl(app), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

let fixture: CrmFixture;

beforeAll(async () => {
  fixture = await startCrmWorld('CRM');
  ({ t, w } = fixture);
});

afterAll(() => fixture.stop());

describe('GET /metrics (METRICS=token, the default)', () => {
  it('should answer 401 without a token and 403 to a customer or runtime token', async () => {
    const none = await fetch(metricsUrl(t));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    for (const token of [w.customer, w.runtime]) {
      const res = await fetch(metricsUrl(t), { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(403);
      expect(
        ((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
      ).toBe('FORBIDDEN');
    }
  });

  it('should count tool calls by connection and status, with their durations', async () => {
    const before = await scrape(t, w.operator);
    const turn = await begin(t, w, 'metrics-1');
    expect((await call(t, w, turn.turnId, 'crm__lookup', { email: 'a@b.c' })).status).toBe('SUCCEEDED');
    expect((await call(t, w, turn.turnId, 'crm__lookup', { email: 'd@e.f' })).status).toBe('SUCCEEDED');
    expect((await call(t, w, turn.turnId, 'crm__fails', {})).status).toBe('TOOL_ERROR');
    expect((await call(t, w, turn.turnId, 'crm__nothing', {})).status).toBe('UNAVAILABLE');
    const after = await scrape(t, w.admin);
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    const connection = w.connectionId;
    expect(delta('connected_tools_tool_calls_total', { connection, status: 'SUCCEEDED' })).toBe(2);
    expect(delta('connected_tools_tool_calls_total', { connection, status: 'TOOL_ERROR' })).toBe(1);
    expect(delta('connected_tools_tool_calls_total', { connection: 'none', status: 'UNAVAILABLE' })).toBe(1);
    expect(delta('connected_tools_tool_call_duration_seconds_count', { connection })).toBe(3);
    expect(delta('connected_tools_tool_call_duration_seconds_bucket', { connection, le: '+Inf' })).toBe(3);
    // Every call read the assistant's tools: from memory once they were loaded.
    expect(
      delta('connected_tools_tool_cache_hits_total', {}) +
        delta('connected_tools_tool_cache_misses_total', {}),
    ).toBe(5);
    expect(delta('connected_tools_tool_cache_hits_total', {})).toBeGreaterThanOrEqual(4);
    // No label carries what the model wrote.
    const text = await (
      await fetch(metricsUrl(t), { headers: { authorization: `Bearer ${w.admin}` } })
    ).text();
    expect(text).not.toContain('a@b.c');
    expect(text).not.toContain('crm__nothing');
  });

  it('should count discovery runs by outcome', async () => {
    const before = await scrape(t, w.operator);
    await t.ok(DiscoverDocument, { input: { connectionId: w.connectionId } }, w.operator);
    const after = await scrape(t, w.operator);
    const labels = { outcome: 'SUCCEEDED', code: '' };
    expect(
      valueOf(after, 'connected_tools_discovery_runs_total', labels) -
        valueOf(before, 'connected_tools_discovery_runs_total', labels),
    ).toBe(1);
  });

  it('should show LISTEN health, the database pool, the event loop and HTTP requests by route', async () => {
    const s = await scrape(t, w.operator);
    expect(valueOf(s, 'connected_tools_listen_connected')).toBe(1);
    // The discovery above NOTIFYed every instance, this one included.
    const age = valueOf(s, 'connected_tools_listen_last_notification_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
    expect(valueOf(s, 'connected_tools_listen_reconnects_total')).toBe(0);
    expect(
      valueOf(s, 'connected_tools_db_pool_connections', { state: 'used' }) +
        valueOf(s, 'connected_tools_db_pool_connections', { state: 'free' }),
    ).toBeGreaterThan(0);
    expect(s.some((x) => x.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    expect(
      valueOf(s, 'connected_tools_http_requests_total', { route: '/graphql', status: '200' }),
    ).toBeGreaterThan(5);
    expect(valueOf(s, 'connected_tools_http_requests_total', { route: '/metrics', status: '401' })).toBe(1);
    expect(valueOf(s, 'connected_tools_http_requests_total', { route: '/metrics', status: '403' })).toBe(2);
  });

  it('should count a LISTEN reconnect', async () => {
    t.app.services.notifier.dropConnectionForTest();
    let s = await scrape(t, w.operator);
    await waitUntil(async () => {
      s = await scrape(t, w.operator);
      return valueOf(s, 'connected_tools_listen_reconnects_total') >= 1;
    }, 50);
    expect(valueOf(s, 'connected_tools_listen_reconnects_total')).toBe(1);
    expect(valueOf(s, 'connected_tools_listen_connected')).toBe(1);
  });

  it('should count open subscriptions and sockets', async () => {
    const stream = await subscribeTurnEvents(t.wsUrl, w.customer, {
      assistantId: w.assistantId,
      conversationId: 'metrics-sub',
    });
    try {
      let s = await scrape(t, w.operator);
      await waitUntil(async () => {
        s = await scrape(t, w.operator);
        return valueOf(s, 'connected_tools_subscriptions_open') >= 1;
      }, 50);
      expect(valueOf(s, 'connected_tools_subscriptions_open')).toBe(1);
      expect(valueOf(s, 'connected_tools_websockets_open')).toBe(1);
    } finally {
      await stream.close();
    }
    let s = await scrape(t, w.operator);
    await waitUntil(async () => {
      s = await scrape(t, w.operator);
      return valueOf(s, 'connected_tools_websockets_open') === 0;
    }, 50);
    expect(valueOf(s, 'connected_tools_subscriptions_open')).toBe(0);
    expect(valueOf(s, 'connected_tools_websockets_open')).toBe(0);
  });
});

describe('METRICS=off and METRICS=open', () => {
  it('should answer 404 when off, and without a token when open', async () => {
    const off = await startTestApp({ env: { METRICS: 'off' } });
    const open = await startTestApp({ env: { METRICS: 'open' } });
    try {
      const admin = await off.token(Role.ADMIN);
      const res = await fetch(metricsUrl(off), { headers: { authorization: `Bearer ${admin}` } });
      expect(res.status).toBe(404);
      const s = await scrape(open, null);
      expect(valueOf(s, 'connected_tools_listen_connected')).toBe(1);
    } finally {
      await off.stop();
      await open.stop();
    }
  });
});
