/**
 * No data in logs (issue #10, finding 6): a database error on a path that carries tool arguments
 * or a customer's text is logged with its codes and the statement's shape, never its values.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkspaceDocument } from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

const MARKER = 'zq-private-7731';

let t: TestApp;
let peer: SdkServerHandle;
let w: World;

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: t.config.databaseUrl! });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function logLines(): Record<string, unknown>[] {
  return t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  t = await startTestApp({ captureLogs: true });
  peer = await startSdkServer({ stateful: true, json: false, tools: CRM_TOOLS });
  w = await buildWorld(t, peer.url, 'CRM');
  await connectTools(t, w);
  // Statements that carry the marker now fail inside PostgreSQL, whose error quotes the row.
  await sql(
    `alter table turn_call add constraint turn_call_no_marker check (arguments::text not like '%${MARKER}%')`,
  );
  await sql(`alter table workspace add constraint workspace_no_marker check (name not like '%${MARKER}%')`);
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('database errors in logs', () => {
  it('should log a failed tool-call record with its SQLSTATE and constraint, not the arguments', async () => {
    const turn = await begin(t, w, 'conv-logs');
    t.logs.length = 0;
    const result = await call(t, w, turn.turnId, 'crm__lookup', { email: `${MARKER}@example.com` });
    // The READ's answer still reaches the model; only its record failed.
    expect(result.ok).toBe(true);

    // A record the database refuses for what it holds is not retried as it is (issue 25 item 4): it
    // is stored without its content at once; the refusal is logged with its SQLSTATE.
    expect(
      logLines().filter((l) => l.msg === 'could not record a tool call; retrying in the background'),
    ).toHaveLength(0);
    const failures = logLines().filter((l) => l.msg === 'recording a tool call failed');
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures[0]).toMatchObject({
      level: 40,
      err: {
        sqlState: '23514',
        constraint: 'turn_call_no_marker',
        // PostgreSQL names the day's partition of turn_call that the row went to.
        table: expect.stringMatching(/^turn_call_p\d{8}$/) as unknown,
        statement: 'with: insert into turn_call',
      },
    });
    expect(t.logs.join('\n')).not.toContain(MARKER);
  });

  it('should log an internal error of a GraphQL request with its codes, not the input', async () => {
    const admin = await t.token(Role.ADMIN);
    t.logs.length = 0;
    const res = await t.gql(CreateWorkspaceDocument, { input: { name: `Acme ${MARKER}` } }, admin);
    expect(res.errors?.[0]?.extensions?.code).toBe('INTERNAL');
    expect(JSON.stringify(res)).not.toContain(MARKER);

    const failures = logLines().filter((l) => l.msg === 'internal error in a GraphQL request');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      err: {
        type: 'CheckConstraintViolationException',
        sqlState: '23514',
        constraint: 'workspace_no_marker',
        statement: 'insert into workspace',
      },
    });
    expect(t.logs.join('\n')).not.toContain(MARKER);
  });
});
