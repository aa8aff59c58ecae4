/**
 * The console's filters and links (issue 12): ledger by operation, status and time, with links to
 * its turn, call and operation; a workspace's turns by conversation; connections by status and
 * kind; discovery runs by outcome; the disable reason; ADMIN's review queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisableDocument, EnableDocument } from '../../generated/graphql.js';
import type { TestApp } from '../../support/app.js';
import { begin, call, startCrmWorld, type CrmFixture, type World } from '../../support/turns.js';

let t: TestApp;
let w: World;

let fixture: CrmFixture;

beforeAll(async () => {
  fixture = await startCrmWorld('Links');
  ({ t, w } = fixture);
});

afterAll(() => fixture.stop());

interface LedgerRow {
  operationKey: string;
  status: string;
  turn: { conversationId: string } | null;
  call: { seq: number; declaredName: string } | null;
  operation: { key: string } | null;
}

describe('console filters and links', () => {
  it('should filter the ledger and link each row to its turn, call and operation', async () => {
    const since = new Date().toISOString();
    const turn = await begin(t, w, 'ledger-links');
    await call(t, w, turn.turnId, 'links__update', { email: 'a@b.c', plan: 'pro' });
    await call(t, w, turn.turnId, 'links__lookup', { email: 'a@b.c' });
    await call(t, w, turn.turnId, 'links__update', { email: 'a@b.c', plan: 'max' });
    const q = `query($id: ID!, $op: ID, $status: CallStatus, $since: DateTimeISO, $until: DateTimeISO) {
      workspace(id: $id) { ledger(first: 100, operationId: $op, status: $status, since: $since, until: $until) {
        nodes { operationKey status turn { conversationId } call { seq declaredName } operation { key } } } } }`;
    const run = async (vars: Record<string, unknown>) =>
      (
        await t.ok<{ workspace: { ledger: { nodes: LedgerRow[] } } }, unknown>(
          q,
          { id: w.workspaceId, ...vars },
          w.admin,
        )
      ).workspace.ledger.nodes;
    const all = await run({ op: w.ops.update!.id, status: 'SUCCEEDED', since });
    expect(all).toEqual([
      {
        operationKey: 'connector.links.update',
        status: 'SUCCEEDED',
        turn: { conversationId: 'ledger-links' },
        call: { seq: 3, declaredName: 'links__update' },
        operation: { key: 'connector.links.update' },
      },
      expect.objectContaining({ call: { seq: 1, declaredName: 'links__update' } }),
    ]);
    expect(await run({ status: 'TIMEOUT', since })).toEqual([]);
    expect(await run({ until: since })).toEqual([]);
    t.resetQueries();
    await run({});
    const statements = t.queries.length;
    // The workspace, the page, one batch for the outcomes (status), then one batch per link, whatever the rows.
    expect(statements).toBeLessThanOrEqual(6);
  });

  it("should list a workspace's turns by conversation", async () => {
    await begin(t, w, 'conv-a');
    await begin(t, w, 'conv-b');
    await begin(t, w, 'conv-a');
    const res = await t.ok<{ workspace: { turns: { nodes: { conversationId: string }[] } } }, unknown>(
      `query($id: ID!) { workspace(id: $id) { turns(first: 10, conversationId: "conv-a") { nodes { conversationId } } } }`,
      { id: w.workspaceId },
      w.customer,
    );
    expect(res.workspace.turns.nodes).toEqual([{ conversationId: 'conv-a' }, { conversationId: 'conv-a' }]);
  });

  it('should filter connections by status and kind, and discovery runs by outcome', async () => {
    const q = `query($id: ID!) { workspace(id: $id) {
      ready: connections(status: READY, kind: MCP) { nodes { name discoveryRuns(outcome: SUCCEEDED) { nodes { outcome } } failed: discoveryRuns(outcome: FAILED) { nodes { outcome } } } }
      openapi: connections(kind: OPENAPI) { nodes { name } } } }`;
    const res = await t.ok<
      {
        workspace: {
          ready: {
            nodes: { name: string; discoveryRuns: { nodes: unknown[] }; failed: { nodes: unknown[] } }[];
          };
          openapi: { nodes: unknown[] };
        };
      },
      unknown
    >(q, { id: w.workspaceId }, w.admin);
    expect(res.workspace.ready.nodes.map((n) => n.name)).toEqual(['Links']);
    expect(res.workspace.ready.nodes[0]!.discoveryRuns.nodes).toEqual([{ outcome: 'SUCCEEDED' }]);
    expect(res.workspace.ready.nodes[0]!.failed.nodes).toEqual([]);
    expect(res.workspace.openapi.nodes).toEqual([]);
  });

  it('should show why and by whom an operation was disabled, and clear it on enable', async () => {
    const q = `query($id: ID!) { operation(id: $id) { enabled disabledReason disabledBy disabledAt } }`;
    await t.ok(
      DisableDocument,
      { input: { operationId: w.ops.fails!.id, reason: 'noisy incident' } },
      w.operator,
    );
    const off = await t.ok<{ operation: Record<string, unknown> }, unknown>(
      q,
      { id: w.ops.fails!.id },
      w.customer,
    );
    expect(off.operation).toMatchObject({
      enabled: false,
      disabledReason: 'noisy incident',
      disabledBy: 'test operator',
    });
    expect(off.operation.disabledAt).not.toBeNull();
    await t.ok(EnableDocument, { input: { operationId: w.ops.fails!.id } }, w.operator);
    const on = await t.ok<{ operation: Record<string, unknown> }, unknown>(
      q,
      { id: w.ops.fails!.id },
      w.customer,
    );
    expect(on.operation).toEqual({ enabled: true, disabledReason: null, disabledBy: null, disabledAt: null });
  });

  it("should list operations awaiting review across workspaces in ADMIN's queue only", async () => {
    await t.app.services.orm.em
      .getConnection()
      .execute(
        `update operation set needs_review = true, enabled = false where key = 'connector.links.slow_read'`,
      );
    // The queue spans every workspace of the database, which other test files share: page through it.
    const q = `query ($after: String) { reviewQueue(first: 100, after: $after) { nodes { key needsReview } pageInfo { hasNextPage endCursor } } }`;
    type Page = {
      reviewQueue: {
        nodes: { key: string; needsReview: boolean }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    };
    const nodes: Page['reviewQueue']['nodes'] = [];
    let after: string | null = null;
    for (let page = 0; page < 50; page++) {
      const res: Page = await t.ok<Page, unknown>(q, { after }, w.admin);
      nodes.push(...res.reviewQueue.nodes);
      if (!res.reviewQueue.pageInfo.hasNextPage) break;
      after = res.reviewQueue.pageInfo.endCursor;
    }
    expect(nodes.map((n) => n.key)).toContain('connector.links.slow_read');
    expect(nodes.every((n) => n.needsReview)).toBe(true);
    // An OPERATOR reads the queue (issue 28: only deciding is ADMIN's); a CUSTOMER does not.
    const operator = await t.gql(q, {}, w.operator);
    expect(operator.errors).toBeUndefined();
    const customer = await t.gql(q, {}, w.customer);
    expect(customer.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
