/**
 * `npm run demo -- --exit` against the test database: every step is printed with its GraphQL
 * operation, it exits 0, and the database holds what the steps claim (so no step can be faked):
 * two connections, four enabled operations, one turn with a READ and a WRITE call, and exactly one
 * ledger row, for the WRITE, with its outcome.
 */
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { rawId } from '../../support/ids.js';
import { runScript } from '../../support/run-script.js';
import { tempDirForTest } from '../../support/temp.js';

async function demo(env: Record<string, string>) {
  // Its own DATA_DIR (the secret key lives there), never the checkout's .data.
  const dataDir = await tempDirForTest('ct-demo-');
  return runScript('scripts/demo.ts', ['--exit'], {
    LOG_LEVEL: 'warn',
    PORT: '0',
    DATA_DIR: dataDir,
    ...env,
  });
}

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const STEPS: [string, RegExp][] = [
  ['Who am I', /query \{ viewer \{ role label \} \}/],
  ['Create a workspace', /createWorkspace\(input: \$input\)/],
  ['Create API tokens', /createApiToken\(input: \$input\)/],
  ['Connect the local MCP server', /createConnection\(input: \$input\)/],
  ['Connect the local OpenAPI service', /"kind":"OPENAPI"/],
  ['Run discovery again', /discover\(input: \$input\)/],
  ['Review state', /operations\(first: 50\)/],
  ['Operator switch', /enable\(input: \$input\)/],
  ['Create an assistant', /createAssistant\(input: \$input\)/],
  ['Customer gate', /\[customer\] mutation\(\$input: SetConnectedToolsInput!\)/],
  ['Runtime: begin a turn', /beginTurn\(input: \$input\)/],
  ['Runtime: call a READ tool', /"name":"orders__lookup_order"/],
  ['Runtime: call a WRITE tool', /"name":"helpdesk__createTicket"/],
  ['Runtime: finish the turn', /finishTurn\(input: \$input\)/],
  ['The ledger', /ledger\(first: 10\)/],
  ['The turn and its calls', /turn\(id: \$id\) \{/],
];

describe('npm run demo -- --exit', { timeout: 180_000 }, () => {
  it('should print every step with its operation, exit 0, and leave exactly what it printed in the database', async () => {
    const { code, stdout, stderr } = await demo({ DATABASE_URL: inject('databaseUrl') });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    // Each numbered step in order, followed (before the next step) by the operation it sent.
    const blocks = stdout.split(/\n(?= ?\d+\. )/).slice(1);
    expect(blocks).toHaveLength(STEPS.length);
    STEPS.forEach(([title, operation], i) => {
      expect(blocks[i]).toMatch(new RegExp(`^ ?${i + 1}\\. ${title.replace(/[?()]/g, '\\$&')}`));
      expect(blocks[i]).toMatch(operation);
    });
    expect(stdout).toContain(`All ${STEPS.length} steps succeeded.`);
    expect(stdout).toMatch(/GraphQL explorer: http:\/\/127\.0\.0\.1:\d+\/graphql/);
    expect(stdout).toMatch(/Turn debugger: {4}http:\/\/127\.0\.0\.1:\d+\/debugger/);
    expect(stdout).toContain('the helpdesk service received: POST /tickets');

    const workspaceId = rawId(/Workspace: +(\S+)/.exec(stdout)![1]!);
    const turnId = rawId(/Turn: +(\S+)/.exec(stdout)![1]!);
    const connections = await query<{ kind: string; slug: string }>(
      'SELECT kind, slug FROM connection WHERE workspace_id = $1 ORDER BY kind',
      [workspaceId],
    );
    expect(connections).toEqual([
      { kind: 'MCP', slug: 'orders' },
      { kind: 'OPENAPI', slug: 'helpdesk' },
    ]);
    const operations = await query<{ key: string; enabled: boolean }>(
      'SELECT key, enabled FROM operation WHERE workspace_id = $1 ORDER BY key',
      [workspaceId],
    );
    expect(operations).toEqual([
      { key: 'connector.helpdesk.create_ticket', enabled: true },
      { key: 'connector.helpdesk.get_ticket', enabled: true },
      { key: 'connector.orders.lookup_order', enabled: true },
      { key: 'connector.orders.refund_order', enabled: true },
    ]);
    const calls = await query<{
      seq: number;
      declared_name: string;
      risk: string;
      status: string;
      turn_id: string;
    }>(
      'SELECT seq, declared_name, risk, status, turn_id FROM turn_call WHERE workspace_id = $1 ORDER BY seq',
      [workspaceId],
    );
    expect(calls).toEqual([
      { seq: 1, declared_name: 'orders__lookup_order', risk: 'READ', status: 'SUCCEEDED', turn_id: turnId },
      {
        seq: 2,
        declared_name: 'helpdesk__createTicket',
        risk: 'WRITE',
        status: 'SUCCEEDED',
        turn_id: turnId,
      },
    ]);
    const ledger = await query<{ operation_key: string; arguments: unknown; outcome: string | null }>(
      `SELECT e.operation_key, e.arguments, o.status AS outcome
         FROM ledger_entry e LEFT JOIN ledger_outcome o ON o.ledger_entry_id = e.id
        WHERE e.workspace_id = $1`,
      [workspaceId],
    );
    expect(ledger).toEqual([
      {
        operation_key: 'connector.helpdesk.create_ticket',
        arguments: { title: 'Refund for order A-1001', body: 'The beans arrived wet.' },
        outcome: 'SUCCEEDED',
      },
    ]);
  });

  it('should give every token it mints an expiry of 24 hours, so that runs do not pile up valid tokens', async () => {
    const started = Date.now();
    const { code, stdout, stderr } = await demo({ DATABASE_URL: inject('databaseUrl') });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const tokens = await query<{ label: string; expires_at: Date | null }>(
      "SELECT label, expires_at FROM api_token WHERE label LIKE 'demo %' AND created_at >= $1 ORDER BY label",
      [new Date(started - 1_000)],
    );
    // On a database without an admin yet, its first start makes the first admin (as npm start does).
    const mintedAdmin = stdout.includes('minted for this demo') ? ['demo admin'] : [];
    // Another file's demo run may share the database and the window: every token found must expire.
    expect(tokens.map((t) => t.label)).toEqual(
      expect.arrayContaining([...mintedAdmin, 'demo customer', 'demo operator', 'demo runtime']),
    );
    for (const t of tokens) {
      expect(t.expires_at, t.label).not.toBeNull();
      const left = t.expires_at!.getTime() - started;
      expect(left, t.label).toBeGreaterThan(23 * 3_600_000);
      expect(left, t.label).toBeLessThanOrEqual(24 * 3_600_000 + 600_000);
    }
  });

  it('should exit 1 naming the step and the reason when a step cannot do what it claims', async () => {
    // Loopback refused: the local sources cannot be connected, so the demo must stop at step 4.
    const { code, stdout, stderr } = await demo({
      DATABASE_URL: inject('databaseUrl'),
      OUTBOUND_ALLOW_LOOPBACK: 'false',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /demo failed: step 4 \(Connect the local MCP server .*\) failed: userErrors: .*URL_REFUSED.*OUTBOUND_ALLOW_HOSTS/,
    );
    expect(stderr).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(stdout).not.toMatch(/^ ?5\. /m);
    expect(stdout).not.toContain('steps succeeded');
  });

  it('should stop at start with one line naming what to fix when the database does not exist', async () => {
    const url = new URL(inject('databaseUrl'));
    const name = `${url.pathname.slice(1)}_demo_typo`;
    url.pathname = `/${name}`;
    const { code, stdout, stderr } = await demo({ DATABASE_URL: url.toString() });
    expect(code).toBe(1);
    expect(stderr).toContain(
      `demo: could not start the service: database "${name}" does not exist on ${url.hostname}:${url.port || '5432'}; create it (createdb ${name}) or fix DATABASE_URL\n`,
    );
    expect(stderr).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(stdout).not.toMatch(/^ ?1\. /m);
  });
});
