import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { wsClient } from '../../support/subscriptions.js';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
});

afterAll(async () => {
  await t.stop();
});

const deep = `{ viewer { workspace { connections { nodes { workspace { connections { nodes { workspace { connections { nodes { workspace { connections { nodes { name } } } } } } } } } } } } } }`;
const aliased = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: viewer { role }`).join(' ')} }`;
const costly = `{ workspaces(first: 100) { nodes { ${Array.from({ length: 12 }, (_, i) => `c${i}: connections(first: 100) { nodes { operations(first: 100) { nodes { id key name title description risk enabled } } } }`).join(' ')} } } }`;

/** A lazy client: each operation opens its own socket. */
function lazyClient(token: string | null): Client {
  return wsClient(t.wsUrl, token, { lazy: true });
}

async function overWs(
  token: string | null,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{
  data?: unknown;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}> {
  const client = lazyClient(token);
  try {
    return await new Promise((resolve, reject) => {
      let result: { data?: unknown; errors?: readonly { message: string }[] } = {};
      client.subscribe(
        { query, variables },
        {
          next: (value) => {
            result = value;
          },
          error: (err: unknown) => {
            if (Array.isArray(err)) resolve({ errors: err as { message: string }[] });
            else reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
          },
          complete: () => resolve(result),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

describe('query limits', () => {
  it.each([
    ['depth', deep, /depth/i],
    ['aliases', aliased, /alias/i],
    ['cost', costly, /cost/i],
  ])('should refuse a query over the %s limit over HTTP', async (_name, query, message) => {
    const result = await t.gql(query, {}, admin);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(message);
  });

  it.each([
    ['depth', deep, /depth/i],
    ['aliases', aliased, /alias/i],
    ['cost', costly, /cost/i],
  ])('should refuse a query over the %s limit over WebSocket', async (_name, query, message) => {
    const result = await overWs(admin, query);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.message).toMatch(message);
  });

  /**
   * `workspaces(first: N) { nodes { connections(first: 100) { nodes { operations(first: 100) { nodes
   * { id key } } } } } }` costs 1 + N × 30,202: within the 250,000 limit for N ≤ 8, over it from 9.
   */
  const paged = (first: string, declare = '') =>
    `query Paged${declare} { workspaces(first: ${first}) { nodes { connections(first: 100) { nodes { operations(first: 100) { nodes { id key } } } } } } }`;

  it('should cost a variable `first` at the largest page, whatever value it is given', async () => {
    // The literal decides at validation: 8 fits, 9 does not.
    expect((await t.gql(paged('8'), {}, admin)).errors).toBeUndefined();
    expect((await t.gql(paged('9'), {}, admin)).errors?.[0]?.message).toMatch(/cost limit/);
    // A variable's value is not known at validation: 1 or none, it counts as 100.
    for (const variables of [{ first: 1 }, {}]) {
      const result = await t.gql(paged('$first', '($first: Int)'), variables, admin);
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message).toMatch(/cost limit of 250000 exceeded/);
    }
    const overSocket = await overWs(admin, paged('$first', '($first: Int)'), { first: 1 });
    expect(overSocket.data ?? null).toBeNull();
    expect(overSocket.errors?.[0]?.message).toMatch(/cost limit of 250000 exceeded/);
  });

  it('should run an ordinary query over WebSocket with the token from connection_init', async () => {
    const result = await overWs(admin, '{ viewer { role } }');
    expect(result).toEqual({ data: { viewer: { role: 'ADMIN' } } });
  });

  it('should close a WebSocket whose connection_init has no valid token with 4403', async () => {
    const client = lazyClient('ctk_nope');
    const closed = await new Promise<number>((resolve) => {
      client.on('closed', (event) => resolve((event as { code: number }).code));
      client.subscribe(
        { query: '{ viewer { role } }' },
        { next: () => undefined, error: () => undefined, complete: () => undefined },
      );
    });
    await client.dispose();
    expect(closed).toBe(4403);
  });
});

describe('WebSocket tokens', () => {
  it('should refuse new operations on an open socket once its token is revoked', async () => {
    const token = await t.token(Role.OPERATOR, null, 'soon revoked');
    // One socket for both operations (a lazy client would open a new one, refused at connect).
    const client = wsClient(t.wsUrl, token);
    try {
      const run = (query: string) =>
        new Promise<{
          data?: unknown;
          errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
        }>((resolve, reject) => {
          let result: { data?: unknown } = {};
          client.subscribe(
            { query },
            {
              next: (value) => {
                result = value;
              },
              error: (err: unknown) =>
                Array.isArray(err) ? resolve({ errors: err as { message: string }[] }) : reject(err as Error),
              complete: () => resolve(result),
            },
          );
        });
      expect(await run('{ viewer { label } }')).toEqual({ data: { viewer: { label: 'soon revoked' } } });
      await t.app.services.orm.em
        .getConnection()
        .execute(`update api_token set revoked_at = now() where label = 'soon revoked'`);
      t.app.services.auth.clearCache();
      const after = await run('{ viewer { label } }');
      expect(after.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await client.dispose();
    }
  });

  it('should give the same coded error over WebSocket as over HTTP for a forged cursor', async () => {
    const forged = Buffer.from('c:zzz').toString('base64url');
    const query = `{ workspaces(first: 1, after: "${forged}") { nodes { id } } }`;
    const http = await t.gql(query, {}, admin);
    expect(http.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const ws = await overWs(admin, query);
    expect(ws.errors?.[0]).toEqual(
      expect.objectContaining({ message: '"after" is not a cursor from this API' }),
    );
    expect(JSON.stringify(ws)).not.toMatch(/select|uuid/i);
  });
});

describe('http', () => {
  it('should answer /healthz and /readyz', async () => {
    const health = await fetch(new URL('/healthz', t.url));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(new URL('/readyz', t.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('should keep coded errors with their path and location', async () => {
    const forged = Buffer.from('c:zzz').toString('base64url');
    const result = await t.gql(`{ workspaces(first: 1, after: "${forged}") { nodes { id } } }`, {}, admin);
    expect(result.errors?.[0]).toEqual({
      message: '"after" is not a cursor from this API',
      path: ['workspaces'],
      locations: [{ line: 1, column: 3 }],
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('should answer a request without a token with HTTP 401 and a coded error', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { role } }' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(
      ((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
    ).toBe('UNAUTHENTICATED');
  });

  it('should answer invalid JSON and oversized bodies with clear errors', async () => {
    const bad = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(
      ((await bad.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
    ).toBe('BAD_USER_INPUT');
    const huge = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query: '{ viewer { role } }', variables: { x: 'a'.repeat(17 * 1024 * 1024) } }),
    }).catch((err: unknown) => err);
    // Either the 413 arrives, or the server closed the socket while we were still sending.
    if (huge instanceof Response) expect(huge.status).toBe(413);
    else expect(huge).toBeInstanceOf(Error);
  });

  it('should answer 404 for unknown paths', async () => {
    expect((await fetch(new URL('/nope', t.url))).status).toBe(404);
  });
});
