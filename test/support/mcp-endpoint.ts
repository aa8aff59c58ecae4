/**
 * Helpers for tests of the MCP endpoint (`/mcp/{assistantId}`, issue 27) driven by outside clients:
 * an MCP_CLIENT token minted through `createApiToken` as a user would, the endpoint's URL, and what
 * the calls left in the database (their TurnCalls and ledger rows), and an SDK client's fetch that
 * picks the answer's form.
 */
import pg from 'pg';
import type { TestApp } from './app.js';
import { rawId } from './ids.js';
import { waitUntil } from './wait.js';
import type { World } from './turns.js';

/** An MCP_CLIENT token for the world's assistant, minted by its CUSTOMER (their workspace, their choice). */
export async function mintMcpClientToken(t: TestApp, w: World, label = 'outside client'): Promise<string> {
  return (await mcpClientTokenOf(t, w, label)).secret;
}

/** {@link mintMcpClientToken}, with the token's GraphQL ID. */
export async function mcpClientTokenOf(
  t: TestApp,
  w: World,
  label: string,
): Promise<{ id: string; secret: string }> {
  const res = await t.ok<
    {
      createApiToken: {
        apiToken: { id: string } | null;
        secret: string | null;
        userErrors: { code: string; message: string }[];
      };
    },
    { a: string; l: string }
  >(
    'mutation($a: ID!, $l: String!) { createApiToken(input: { label: $l, role: MCP_CLIENT, assistantId: $a }) { apiToken { id } secret userErrors { code message } } }',
    { a: w.assistantId, l: label },
    w.customer,
  );
  const { apiToken, secret, userErrors } = res.createApiToken;
  if (!apiToken || !secret) throw new Error(JSON.stringify(userErrors));
  return { id: apiToken.id, secret };
}

/** The endpoint of the world's assistant on this app. */
export function endpointUrl(t: TestApp, assistantId: string): URL {
  return new URL(`/mcp/${encodeURIComponent(assistantId)}`, t.url);
}

export interface RecordedCall {
  declaredName: string;
  status: string;
  risk: string | null;
  turnId: string;
  ledgerStatus: string | null;
  ledgerOutcome: string | null;
}

/**
 * The TurnCalls of `declaredName` on the assistant's turns whose arguments contain `args`, with
 * their ledger row if any, once `count` of them are recorded as finished (a READ's record may land
 * after its answer).
 */
export async function recordedCalls(
  t: TestApp,
  assistantId: string,
  declaredName: string,
  args: Record<string, unknown>,
  count = 1,
): Promise<RecordedCall[]> {
  const sql = new pg.Client({ connectionString: t.config.databaseUrl! });
  await sql.connect();
  try {
    let rows: RecordedCall[] = [];
    await waitUntil(async () => {
      const res = await sql.query<RecordedCall>(
        `select c.declared_name as "declaredName", c.status, c.risk, c.turn_id as "turnId",
                l.status as "ledgerStatus", o.status as "ledgerOutcome"
           from turn_call c join turn tu on tu.id = c.turn_id
           left join ledger_entry l on l.turn_call_id = c.id
           left join ledger_outcome o on o.ledger_entry_id = l.id
          where tu.assistant_id = $1 and c.declared_name = $2 and c.arguments @> $3::jsonb
            and c.status <> 'RUNNING'
          order by c.started_at`,
        [rawId(assistantId), declaredName, JSON.stringify(args)],
      );
      rows = res.rows;
      return rows.length >= count;
    }, 20);
    return rows;
  } finally {
    await sql.end();
  }
}

/** The `initialize` request of a client of `version`. */
export function initializeMessage(version = '2025-06-18', id: number | string = 1): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: 'raw-http', version: '1.0.0' },
    },
  };
}

/** One raw HTTP request to the endpoint, as a client that is not a library would send it. */
export async function mcpRequest(
  url: URL,
  token: string | null,
  options: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  const method = options.method ?? 'POST';
  return fetch(url, {
    method,
    headers: {
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...options.headers,
    },
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
    signal: options.signal,
  });
}

/** The form of answer an outside client asks for: JSON, or the event stream first. */
export type AnswerForm = 'json' | 'sse';

/**
 * A fetch for an SDK client's transport, with the one header that picks the answer's form: Accept as
 * the SDK sends it (JSON and event stream), or the event stream first, which asks for a stream. The
 * `content-type` of each POST's answer goes to `seen`.
 */
export function fetchFor(
  answer: AnswerForm,
  seen: string[],
): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    if (answer === 'sse' && init?.method === 'POST')
      headers.set('accept', 'text/event-stream, application/json');
    const res = await fetch(url, { ...init, headers });
    if (init?.method === 'POST') seen.push(res.headers.get('content-type') ?? '');
    return res;
  };
}
