/**
 * The demo's journey, only through the public GraphQL API over HTTP: every step is one or more
 * GraphQL operations with a bearer token, printed as a numbered line with the document it sent, so
 * a reader learns the API. A step whose answer is not what the product promises throws DemoError.
 */

/**
 * Every token the demo mints expires after this: each run mints new ones (their secrets are shown
 * once), so the ones of earlier runs must not stay valid for good.
 */
export const DEMO_TOKEN_LIFETIME_MS = 24 * 3_600_000; // 24 hours

export class DemoError extends Error {
  override readonly name = 'DemoError';
}

export interface StepsInput {
  /** The service's GraphQL endpoint (`http://…/graphql`). */
  graphqlUrl: string;
  adminToken: string;
  /** The local MCP server's endpoint and the local OpenAPI description's address. */
  mcpUrl: string;
  descriptionUrl: string;
  /** What the OpenAPI service received so far (to show that the WRITE reached it). */
  openApiReceived: () => string[];
  print: (line: string) => void;
}

export interface StepsResult {
  workspaceId: string;
  assistantId: string;
  turnId: string;
  tokens: { operator: string; customer: string; runtime: string };
  steps: number;
}

type Json = Record<string, unknown>;

interface Answer {
  data?: Json | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Follows a dotted path into a GraphQL answer (`createWorkspace.workspace.id`). */
function at(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Json)[key];
  }
  return cur;
}

function str(value: unknown, path: string): string {
  const v = at(value, path);
  if (typeof v !== 'string') throw new DemoError(`the answer has no ${path}`);
  return v;
}

function list(value: unknown, path: string): Json[] {
  const v = at(value, path);
  if (!Array.isArray(v)) throw new DemoError(`the answer has no list at ${path}`);
  return v as Json[];
}

/** One GraphQL request; top-level errors and userErrors become DemoError. */
export async function graphql(
  url: string,
  token: string,
  query: string,
  variables: Json = {},
): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch (err) {
    throw new DemoError(`the service at ${url} did not answer (${(err as Error).message})`);
  }
  let body: Answer;
  try {
    body = (await res.json()) as Answer;
  } catch {
    throw new DemoError(`HTTP ${res.status} from ${url}, not a GraphQL answer`);
  }
  if (body.errors?.length) {
    const first = body.errors[0]!;
    throw new DemoError(`HTTP ${res.status}, ${first.extensions?.code ?? 'ERROR'}: ${first.message}`);
  }
  const data = body.data ?? {};
  for (const payload of Object.values(data)) {
    const userErrors = at(payload, 'userErrors');
    if (Array.isArray(userErrors) && userErrors.length > 0)
      throw new DemoError(`userErrors: ${JSON.stringify(userErrors)}`);
  }
  return data;
}

const Q = {
  viewer: 'query { viewer { role label } }',
  createWorkspace:
    'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { workspace { id name } userErrors { field code message } } }',
  createApiToken:
    'mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { secret apiToken { id role label } userErrors { field code message } } }',
  createConnection:
    'mutation($input: CreateConnectionInput!) { createConnection(input: $input) { connection { id slug kind } discoveryRun { outcome added updated removed flagged } userErrors { field code message } } }',
  discover:
    'mutation($input: DiscoverInput!) { discover(input: $input) { run { outcome trigger added updated removed flagged } userErrors { field code message } } }',
  operations:
    'query($id: ID!) { workspace(id: $id) { operations(first: 50) { totalCount nodes { id key name risk enabled needsReview connection { slug } } } } }',
  enable:
    'mutation($input: EnableInput!) { enable(input: $input) { operation { key enabled } userErrors { field code message } } }',
  createAssistant:
    'mutation($input: CreateAssistantInput!) { createAssistant(input: $input) { assistant { id name } userErrors { field code message } } }',
  setConnectedTools:
    'mutation($input: SetConnectedToolsInput!) { setConnectedTools(input: $input) { changed assistant { connectedTools(first: 10) { nodes { slug } } } userErrors { field code message } } }',
  beginTurn:
    'mutation($input: BeginTurnInput!) { beginTurn(input: $input) { turnId tools { name description } } }',
  callTool:
    'mutation($input: CallToolInput!) { callTool(input: $input) { ok status content structuredContent message callId attempts durationMs recorded } }',
  finishTurn: 'mutation($input: FinishTurnInput!) { finishTurn(input: $input) { finished } }',
  ledger:
    'query($id: ID!) { workspace(id: $id) { ledger(first: 10) { nodes { id operationKey declaredName arguments status attempts outcomeBy createdAt turn { id } call { seq } } } } }',
  turnCalls:
    'query($id: ID!) { turn(id: $id) { conversationId declaredToolNames finishedAt calls(first: 10) { totalCount nodes { seq declaredName operationKey risk status attempts durationMs arguments } } } }',
};

export async function runSteps(input: StepsInput): Promise<StepsResult> {
  const { print } = input;
  let n = 0;
  /** Prints the step, runs its operations, prints what came back; a failure names the step. */
  const step = async <T>(title: string, body: () => Promise<T>): Promise<T> => {
    n += 1;
    print('');
    print(`${String(n).padStart(2)}. ${title}`);
    try {
      return await body();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new DemoError(`step ${n} (${title}) failed: ${why}`);
    }
  };
  const run = async (who: string, token: string, query: string, variables: Json = {}): Promise<Json> => {
    print(`    [${who}] ${query}`);
    if (Object.keys(variables).length > 0) print(`    variables: ${JSON.stringify(variables)}`);
    return graphql(input.graphqlUrl, token, query, variables);
  };
  const show = (line: string): void => print(`    → ${line}`);
  const admin = input.adminToken;

  await step('Who am I? Check the admin token', async () => {
    const d = await run('admin', admin, Q.viewer);
    if (at(d, 'viewer.role') !== 'ADMIN')
      throw new DemoError(`the token is ${String(at(d, 'viewer.role'))}, not ADMIN`);
    show(`role ${str(d, 'viewer.role')}, label "${str(d, 'viewer.label')}"`);
  });

  const workspaceId = await step("Create a workspace (one customer's space)", async () => {
    const d = await run('admin', admin, Q.createWorkspace, {
      input: { name: `Demo ${new Date().toISOString()}` },
    });
    show(`workspace ${str(d, 'createWorkspace.workspace.id')} "${str(d, 'createWorkspace.workspace.name')}"`);
    return str(d, 'createWorkspace.workspace.id');
  });

  const mint = async (role: string, label: string, bound: boolean): Promise<string> => {
    const d = await run('admin', admin, Q.createApiToken, {
      input: {
        role,
        label,
        expiresAt: new Date(Date.now() + DEMO_TOKEN_LIFETIME_MS).toISOString(),
        ...(bound ? { workspaceId } : {}),
      },
    });
    show(`${role} token ${str(d, 'createApiToken.apiToken.id')} (the secret is in this answer only)`);
    return str(d, 'createApiToken.secret');
  };
  const tokens = await step(
    'Create API tokens: an operator, the customer of this workspace, a runtime',
    async () => ({
      operator: await mint('OPERATOR', 'demo operator', false),
      customer: await mint('CUSTOMER', 'demo customer', true),
      runtime: await mint('RUNTIME', 'demo runtime', true),
    }),
  );

  const connect = async (input2: Json): Promise<string> => {
    const d = await run('operator', tokens.operator, Q.createConnection, {
      input: { workspaceId, ...input2 },
    });
    const outcome = str(d, 'createConnection.discoveryRun.outcome');
    show(
      `connection ${str(d, 'createConnection.connection.id')} slug "${str(d, 'createConnection.connection.slug')}"; first discovery ${outcome}, ${String(at(d, 'createConnection.discoveryRun.added'))} operations added`,
    );
    if (outcome !== 'SUCCEEDED') throw new DemoError(`the first discovery ended ${outcome}`);
    return str(d, 'createConnection.connection.id');
  };
  const mcpId = await step(
    `Connect the local MCP server (${input.mcpUrl}); its first discovery runs at once`,
    () => connect({ kind: 'MCP', name: 'Orders', endpointUrl: input.mcpUrl }),
  );
  const apiId = await step(
    `Connect the local OpenAPI service by its description (${input.descriptionUrl})`,
    () => connect({ kind: 'OPENAPI', name: 'Helpdesk', descriptionUrl: input.descriptionUrl }),
  );

  await step(
    'Run discovery again on both sources (what a refresh does: reconcile, hold changes for review)',
    async () => {
      for (const connectionId of [mcpId, apiId]) {
        const d = await run('operator', tokens.operator, Q.discover, { input: { connectionId } });
        const r = (k: string) => String(at(d, `discover.run.${k}`));
        show(
          `${r('outcome')}: ${r('added')} added, ${r('updated')} updated, ${r('removed')} removed, ${r('flagged')} held for review`,
        );
        if (r('outcome') !== 'SUCCEEDED') throw new DemoError(`discovery ended ${r('outcome')}`);
      }
    },
  );

  const operations = await step(
    "Review state: every operation, its risk and the operator's switch",
    async () => {
      const d = await run('operator', tokens.operator, Q.operations, { id: workspaceId });
      const ops = list(d, 'workspace.operations.nodes');
      for (const op of ops)
        show(
          `${String(op.key).padEnd(38)} ${String(op.risk).padEnd(5)} ${op.enabled ? 'enabled ' : 'disabled'}${op.needsReview ? ' (needs review)' : ''}`,
        );
      if (ops.length !== 4) throw new DemoError(`expected 4 operations (2 per source), found ${ops.length}`);
      return ops;
    },
  );

  await step('Operator switch: enable the operations that start off (new WRITE operations do)', async () => {
    const off = operations.filter((op) => op.enabled !== true);
    if (off.length === 0) show('nothing to enable');
    for (const op of off) {
      const d = await run('operator', tokens.operator, Q.enable, { input: { operationId: op.id } });
      if (at(d, 'enable.operation.enabled') !== true) throw new DemoError(`${String(op.key)} is still off`);
      show(`${str(d, 'enable.operation.key')} enabled`);
    }
  });

  const assistantId = await step('Create an assistant in the workspace', async () => {
    const d = await run('operator', tokens.operator, Q.createAssistant, {
      input: { workspaceId, name: 'Support bot' },
    });
    show(`assistant ${str(d, 'createAssistant.assistant.id')} "${str(d, 'createAssistant.assistant.name')}"`);
    return str(d, 'createAssistant.assistant.id');
  });

  await step('Customer gate: the customer connects both sources to the assistant', async () => {
    for (const connectionId of [mcpId, apiId]) {
      const d = await run('customer', tokens.customer, Q.setConnectedTools, {
        input: { assistantId, connectionId, enabled: true },
      });
      const slugs = list(d, 'setConnectedTools.assistant.connectedTools.nodes').map((c) => String(c.slug));
      show(`connected tools now: ${slugs.join(', ')}`);
    }
  });

  const turn = await step('Runtime: begin a turn; the service declares the callable tools', async () => {
    const d = await run('runtime', tokens.runtime, Q.beginTurn, {
      input: { assistantId, conversationId: 'demo-conversation-1' },
    });
    const tools = list(d, 'beginTurn.tools').map((t) => String(t.name));
    show(`turn ${str(d, 'beginTurn.turnId')}; tools: ${tools.join(', ')}`);
    return { turnId: str(d, 'beginTurn.turnId'), tools };
  });
  const toolNamed = (suffix: string): string => {
    const name = turn.tools.find((t) => t.endsWith(`__${suffix}`));
    if (!name) throw new DemoError(`no declared tool ends with __${suffix}: ${turn.tools.join(', ')}`);
    return name;
  };

  const callTool = async (name: string, args: Json): Promise<Json> => {
    const d = await run('runtime', tokens.runtime, Q.callTool, {
      input: { turnId: turn.turnId, name, arguments: args },
    });
    const r = at(d, 'callTool') as Json;
    const text = ((r.content as Json[] | undefined) ?? [])
      .map((c) => (typeof c.text === 'string' ? c.text : JSON.stringify(c)))
      .join(' ');
    show(
      `${String(r.status)} in ${String(r.durationMs)} ms, ${String(r.attempts)} attempt(s): ${text.slice(0, 160)}`,
    );
    if (r.ok !== true || r.status !== 'SUCCEEDED')
      throw new DemoError(`the call answered ${String(r.status)}: ${String(r.message)}`);
    return r;
  };
  await step('Runtime: call a READ tool (MCP lookup_order)', async () =>
    callTool(toolNamed('lookup_order'), { orderId: 'A-1001' }),
  );
  const writeArgs = { title: 'Refund for order A-1001', body: 'The beans arrived wet.' };
  await step('Runtime: call a WRITE tool (OpenAPI createTicket): it leaves a ledger row', async () => {
    const before = input.openApiReceived().length;
    await callTool(toolNamed('createTicket'), writeArgs);
    const reached = input
      .openApiReceived()
      .slice(before)
      .filter((l) => l.startsWith('POST /tickets'));
    if (reached.length !== 1)
      throw new DemoError('the helpdesk service did not receive exactly one POST /tickets');
    show(`the helpdesk service received: ${reached[0]!}`);
  });

  await step('Runtime: finish the turn', async () => {
    const d = await run('runtime', tokens.runtime, Q.finishTurn, { input: { turnId: turn.turnId } });
    show(`finished: ${String(at(d, 'finishTurn.finished'))}`);
  });

  await step('The ledger: one row per side-effecting call (append-only)', async () => {
    const d = await run('admin', admin, Q.ledger, { id: workspaceId });
    const rows = list(d, 'workspace.ledger.nodes');
    for (const row of rows)
      show(
        `${String(row.operationKey)} ${String(row.status)} by ${String(row.outcomeBy)}, ${String(row.attempts)} attempt(s), arguments ${JSON.stringify(row.arguments)}, call #${String(at(row, 'call.seq'))}`,
      );
    if (rows.length !== 1)
      throw new DemoError(`expected exactly 1 ledger row (the WRITE), found ${rows.length}`);
    if (rows[0]!.status !== 'SUCCEEDED') throw new DemoError(`the ledger row is ${String(rows[0]!.status)}`);
  });

  await step('The turn and its calls (what the debugger shows)', async () => {
    const d = await run('admin', admin, Q.turnCalls, { id: turn.turnId });
    const calls = list(d, 'turn.calls.nodes');
    for (const c of calls)
      show(
        `#${String(c.seq)} ${String(c.declaredName)} ${String(c.risk)} ${String(c.status)} ${String(c.durationMs)} ms`,
      );
    if (calls.length !== 2) throw new DemoError(`expected 2 calls on the turn, found ${calls.length}`);
  });

  return { workspaceId, assistantId, turnId: turn.turnId, tokens, steps: n };
}
