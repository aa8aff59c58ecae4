/**
 * The edge: a request without a valid token is refused from its headers alone (HTTP 401), bodies
 * are capped per role, and graphql-ws parses nothing before connection_init is accepted.
 */
import { createClient } from 'graphql-ws';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { wsClient } from '../../support/subscriptions.js';

let t: TestApp;
let admin: string;
let customer: string;
let runtime: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok<{ createWorkspace: { workspace: { id: string } } }, unknown>(
    'mutation { createWorkspace(input: { name: "Edge" }) { workspace { id } } }',
    {},
    admin,
  );
  const rawWorkspace = Buffer.from(ws.createWorkspace.workspace.id, 'base64url').toString().split(':')[1]!;
  customer = await t.token(Role.CUSTOMER, rawWorkspace);
  runtime = await t.token(Role.RUNTIME);
});

afterAll(async () => {
  await t.stop();
});

async function post(body: string, token?: string | null, headers: Record<string, string> = {}) {
  return fetch(t.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body,
  });
}

/** Sends raw bytes and resolves with everything the server wrote until it closed or `until` matched. */
function rawRequest(bytes: string, until: RegExp): Promise<string> {
  const { port } = new URL(t.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (until.test(received)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('close', () => resolve(received));
    socket.on('error', () => resolve(received));
    socket.write(bytes);
  });
}

describe('authentication before any work', () => {
  it.each([
    ['no token', undefined, 'Bearer'],
    [
      'an unknown token',
      { authorization: 'Bearer ctk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      'Bearer error="invalid_token"',
    ],
    ['a malformed token', { authorization: 'Bearer not-a-token' }, 'Bearer error="invalid_token"'],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'Bearer error="invalid_token"'],
  ])('should answer a POST with %s with 401 and WWW-Authenticate', async (_name, headers, challenge) => {
    const res = await post(JSON.stringify({ query: '{ viewer { role } }' }), null, headers ?? {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect(await res.json()).toEqual({
      errors: [
        { message: expect.stringMatching(/API token/) as string, extensions: { code: 'UNAUTHENTICATED' } },
      ],
    });
  });

  it('should answer a GET without a token with 401', async () => {
    const res = await fetch(`${t.url}?query=${encodeURIComponent('{ viewer { role } }')}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('should refuse before parsing: a document that would not parse still gets 401', async () => {
    const res = await post(JSON.stringify({ query: '{ viewer { ' }));
    expect(res.status).toBe(401);
    const notJson = await post('{nope');
    expect(notJson.status).toBe(401);
  });

  it('should answer 401 without waiting for a large body that never comes', async () => {
    // 15 MiB declared, 10 bytes sent: the answer can only come from the headers.
    const answer = await rawRequest(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${15 * 1024 * 1024}\r\n\r\n{"query":"`,
      /\r\n\r\n.*UNAUTHENTICATED/s,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/www-authenticate: Bearer/i);
    expect(answer).toMatch(/connection: close/i);
  });

  it('should answer 401 to a chunked body without reading it', async () => {
    const answer = await rawRequest(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"que\r\n`,
      /\r\n\r\n.*UNAUTHENTICATED/s,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('should refuse ten concurrent 15 MiB bodies without a token, each with 401 and without reading them', async () => {
    const head = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${15 * 1024 * 1024}\r\n\r\n`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        rawRequest(head + 'a'.repeat(256 * 1024), /\r\n\r\n.*UNAUTHENTICATED/s),
      ),
    );
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('should keep the connection usable after a small refused body', async () => {
    const answer = await rawRequest(
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}' +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      /"status":"ok"/,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/HTTP\/1\.1 200 /);
  });
});

describe('caching', () => {
  it('should mark every GraphQL answer as not to be stored, data and errors alike', async () => {
    const ok = await post(JSON.stringify({ query: '{ viewer { role } }' }), admin);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const refused = await post(JSON.stringify({ query: '{ viewer { nope } }' }), admin);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });
});

describe('body caps per role', () => {
  const sized = (bytes: number) =>
    JSON.stringify({ query: '{ viewer { role } }', extensions: { pad: 'a'.repeat(bytes) } });

  it.each([
    ['CUSTOMER', () => customer],
    ['RUNTIME', () => runtime],
  ])('should refuse a %s body over 1 MiB with 413', async (_role, token) => {
    const res = await post(sized(1024 * 1024 + 10), token()).catch((err: unknown) => err);
    // Either the 413 arrives, or the server closed the socket while we were still sending.
    if (res instanceof Response) {
      expect(res.status).toBe(413);
      expect(
        ((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
      ).toBe('BAD_USER_INPUT');
    } else expect(res).toBeInstanceOf(Error);
  });

  it('should accept a CUSTOMER body under 1 MiB', async () => {
    const res = await post(sized(900 * 1024), customer);
    expect(res.status).toBe(200);
  });

  it('should accept an ADMIN body of 7 MiB (a 5 MiB description, escaped) and refuse one over 8 MiB', async () => {
    const res = await post(sized(7 * 1024 * 1024), admin);
    expect(res.status).toBe(200);
    const over = await post(sized(8 * 1024 * 1024 + 10), admin).catch((err: unknown) => err);
    if (over instanceof Response) expect(over.status).toBe(413);
    else expect(over).toBeInstanceOf(Error);
  });
});

describe('graphql-ws authentication', () => {
  const run = (client: ReturnType<typeof createClient>, query: string) =>
    new Promise<unknown>((resolve, reject) => {
      let result: unknown = null;
      client.subscribe(
        { query },
        {
          next: (v) => {
            result = v;
          },
          error: (e: unknown) => reject(e instanceof Error ? e : new Error(JSON.stringify(e))),
          complete: () => resolve(result),
        },
      );
    });

  it('should accept the token in the upgrade request’s Authorization header', async () => {
    const client = createClient({
      url: t.wsUrl,
      webSocketImpl: class extends WebSocket {
        constructor(url: string, protocols: string[]) {
          super(url, protocols, { headers: { authorization: `Bearer ${customer}` } });
        }
      },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      expect(await run(client, '{ viewer { role } }')).toEqual({ data: { viewer: { role: 'CUSTOMER' } } });
    } finally {
      await client.dispose();
    }
  });

  it('should refuse the upgrade with 401 when its Authorization header holds an invalid token', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws', {
        headers: { authorization: 'Bearer ctk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      });
      socket.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('open', () => reject(new Error('the socket opened')));
      socket.on('error', () => undefined);
    });
    expect(status).toBe(401);
  });

  it('should close with 4401 a socket that subscribes before connection_init', async () => {
    const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ viewer { role } }' } }));
    expect(await closed).toEqual({ code: 4401, reason: 'Unauthorized' });
  });

  it('should close with 4403 a socket whose connection_init and upgrade carry no token', async () => {
    const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    expect(await closed).toBe(4403);
  });
});

const rep = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join(' ');

/** One operation over a fresh graphql-ws socket: the data, or the errors it was refused with. */
async function overWs(
  token: string,
  query: string,
): Promise<{
  data?: unknown;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}> {
  const client = wsClient(t.wsUrl, token, { lazy: true });
  try {
    return await new Promise((resolve, reject) => {
      let result: { data?: unknown } = {};
      client.subscribe(
        { query },
        {
          next: (value) => {
            result = value;
          },
          error: (err: unknown) =>
            Array.isArray(err)
              ? resolve({ errors: err as { message: string }[] })
              : reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
          complete: () => resolve(result),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

describe('bounded documents, on HTTP and WebSocket alike', () => {
  /** The review's payload: 22 levels of fragments, each spreading the next twice (2^22 expansions). */
  const explosion = (levels: number, spreads: number, on: string, field: string, root: string) =>
    `query ${root} ${rep(levels, (i) => `fragment F${i} on ${on} { ${field} ${rep(spreads, () => `...F${i + 1}`)} }`)} fragment F${levels} on ${on} { ${field} }`;

  const attacks: [string, string, RegExp][] = [
    ['the fragment-spread explosion', explosion(22, 2, 'Query', '__typename', '{ ...F0 }'), /cost limit/],
    [
      'a three-way explosion on another type',
      explosion(16, 3, 'Viewer', 'label', '{ viewer { ...F0 } }'),
      /cost limit/,
    ],
    [
      'an explosion through inline fragments and directives',
      explosion(
        22,
        2,
        'Viewer',
        '... on Viewer { role @include(if: true) }',
        '{ viewer { ... on Viewer { ...F0 } } }',
      ),
      /cost limit/,
    ],
    [
      '16,000 repeated fields (96 KB)',
      `{ viewer { ${rep(16_000, () => 'label')} } }`,
      /the document is \d+ bytes; the limit is 65536/,
    ],
    ['9,000 repeated fields (54 KB)', `{ viewer { ${rep(9_000, () => 'label')} } }`, /more than 2000 tokens/],
    ['300 repeated fields', `{ viewer { ${rep(300, () => 'role')} } }`, /more than 200 field selections/],
    [
      'fields repeated in inline fragments',
      `{ viewer { ${rep(150, () => '... on Viewer { label role }')} } }`,
      /more than 200 field selections/,
    ],
    [
      'fields under directives',
      `{ viewer { ${rep(220, () => 'label @include(if: true)')} } }`,
      /more than 200 field selections/,
    ],
    [
      'fragments full of repeated fields',
      `{ viewer { ${rep(70, (i) => `...A${i}`)} } } ${rep(70, (i) => `fragment A${i} on Viewer { label label label }`)}`,
      /more than 200 field selections/,
    ],
    [
      'deeply nested inline fragments',
      `{ viewer { ${'... on Viewer { '.repeat(600)}label${' }'.repeat(600)} } }`,
      /more than 2000 tokens/,
    ],
  ];

  it.each(attacks)('should refuse %s without a token with 401, before parsing', async (_name, query) => {
    const res = await post(JSON.stringify({ query }));
    expect(res.status).toBe(401);
  });

  it.each(attacks)('should refuse %s over HTTP with BAD_USER_INPUT', async (_name, query, message) => {
    const res = await post(JSON.stringify({ query }), customer);
    const body = (await res.json()) as {
      data?: unknown;
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(body.data ?? null).toBeNull();
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toMatch(message);
  });

  it.each(attacks)('should refuse %s over WebSocket with BAD_USER_INPUT', async (_name, query, message) => {
    const result = await overWs(admin, query);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(message);
  });

  it('should refuse an over-limit document given to GET', async () => {
    const query = `{ viewer { ${rep(300, () => 'role')} } }`;
    const res = await fetch(`${t.url}?query=${encodeURIComponent(query)}`, {
      headers: { authorization: `Bearer ${admin}`, 'apollo-require-preflight': 'true' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { message: string }[] }).errors[0]!.message).toMatch(
      /field selections/,
    );
  });

  it('should still run the full introspection query and an ordinary one', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const query = getIntrospectionQuery({
      descriptions: true,
      inputValueDeprecation: true,
      specifiedByUrl: true,
    });
    const res = await post(JSON.stringify({ query }), customer);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { __schema: unknown } }).data.__schema).toBeTruthy();
    expect(await overWs(customer, '{ viewer { role } }')).toEqual({ data: { viewer: { role: 'CUSTOMER' } } });
  });
});

describe('strings checked at the edge', () => {
  const NOT_STORABLE = 'must not contain NUL characters or unpaired UTF-16 surrogates';
  const createWorkspace =
    'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { workspace { id } } }';
  const beginTurn = 'mutation($input: BeginTurnInput!) { beginTurn(input: $input) { turnId } }';
  const createConnection =
    'mutation($input: CreateConnectionInput!) { createConnection(input: $input) { connection { id } } }';
  const fakeId = Buffer.from('Assistant:00000000-0000-0000-0000-000000000000').toString('base64url');

  const cases: [string, () => string, string, Record<string, unknown>, string][] = [
    [
      'NUL in createWorkspace(name)',
      () => admin,
      createWorkspace,
      { input: { name: 'a\u0000b' } },
      'createWorkspace(input.name)',
    ],
    [
      'a lone surrogate in createWorkspace(name)',
      () => admin,
      createWorkspace,
      { input: { name: 'a\uD800' } },
      'createWorkspace(input.name)',
    ],
    [
      'NUL in beginTurn(conversationId)',
      () => runtime,
      beginTurn,
      { input: { assistantId: fakeId, conversationId: 'c\u0000' } },
      'beginTurn(input.conversationId)',
    ],
    [
      'a lone low surrogate in a nested credential key',
      () => admin,
      createConnection,
      {
        input: {
          workspaceId: fakeId,
          kind: 'MCP',
          name: 'x',
          endpointUrl: 'https://x.example/mcp',
          credential: { kind: 'BEARER', key: '\uDC00secret' },
        },
      },
      'createConnection(input.credential.key)',
    ],
  ];

  it.each(cases)(
    'should refuse %s over HTTP with BAD_USER_INPUT naming the field',
    async (_n, token, query, variables, where) => {
      const res = await post(JSON.stringify({ query, variables }), token());
      const body = (await res.json()) as {
        data?: unknown;
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(body.errors).toEqual([
        { message: `${where} ${NOT_STORABLE}`, extensions: { code: 'BAD_USER_INPUT' } },
      ]);
      expect(body.data ?? null).toBeNull();
    },
  );

  it('should refuse NUL in a literal, with the same message', async () => {
    const result = await t.gql(
      'mutation { createWorkspace(input: { name: "a\\u0000b" }) { workspace { id } } }',
      {},
      admin,
    );
    expect(result.errors?.[0]).toEqual({
      message: `createWorkspace(input.name) ${NOT_STORABLE}`,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('should refuse a bad string over WebSocket too', async () => {
    const client = wsClient(t.wsUrl, admin, { lazy: true });
    try {
      const errors = await new Promise<unknown>((resolve, reject) => {
        client.subscribe(
          { query: createWorkspace, variables: { input: { name: 'x\u0000' } } },
          {
            next: () => reject(new Error('answered')),
            error: resolve,
            complete: () => reject(new Error('completed')),
          },
        );
      });
      expect(errors).toEqual([
        expect.objectContaining({
          message: `createWorkspace(input.name) ${NOT_STORABLE}`,
          extensions: { code: 'BAD_USER_INPUT' },
        }),
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('should not refuse NUL inside callTool arguments (a JSON scalar: the model’s, passed on unchanged)', async () => {
    const result = await t.gql(
      'mutation($input: CallToolInput!) { callTool(input: $input) { ok message } }',
      { input: { turnId: fakeId, name: 'x__y', arguments: { v: 'pay 100\u0000EUR', w: '\uD800' } } },
      runtime,
    );
    expect(JSON.stringify(result)).not.toContain(NOT_STORABLE);
  });
});
