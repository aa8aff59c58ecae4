import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operation } from '../../../src/operations/operation.entity.js';
import { ReviewReason } from '../../../src/operations/review-reason.entity.js';
import {
  AuditTrailDocument,
  ClearRiskDocument,
  ConnectionOperationsDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  DisableDocument,
  DiscoverDocument,
  DiscoveryRunsDocument,
  EnableDocument,
  OperationReviewsDocument,
  SetRiskDocument,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type PeerTool, type SdkServerHandle } from '../../support/mcp-servers.js';

let t: TestApp;
let peer: SdkServerHandle;
let admin: string;
let operator: string;
let customer: string;
let workspaceId: string;
let connectionId: string;

const read = { readOnlyHint: true };
const v1: PeerTool[] = [
  { name: 'search', description: 'Search records', inputSchema: { q: z.string() }, annotations: read },
  {
    name: 'update_record',
    description: 'Update a record',
    inputSchema: { id: z.string(), value: z.string() },
  },
  {
    name: 'lookup',
    description: 'Look one up',
    inputSchema: { a: z.string(), b: z.string() },
    annotations: read,
  },
  { name: 'remove_me', description: 'Goes away', inputSchema: {}, annotations: read },
  {
    name: 'admin_set',
    description: 'Risk set by an admin',
    inputSchema: { x: z.string() },
    annotations: read,
  },
];
const v2: PeerTool[] = [
  {
    name: 'search',
    description: 'Search records, now paged',
    inputSchema: { q: z.string(), limit: z.number() },
    annotations: read,
  },
  { name: 'update_record', description: 'Update a record', inputSchema: { id: z.string() } },
  { name: 'lookup', description: 'Look one up', inputSchema: { a: z.string(), b: z.string() } },
  {
    name: 'admin_set',
    description: 'Risk set by an admin',
    inputSchema: { x: z.string() },
    annotations: read,
  },
  { name: 'new_write', description: 'A new write tool', inputSchema: { y: z.string() } },
  { name: 'new_read', description: 'A new read tool', inputSchema: {}, annotations: read },
];

type Ops = Awaited<ReturnType<typeof operations>>;
async function operations(token = admin) {
  const data = await t.ok(ConnectionOperationsDocument, { id: connectionId }, token);
  return Object.fromEntries(data.connection!.operations.nodes.map((o) => [o.name, o]));
}

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({ stateful: true, json: true, tools: v1 });
  admin = await t.token(Role.ADMIN, null, 'alice (admin)');
  operator = await t.token(Role.OPERATOR, null, 'olga (operator)');
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Discovery' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
  customer = await t.token(Role.CUSTOMER, rawId(workspaceId));
});

afterAll(async () => {
  await t.stop();
  await peer.close();
});

describe('MCP discovery through GraphQL', () => {
  let first: Ops;

  it('should run the first discovery on connect: READ tools on, WRITE tools off', async () => {
    const created = await t.ok(
      CreateConnectionDocument,
      { input: { workspaceId, kind: 'MCP', name: 'CRM Tools', endpointUrl: peer.url } },
      operator,
    );
    connectionId = created.createConnection.connection!.id;
    expect(created.createConnection.connection).toMatchObject({
      status: 'READY',
      protocolVersion: '2025-06-18',
    });
    expect(created.createConnection.discoveryRun).toMatchObject({
      trigger: 'CONNECT',
      outcome: 'SUCCEEDED',
      added: 5,
      removed: 0,
      actor: 'olga (operator)',
    });
    first = await operations();
    expect(first.search).toMatchObject({ key: 'connector.crm_tools.search', risk: 'READ', enabled: true });
    expect(first.update_record).toMatchObject({
      key: 'connector.crm_tools.update_record',
      risk: 'WRITE',
      enabled: false,
    });
    expect(first.lookup!.enabled).toBe(true);
    // The session was ended after discovery.
    expect(peer.requests.some((r) => r.httpMethod === 'DELETE')).toBe(true);
  });

  it('should keep an admin-set risk, and refuse setRisk to an operator', async () => {
    const denied = await t.gql(
      SetRiskDocument,
      { input: { operationId: first.admin_set!.id, risk: 'WRITE' } },
      operator,
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const set = await t.ok(
      SetRiskDocument,
      { input: { operationId: first.admin_set!.id, risk: 'WRITE' } },
      admin,
    );
    expect(set.setRisk.operation).toMatchObject({ risk: 'WRITE', riskSetByAdmin: true });
  });

  it('should reconcile a changed tool list: add, remove, and hold changed tools for review', async () => {
    peer.setTools(v2);
    const result = await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
    expect(result.discover.run).toMatchObject({
      trigger: 'REDISCOVER',
      outcome: 'SUCCEEDED',
      added: 2,
      removed: 1,
      flagged: 3,
    });
    const ops = await operations();
    expect(Object.keys(ops).sort()).toEqual([
      'admin_set',
      'lookup',
      'new_read',
      'new_write',
      'search',
      'update_record',
    ]);
    expect(ops.new_write).toMatchObject({ risk: 'WRITE', enabled: false, needsReview: false });
    expect(ops.new_read).toMatchObject({ risk: 'READ', enabled: true });
    expect(ops.search).toMatchObject({
      enabled: false,
      needsReview: true,
      description: 'Search records, now paged',
    });
    expect(ops.search!.openReasons.nodes).toEqual([{ code: 'ARGUMENTS_ADDED', detail: 'limit' }]);
    expect(ops.lookup).toMatchObject({ enabled: false, needsReview: true, risk: 'WRITE' });
    expect(ops.lookup!.openReasons.nodes).toEqual([{ code: 'RISK_RAISED', detail: 'READ → WRITE' }]);
    expect(ops.update_record!.openReasons.nodes).toEqual([
      { code: 'ARGUMENTS_UNDESCRIBED', detail: 'value' },
    ]);
    expect(ops.admin_set).toMatchObject({
      risk: 'WRITE',
      riskSetByAdmin: true,
      sourceRisk: 'READ',
      enabled: true,
      needsReview: false,
    });
    // Keys never change, even when the description and schema do.
    expect(ops.search!.key).toBe(first.search!.key);
    expect(ops.lookup!.key).toBe(first.lookup!.key);

    const em = t.app.services.orm.em.fork();
    const reasons = await em.find(
      ReviewReason,
      { operation: { connection: rawId(connectionId) } },
      { populate: ['operation'] },
    );
    expect(reasons.map((r) => `${r.operation.getEntity().name}:${r.code}`).sort()).toEqual([
      'lookup:RISK_RAISED',
      'search:ARGUMENTS_ADDED',
      'update_record:ARGUMENTS_UNDESCRIBED',
    ]);
    expect(reasons.every((r) => r.discoveryRun?.id === rawId(result.discover.run!.id))).toBe(true);
    expect(await em.count(Operation, { connection: rawId(connectionId), name: 'remove_me' })).toBe(0);
  });

  it('should change nothing and write no reasons when the source did not change', async () => {
    const em = t.app.services.orm.em.fork();
    const before = await em.count(ReviewReason, {});
    const snapshot = await operations();
    const result = await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
    expect(result.discover.run).toMatchObject({
      outcome: 'SUCCEEDED',
      added: 0,
      removed: 0,
      updated: 0,
      flagged: 0,
    });
    expect(result.discover.changedOperations).toEqual([]);
    expect(await em.count(ReviewReason, {})).toBe(before);
    expect(await operations()).toEqual(snapshot);
  });

  it('should let only an admin re-enable a reviewed operation, resolving its reasons', async () => {
    const ops = await operations();
    const denied = await t.gql(EnableDocument, { input: { operationId: ops.search!.id } }, operator);
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(denied.errors?.[0]?.message).toMatch(/admin review is needed/);
    const byCustomer = await t.gql(EnableDocument, { input: { operationId: ops.search!.id } }, customer);
    expect(byCustomer.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const enabled = await t.ok(EnableDocument, { input: { operationId: ops.search!.id } }, admin);
    expect(enabled.enable.operation).toMatchObject({ enabled: true, needsReview: false });
    expect(enabled.enable.resolvedReasons).toEqual([{ code: 'ARGUMENTS_ADDED', detail: 'limit' }]);
    const reviews = await t.ok(OperationReviewsDocument, { id: ops.search!.id }, customer);
    expect(reviews.operation!.reviewReasons.nodes).toEqual([
      expect.objectContaining({
        code: 'ARGUMENTS_ADDED',
        resolvedBy: 'alice (admin)',
        resolvedAt: expect.any(String),
      }),
    ]);
  });

  it('should let an operator disable anything and enable what has no open review', async () => {
    const ops = await operations();
    const off = await t.ok(
      DisableDocument,
      { input: { operationId: ops.new_read!.id, reason: 'incident 42' } },
      operator,
    );
    expect(off.disable.operation!.enabled).toBe(false);
    const noReason = await t.ok(
      DisableDocument,
      { input: { operationId: ops.new_read!.id, reason: '  ' } },
      operator,
    );
    expect(noReason.disable.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'reason'], code: 'REASON_INVALID' }),
    ]);
    const on = await t.ok(EnableDocument, { input: { operationId: ops.new_read!.id } }, operator);
    expect(on.enable.operation!.enabled).toBe(true);
    const customerOff = await t.gql(
      DisableDocument,
      { input: { operationId: ops.new_read!.id, reason: 'x' } },
      customer,
    );
    expect(customerOff.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const customerDiscover = await t.gql(DiscoverDocument, { input: { connectionId } }, customer);
    expect(customerDiscover.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('should hand the risk back to the source with clearRisk', async () => {
    const ops = await operations();
    const cleared = await t.ok(ClearRiskDocument, { input: { operationId: ops.admin_set!.id } }, admin);
    expect(cleared.clearRisk.operation).toMatchObject({ risk: 'READ', riskSetByAdmin: false });
  });

  it('should filter operations by enabled, risk and needsReview', async () => {
    const reviewed = await t.ok(
      ConnectionOperationsDocument,
      { id: connectionId, needsReview: true },
      customer,
    );
    expect(reviewed.connection!.operations.nodes.map((o) => o.name).sort()).toEqual([
      'lookup',
      'update_record',
    ]);
    const writes = await t.ok(
      ConnectionOperationsDocument,
      { id: connectionId, risk: 'WRITE', enabled: false },
      customer,
    );
    expect(writes.connection!.operations.nodes.map((o) => o.name).sort()).toEqual([
      'lookup',
      'new_write',
      'update_record',
    ]);
  });

  it('should list discovery runs newest first and keep an audit trail', async () => {
    const runs = await t.ok(DiscoveryRunsDocument, { id: connectionId, first: 10 }, customer);
    expect(runs.connection!.discoveryRuns.nodes.map((r) => r.trigger)).toEqual([
      'REDISCOVER',
      'REDISCOVER',
      'CONNECT',
    ]);
    const trail = await t.ok(AuditTrailDocument, { id: workspaceId, first: 100 }, admin);
    const byCustomer = await t.gql(AuditTrailDocument, { id: workspaceId, first: 100 }, customer);
    expect(byCustomer.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const actions = trail.workspace!.auditEvents.nodes.map((e) => `${e.action} by ${e.actor}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'CONNECT by olga (operator)',
        'DISCOVER by olga (operator)',
        'SET_RISK by alice (admin)',
        'REVIEW_ENABLE by alice (admin)',
        'DISABLE by olga (operator)',
        'ENABLE by olga (operator)',
        'CLEAR_RISK by alice (admin)',
      ]),
    );
    const disable = trail.workspace!.auditEvents.nodes.find((e) => e.action === 'DISABLE')!;
    expect(disable.before).toMatchObject({ enabled: true });
    expect(disable.after).toMatchObject({ enabled: false, reason: 'incident 42' });
  });

  it('should give an operation that comes back after being deleted a new key', async () => {
    peer.setTools(v2.filter((tool) => tool.name !== 'new_read'));
    await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
    peer.setTools(v2);
    await t.ok(DiscoverDocument, { input: { connectionId } }, operator);
    const ops = await operations();
    // new_read was never called, so nothing in history holds its old key: it may get it back.
    expect(ops.new_read!.key).toBe('connector.crm_tools.new_read');
  });
});
