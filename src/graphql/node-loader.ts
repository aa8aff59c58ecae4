import { AuditEvent } from '../audit/audit-event.entity.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { OperationChange } from '../operations/operation-change.entity.js';
import { ReviewReason } from '../operations/review-reason.entity.js';
import { LedgerEntry } from '../turns/ledger-entry.entity.js';
import { TurnCall } from '../turns/turn-call.entity.js';
import { Turn } from '../turns/turn.entity.js';
import { ApiToken, Role } from '../auth/api-token.entity.js';
import type { Context } from './context.js';
import type { Node, NodeTypeName } from './node.js';
import { isStaff } from '../auth/scope.js';

/** Loads any node with the workspace it belongs to, so the caller can apply the scope. */
export async function loadNode(
  ctx: Context,
  type: NodeTypeName,
  id: string,
): Promise<{ node: Node; workspaceId: string } | null> {
  const { em, loaders } = ctx;
  switch (type) {
    case 'Workspace': {
      const w = await loaders.workspace.load(id);
      return w && { node: w, workspaceId: w.id };
    }
    case 'Assistant': {
      const a = await loaders.assistant.load(id);
      return a && { node: a, workspaceId: a.workspace.id };
    }
    case 'Connection': {
      const c = await loaders.connection.load(id);
      return c && { node: c, workspaceId: c.workspace.id };
    }
    case 'Operation': {
      const o = await loaders.operation.load(id);
      return o && { node: o, workspaceId: o.workspace.id };
    }
    case 'ReviewReason': {
      const r = await em.findOne(ReviewReason, { id }, { populate: ['operation'] });
      return r && { node: r, workspaceId: r.operation.getEntity().workspace.id };
    }
    case 'OperationChange': {
      const c = await em.findOne(OperationChange, { id }, { populate: ['run.connection'] });
      return c && { node: c, workspaceId: c.run.getEntity().connection.getEntity().workspace.id };
    }
    case 'DiscoveryRun': {
      const r = await em.findOne(DiscoveryRun, { id }, { populate: ['connection'] });
      return r && { node: r, workspaceId: r.connection.getEntity().workspace.id };
    }
    case 'Turn': {
      const t = await em.findOne(Turn, { id });
      return t && { node: t, workspaceId: t.workspace.id };
    }
    case 'TurnCall': {
      const c = await em.findOne(TurnCall, { id });
      return c && { node: c, workspaceId: c.workspace.id };
    }
    case 'LedgerEntry': {
      const l = await em.findOne(LedgerEntry, { id });
      return l && { node: l, workspaceId: l.workspaceId };
    }
    case 'AuditEvent': {
      const a = await em.findOne(AuditEvent, { id });
      // The audit trail is for staff (as Workspace.auditEvents): others never see its events.
      if (!a || !isStaff(ctx.principal?.role)) return null;
      return { node: a, workspaceId: a.workspaceId ?? '' };
    }
    case 'ApiToken': {
      // Tokens are ADMIN's alone (as Query.apiTokens).
      if (ctx.principal?.role !== Role.ADMIN) return null;
      const t = await em.findOne(ApiToken, { id });
      return t && { node: t, workspaceId: t.workspace?.id ?? '' };
    }
  }
}
