/**
 * Reviews an admin can decide from (issue 28), through GraphQL against a real MCP peer: each
 * refresh stores a structured diff on the operation's history, on its open review reasons and in
 * the run's change list; an admin approves or rejects a review in one action with the version they
 * saw, and a version that a later refresh made stale is refused.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApproveReviewDocument,
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DiscoverDocument,
  EnableDocument,
  OperationReviewDocument,
  RejectReviewDocument,
  ReviewQueueDiffsDocument,
  RunChangesDocument,
  type RunChangesQuery,
} from '../../generated/graphql.js';
import { createEmptyDatabase, Role, startTestApp, type TestApp } from '../../support/app.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';

const KEY = 'sk-live-0123456789abcdefghij';
const read = { readOnlyHint: true };

const v1: PeerTool[] = [
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.string() },
    annotations: read,
  },
  { name: 'report', description: 'A report', annotations: read, outputSchema: { total: z.number() } },
  { name: 'archive', description: 'Archive a record', inputSchema: { id: z.string() }, annotations: read },
  { name: 'notes', description: 'Read notes', inputSchema: { id: z.string() }, annotations: read },
  { name: 'gone', description: 'Goes away', annotations: read },
  {
    name: 'cleanup',
    description: 'Clean up',
    inputSchema: { id: z.string() },
    annotations: { readOnlyHint: false },
  },
];

const v2: PeerTool[] = [
  // A new required argument and a type changed: held, breaking.
  {
    name: 'lookup',
    description: 'Look a customer up',
    inputSchema: { email: z.number(), region: z.string() },
    annotations: read,
  },
  // Output schema only: no review, a non-empty diff.
  {
    name: 'report',
    description: 'A report',
    annotations: read,
    outputSchema: { total: z.number(), currency: z.string() },
  },
  // Annotations that raise the risk: held, breaking.
  {
    name: 'archive',
    description: 'Archive a record',
    inputSchema: { id: z.string() },
    annotations: { readOnlyHint: true, destructiveHint: true },
  },
  // A new optional argument (held: new argument names are reviewed), the key echoed in the
  // description: nothing breaking, scrubbed.
  {
    name: 'notes',
    description: `Read notes (key ${KEY})`,
    inputSchema: { id: z.string(), page: z.number().optional() },
    annotations: read,
  },
  // Annotations that lower the risk: no review, a non-breaking diff.
  { name: 'cleanup', description: 'Clean up', inputSchema: { id: z.string() }, annotations: read },
  { name: 'fresh', description: 'New', annotations: read },
];

let t: TestApp;
let peer: SdkServerHandle;
let admin: string;
let operator: string;
let connectionId: string;
let byName: Record<string, { id: string; enabled: boolean; needsReview: boolean }>;

async function operations() {
  const data = await t.ok(ConnectionOperationsDocument, { id: connectionId }, admin);
  return Object.fromEntries(data.connection!.operations.nodes.map((o) => [o.name, o]));
}

const review = async (name: string, token = admin) =>
  (await t.ok(OperationReviewDocument, { id: byName[name]!.id }, token)).operation!;

/** The queue spans every workspace of the database, which other test files share: this connection's part. */
async function queueOf(token: string) {
  const queue = await t.ok(ReviewQueueDiffsDocument, { first: 100 }, token);
  return queue.reviewQueue.nodes.filter((n) => n.connection.id === connectionId);
}

const brief = (entries: { path: string; kind: string; breaking: boolean }[]) =>
  entries.map((e) => [e.path, e.kind, e.breaking]);

beforeAll(async () => {
  t = await startTestApp({ databaseUrl: await createEmptyDatabase() });
  peer = await startSdkServer({
    stateful: false,
    json: true,
    tools: v1,
    requireAuthorization: `Bearer ${KEY}`,
  });
  admin = await t.token(Role.ADMIN, null, 'alice (admin)');
  operator = await t.token(Role.OPERATOR, null, 'olga (operator)');
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Reviews' } }, admin);
  const created = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId: ws.createWorkspace.workspace!.id,
        kind: 'MCP',
        name: 'CRM',
        endpointUrl: peer.url,
        credential: { kind: 'BEARER', key: KEY },
      },
    },
    operator,
  );
  connectionId = created.createConnection.connection!.id;
  peer.setTools(v2);
  const run = await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
  expect(run.discover.run).toMatchObject({ outcome: 'SUCCEEDED', added: 1, removed: 1 });
  byName = await operations();
});

afterAll(async () => {
  await t?.stop();
  await peer?.close();
});

describe('diffs of a refresh', () => {
  it('should hold a new required argument and a type change, with the diff on the review', async () => {
    const op = await review('lookup');
    expect(op).toMatchObject({ enabled: false, needsReview: true });
    expect(brief(op.reviewDiff)).toEqual([
      ['inputSchema.properties.email.type', 'TYPE_CHANGED', true],
      ['inputSchema.properties.region', 'PROPERTY_ADDED', false],
      ['inputSchema.properties.region.required', 'REQUIRED_CHANGED', true],
    ]);
    expect(op.reviewDiff[0]).toMatchObject({ before: 'string', after: 'number' });
    expect(op.changes.nodes).toHaveLength(2); // HELD now, ADDED on connect
    expect(op.changes.nodes[0]).toMatchObject({ kind: 'HELD', breaking: true });
    expect(op.changes.nodes[0]!.entries).toEqual(op.reviewDiff);
    expect(op.changes.nodes[1]).toMatchObject({ kind: 'ADDED', entries: [] });
  });

  it('should hold annotations that raise the risk, the risk entry breaking', async () => {
    const op = await review('archive');
    expect(op).toMatchObject({ enabled: false, needsReview: true });
    expect(brief(op.reviewDiff)).toEqual([
      ['risk', 'RISK_CHANGED', true],
      ['annotations.destructiveHint', 'ANNOTATION_CHANGED', false],
    ]);
    expect(op.reviewDiff[0]).toMatchObject({ before: 'READ', after: 'WRITE' });
  });

  it('should give an output-schema-only change a diff without a review', async () => {
    const op = await review('report');
    expect(op).toMatchObject({ enabled: true, needsReview: false, reviewVersion: null, reviewDiff: [] });
    expect(op.outputSchema).toMatchObject({ properties: { currency: { type: 'string' } } });
    expect(op.changes.nodes[0]).toMatchObject({ kind: 'UPDATED', breaking: false });
    expect(brief(op.changes.nodes[0]!.entries)).toEqual([
      ['outputSchema.properties.currency', 'PROPERTY_ADDED', false],
      ['outputSchema.properties.currency.required', 'REQUIRED_CHANGED', false],
    ]);
  });

  it('should give annotations that lower the risk a non-breaking diff without a review', async () => {
    const op = await review('cleanup');
    expect(op).toMatchObject({ needsReview: false });
    expect(brief(op.changes.nodes[0]!.entries)).toEqual([
      ['risk', 'RISK_CHANGED', false],
      ['annotations.readOnlyHint', 'ANNOTATION_CHANGED', false],
    ]);
  });

  it("should scrub the connection's key out of a diff", async () => {
    const op = await review('notes');
    expect(op.needsReview).toBe(true);
    expect(op.changes.nodes[0]).toMatchObject({ kind: 'HELD', breaking: false });
    const entries = op.changes.nodes[0]!.entries;
    expect(op.reviewDiff).toEqual(entries);
    expect(brief(entries)).toEqual([
      ['description', 'TEXT_CHANGED', false],
      ['inputSchema.properties.page', 'PROPERTY_ADDED', false],
    ]);
    expect(JSON.stringify(entries)).not.toContain(KEY.slice(4, 16));
    expect(entries[0]!.after).toContain('[redacted]');
  });

  it("should list the run's changes per operation, paginated", async () => {
    const seen: { kind: string; operationName: string; breaking: boolean; hasOperation: boolean }[] = [];
    let after: string | null = null;
    let total = 0;
    for (let page = 0; page < 10; page++) {
      const data: RunChangesQuery = await t.ok(
        RunChangesDocument,
        { id: connectionId, first: 2, after },
        operator,
      );
      const changes = data.connection!.discoveryRuns.nodes[0]!.changes;
      total = changes.totalCount;
      seen.push(
        ...changes.nodes.map((c) => ({
          kind: c.kind,
          operationName: c.operationName,
          breaking: c.breaking,
          hasOperation: c.operation !== null,
        })),
      );
      if (!changes.pageInfo.hasNextPage) break;
      after = changes.pageInfo.endCursor ?? null;
    }
    expect(total).toBe(7);
    expect(seen.map((c) => [c.operationName, c.kind]).sort()).toEqual(
      [
        ['archive', 'HELD'],
        ['cleanup', 'UPDATED'],
        ['fresh', 'ADDED'],
        ['gone', 'REMOVED'],
        ['lookup', 'HELD'],
        ['notes', 'HELD'],
        ['report', 'UPDATED'],
      ].sort(),
    );
    expect(seen.find((c) => c.operationName === 'gone')).toMatchObject({ hasOperation: false });
  });
});

describe('deciding a review', () => {
  it('should show the queue with versions to an operator, and refuse the operator a decision', async () => {
    const queue = await queueOf(operator);
    const names = queue.map((n) => n.name).sort();
    expect(names).toEqual(['archive', 'lookup', 'notes']);
    for (const n of queue) {
      expect(n.reviewVersion).toMatch(/^[\w-]{22}$/);
      expect(n.reviewDiff.length).toBeGreaterThan(0);
      for (const r of n.reviewReasons.nodes) expect(r.diff).toEqual(n.reviewDiff);
    }
    const lookup = queue.find((n) => n.name === 'lookup')!;
    const refused = await t.gql(
      ApproveReviewDocument,
      { input: { operationId: lookup.id, version: lookup.reviewVersion! } },
      operator,
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await review('lookup')).needsReview).toBe(true);
  });

  it('should refuse a stale version, and approve the current one in one action', async () => {
    const seen = await review('lookup');
    // The server changes the tool again: the review the admin loaded is no longer the one open.
    peer.setTools(
      v2.map((tool) =>
        tool.name === 'lookup'
          ? { ...tool, inputSchema: { email: z.number(), region: z.string(), tier: z.string() } }
          : tool,
      ),
    );
    await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
    const stale = await t.ok(
      ApproveReviewDocument,
      { input: { operationId: seen.id, version: seen.reviewVersion! } },
      admin,
    );
    expect(stale.approveReview.userErrors).toEqual([
      expect.objectContaining({ code: 'STALE_REVIEW', field: ['input', 'version'] }),
    ]);
    expect(stale.approveReview.resolvedReasons).toEqual([]);
    const now = await review('lookup');
    expect(now).toMatchObject({ enabled: false, needsReview: true });
    expect(now.reviewVersion).not.toBe(seen.reviewVersion);
    // The review's diff runs from before the review opened: both refreshes, composed.
    expect(brief(now.reviewDiff)).toEqual([
      ['inputSchema.properties.email.type', 'TYPE_CHANGED', true],
      ['inputSchema.properties.region', 'PROPERTY_ADDED', false],
      ['inputSchema.properties.region.required', 'REQUIRED_CHANGED', true],
      ['inputSchema.properties.tier', 'PROPERTY_ADDED', false],
      ['inputSchema.properties.tier.required', 'REQUIRED_CHANGED', true],
    ]);

    const approved = await t.ok(
      ApproveReviewDocument,
      { input: { operationId: now.id, version: now.reviewVersion! } },
      admin,
    );
    expect(approved.approveReview.userErrors).toEqual([]);
    expect(approved.approveReview.operation).toMatchObject({ enabled: true, needsReview: false });
    expect(approved.approveReview.resolvedReasons.map((r) => [r.code, r.decision, r.resolvedBy])).toEqual([
      ['ARGUMENTS_ADDED', 'APPROVED', 'alice (admin)'],
      ['ARGUMENTS_ADDED', 'APPROVED', 'alice (admin)'],
    ]);
    const again = await t.ok(
      ApproveReviewDocument,
      { input: { operationId: now.id, version: now.reviewVersion! } },
      admin,
    );
    expect(again.approveReview.userErrors[0]?.code).toBe('NO_OPEN_REVIEW');

    const audit = await t.app.services.orm.em
      .fork()
      .getConnection()
      .execute<{ after: { version: string; diff: { path: string }[] } }[]>(
        `select after from audit_event where action = 'REVIEW_APPROVE'`,
      );
    expect(audit).toHaveLength(1);
    expect(audit[0]!.after.version).toBe(now.reviewVersion);
    expect(audit[0]!.after.diff.map((d) => d.path)).toEqual(now.reviewDiff.map((d) => d.path));
  });

  it('should reject with why, keep it off, and let only an admin enable it afterwards', async () => {
    const op = await review('archive');
    const rejected = await t.ok(
      RejectReviewDocument,
      {
        input: { operationId: op.id, version: op.reviewVersion!, reason: 'destructive now; ask the vendor' },
      },
      admin,
    );
    expect(rejected.rejectReview.userErrors).toEqual([]);
    expect(rejected.rejectReview.operation).toMatchObject({
      enabled: false,
      needsReview: false,
      reviewRejected: true,
      disabledReason: 'review rejected: destructive now; ask the vendor',
    });
    expect(rejected.rejectReview.resolvedReasons).toEqual([
      { code: 'RISK_RAISED', decision: 'REJECTED', note: 'destructive now; ask the vendor' },
    ]);
    expect((await queueOf(admin)).map((n) => n.name)).toEqual(['notes']);
    const byOperator = await t.gql(EnableDocument, { input: { operationId: op.id } }, operator);
    expect(byOperator.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const byAdmin = await t.ok(EnableDocument, { input: { operationId: op.id } }, admin);
    expect(byAdmin.enable.operation).toMatchObject({ enabled: true });
    expect((await review('archive')).reviewRejected).toBe(false);
  });

  it('should refuse a rejection without a reason', async () => {
    const op = await review('notes');
    const res = await t.ok(
      RejectReviewDocument,
      { input: { operationId: op.id, version: 'x', reason: '  ' } },
      admin,
    );
    expect(res.rejectReview.userErrors[0]?.code).toBe('REASON_INVALID');
  });
});
