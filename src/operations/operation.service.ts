import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import { Role } from '../auth/api-token.entity.js';
import type { Principal } from '../auth/principal.js';
import { forbidden } from '../graphql/errors.js';
import { Operation, type RiskLevel } from './operation.entity.js';
import { ReviewReason } from './review-reason.entity.js';

function snapshot(op: Operation) {
  return {
    enabled: op.enabled,
    risk: op.risk,
    riskSetByAdmin: op.riskSetByAdmin,
    needsReview: op.needsReview,
  };
}

/**
 * The operator's switch. Anyone staff may enable an operation without open review reasons; with
 * open reasons only an ADMIN may, and doing so resolves them (who and when).
 *
 * The check and the write happen in one transaction holding the operation's row lock: a discovery
 * that holds the operation back meanwhile is either seen (its reasons are open) or waits, and its
 * "off" then wins. Returns the operation as written, and the reasons this resolved.
 */
export async function enableOperation(
  em: EntityManager,
  principal: Principal,
  operationId: string,
): Promise<{ operation: Operation; resolved: ReviewReason[] }> {
  return em.transactional(async (tx) => {
    const op = await tx.findOneOrFail(
      Operation,
      { id: operationId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const open = await tx.find(
      ReviewReason,
      { operation: op.id, resolvedAt: null },
      { orderBy: { id: 'asc' }, refresh: true },
    );
    if (open.length > 0 && principal.role !== Role.ADMIN) {
      throw forbidden(
        `an admin review is needed before this operation can be enabled (${open.map((r) => `${r.code}: ${r.detail}`).join('; ')})`,
      );
    }
    const before = snapshot(op);
    const now = new Date();
    for (const reason of open) {
      reason.resolvedAt = now;
      reason.resolvedBy = principal.label;
    }
    op.enabled = true;
    op.needsReview = false;
    op.disabledReason = null;
    op.disabledBy = null;
    op.disabledAt = null;
    audit(tx, principal, {
      workspaceId: op.workspace.id,
      action: open.length > 0 ? 'REVIEW_ENABLE' : 'ENABLE',
      targetType: 'Operation',
      targetId: op.nodeId,
      before,
      after: { ...snapshot(op), resolvedReasons: open.map((r) => ({ code: r.code, detail: r.detail })) },
    });
    return { operation: op, resolved: open };
  });
}

export async function disableOperation(
  em: EntityManager,
  principal: Principal,
  op: Operation,
  reason: string,
): Promise<void> {
  const before = snapshot(op);
  op.enabled = false;
  op.disabledReason = reason;
  op.disabledBy = principal.label;
  op.disabledAt = new Date();
  audit(em, principal, {
    workspaceId: op.workspace.id,
    action: 'DISABLE',
    targetType: 'Operation',
    targetId: op.nodeId,
    before,
    after: { ...snapshot(op), reason },
  });
  await em.flush();
}

/** An admin's risk: it survives refreshes until clearRisk hands the risk back to the source. */
export async function setOperationRisk(
  em: EntityManager,
  principal: Principal,
  op: Operation,
  risk: RiskLevel | null,
): Promise<void> {
  const before = snapshot(op);
  if (risk === null) {
    op.risk = op.sourceRisk;
    op.riskSetByAdmin = false;
  } else {
    op.risk = risk;
    op.riskSetByAdmin = true;
  }
  audit(em, principal, {
    workspaceId: op.workspace.id,
    action: risk === null ? 'CLEAR_RISK' : 'SET_RISK',
    targetType: 'Operation',
    targetId: op.nodeId,
    before,
    after: snapshot(op),
  });
  await em.flush();
}
