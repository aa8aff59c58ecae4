import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import { Role } from '../auth/api-token.entity.js';
import type { Principal } from '../auth/principal.js';
import { forbiddenError } from '../errors.js';
import type { Services } from '../services.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { Operation } from './operation.entity.js';
import type { JsonValue, Risk } from './types.js';
import { ReviewDecision, ReviewReason } from './review-reason.entity.js';
import { reviewVersion } from './review-version.js';

function snapshot(op: Operation) {
  return {
    enabled: op.enabled,
    risk: op.risk,
    riskSetByAdmin: op.riskSetByAdmin,
    needsReview: op.needsReview,
    reviewRejected: op.reviewRejected,
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
async function enableLocked(
  em: EntityManager,
  principal: Principal,
  operationId: string,
): Promise<{ operation: Operation; resolved: ReviewReason[] }> {
  return em.transactional(async (tx) => {
    const op = await lockOperation(tx, operationId);
    const open = await tx.find(
      ReviewReason,
      { operation: op.id, resolvedAt: null },
      { orderBy: { id: 'asc' }, refresh: true },
    );
    if (op.reviewRejected && principal.role !== Role.ADMIN) {
      throw forbiddenError(
        'an admin rejected the last review of this operation: only an admin can enable it',
      );
    }
    if (open.length > 0 && principal.role !== Role.ADMIN) {
      throw forbiddenError(
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
    op.reviewRejected = false;
    if (open.length === 0 && !changed(before, snapshot(op))) return { operation: op, resolved: open };
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

/** Reads the operation again under its row lock, inside `tx`: every switch and risk change goes through here. */
function lockOperation(tx: EntityManager, operationId: string): Promise<Operation> {
  return tx.findOneOrFail(
    Operation,
    { id: operationId },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
}

function changed(before: ReturnType<typeof snapshot>, after: ReturnType<typeof snapshot>): boolean {
  return (Object.keys(before) as (keyof typeof before)[]).some((k) => before[k] !== after[k]);
}

/**
 * The incident switch. Under the operation's row lock, so that the audit trail follows the state
 * whatever races it; a disable of an operation already off changes nothing and writes no audit row.
 */
async function disableLocked(
  em: EntityManager,
  principal: Principal,
  operationId: string,
  reason: string,
): Promise<Operation> {
  return em.transactional(async (tx) => {
    const op = await lockOperation(tx, operationId);
    const before = snapshot(op);
    op.enabled = false;
    // An operation already off keeps the reason and the person of the disable that turned it off.
    if (changed(before, snapshot(op))) {
      op.disabledReason = reason;
      op.disabledBy = principal.label;
      op.disabledAt = new Date();
      audit(tx, principal, {
        workspaceId: op.workspace.id,
        action: 'DISABLE',
        targetType: 'Operation',
        targetId: op.nodeId,
        before,
        after: { ...snapshot(op), reason },
      });
    }
    return op;
  });
}

/**
 * An admin's risk: it survives refreshes until clearRisk (`risk: null`) hands the risk back to the
 * source. Under the row lock; a change to what is already there writes no audit row.
 */
async function setRiskLocked(
  em: EntityManager,
  principal: Principal,
  operationId: string,
  risk: Risk | null,
): Promise<Operation> {
  return em.transactional(async (tx) => {
    const op = await lockOperation(tx, operationId);
    const before = snapshot(op);
    if (risk === null) {
      op.risk = op.sourceRisk;
      op.riskSetByAdmin = false;
    } else {
      op.risk = risk;
      op.riskSetByAdmin = true;
    }
    if (changed(before, snapshot(op))) {
      audit(tx, principal, {
        workspaceId: op.workspace.id,
        action: risk === null ? 'CLEAR_RISK' : 'SET_RISK',
        targetType: 'Operation',
        targetId: op.nodeId,
        before,
        after: snapshot(op),
      });
    }
    return op;
  });
}

/**
 * The operator's "always declare" flag (issue 31): under the row lock, audited like the other
 * per-operation switches; setting what is already there writes no audit row.
 */
async function setAlwaysDeclareLocked(
  em: EntityManager,
  principal: Principal,
  operationId: string,
  alwaysDeclare: boolean,
): Promise<Operation> {
  return em.transactional(async (tx) => {
    const op = await lockOperation(tx, operationId);
    if (op.alwaysDeclare === alwaysDeclare) return op;
    const before = { alwaysDeclare: op.alwaysDeclare };
    op.alwaysDeclare = alwaysDeclare;
    audit(tx, principal, {
      workspaceId: op.workspace.id,
      action: 'SET_ALWAYS_DECLARE',
      targetType: 'Operation',
      targetId: op.nodeId,
      before,
      after: { alwaysDeclare },
    });
    return op;
  });
}

/** What a change of an operation reaches beyond its transaction: every instance's tool cache. */
type OperationDeps = Pick<Services, 'toolCache'>;

/**
 * Tells every instance's tool cache that this operation changed: this one at once, the others by
 * NOTIFY. After the commit, so a cache refilled on the NOTIFY reads the new state.
 */
async function announced(services: OperationDeps, em: EntityManager, op: Operation): Promise<void> {
  await announceToolChange(services, em.getConnection(), {
    kind: 'operation',
    id: op.id,
    workspaceId: op.workspace.id,
  });
}

/** The operator's switch (see `enableLocked`), announced to every instance. */
export async function enableOperation(
  services: OperationDeps,
  em: EntityManager,
  principal: Principal,
  operationId: string,
): Promise<{ operation: Operation; resolved: ReviewReason[] }> {
  const result = await enableLocked(em, principal, operationId);
  await announced(services, em, result.operation);
  return result;
}

/**
 * The incident switch (see `disableLocked`). Whoever calls it, the operation stops being callable
 * on every instance: the NOTIFY is sent here, not by the caller.
 */
export async function disableOperation(
  services: OperationDeps,
  em: EntityManager,
  principal: Principal,
  operationId: string,
  reason: string,
): Promise<Operation> {
  const op = await disableLocked(em, principal, operationId, reason);
  await announced(services, em, op);
  return op;
}

/** An admin's risk, or `null` to hand it back to the source (see `setRiskLocked`), announced. */
export async function setOperationRisk(
  services: OperationDeps,
  em: EntityManager,
  principal: Principal,
  operationId: string,
  risk: Risk | null,
): Promise<Operation> {
  const op = await setRiskLocked(em, principal, operationId, risk);
  await announced(services, em, op);
  return op;
}

/** The "always declare" flag (see `setAlwaysDeclareLocked`), announced to every instance. */
export async function setOperationAlwaysDeclare(
  services: OperationDeps,
  em: EntityManager,
  principal: Principal,
  operationId: string,
  alwaysDeclare: boolean,
): Promise<Operation> {
  const op = await setAlwaysDeclareLocked(em, principal, operationId, alwaysDeclare);
  await announced(services, em, op);
  return op;
}

/** Why a review decision was not made: something the admin can act on (a `userError`). */
export type ReviewRefusal =
  /** The operation has no open review (decided meanwhile, or never held). */
  | 'NO_OPEN_REVIEW'
  /** The review changed since the admin loaded it: `version` is not the current one. */
  | 'STALE_REVIEW';

export type ReviewOutcome =
  | { ok: true; operation: Operation; resolved: ReviewReason[] }
  | { ok: false; refusal: ReviewRefusal; operation: Operation };

/**
 * One admin decision on an operation's review, in one transaction under the operation's row lock:
 * every open reason is resolved with the decision, and the operation goes on (APPROVED) or stays
 * off (REJECTED, with the note; only an admin can enable it later). Refused, changing nothing,
 * when `version` is not the review's current {@link reviewVersion}: a refresh changed the review
 * since the admin loaded it, and they would decide on a diff they did not see. The audit row names
 * the version and the diff decided on.
 */
async function decideLocked(
  em: EntityManager,
  principal: Principal,
  operationId: string,
  version: string,
  decision: ReviewDecision,
  note: string | null,
): Promise<ReviewOutcome> {
  return em.transactional(async (tx) => {
    const op = await lockOperation(tx, operationId);
    const open = await tx.find(
      ReviewReason,
      { operation: op.id, resolvedAt: null },
      { orderBy: { id: 'asc' }, refresh: true },
    );
    if (open.length === 0) return { ok: false, refusal: 'NO_OPEN_REVIEW', operation: op };
    if (reviewVersion(open) !== version) return { ok: false, refusal: 'STALE_REVIEW', operation: op };
    const before = snapshot(op);
    const now = new Date();
    for (const reason of open) {
      reason.resolvedAt = now;
      reason.resolvedBy = principal.label;
      reason.decision = decision;
      reason.note = note;
    }
    op.needsReview = false;
    if (decision === ReviewDecision.APPROVED) {
      op.enabled = true;
      op.reviewRejected = false;
      op.disabledReason = null;
      op.disabledBy = null;
      op.disabledAt = null;
    } else {
      op.enabled = false;
      op.reviewRejected = true;
      op.disabledReason = `review rejected: ${note ?? ''}`;
      op.disabledBy = principal.label;
      op.disabledAt = now;
    }
    audit(tx, principal, {
      workspaceId: op.workspace.id,
      action: decision === ReviewDecision.APPROVED ? 'REVIEW_APPROVE' : 'REVIEW_REJECT',
      targetType: 'Operation',
      targetId: op.nodeId,
      before,
      after: {
        ...snapshot(op),
        version,
        ...(note === null ? {} : { note }),
        reasons: open.map((r) => ({ code: r.code, detail: r.detail })),
        diff: open.at(-1)!.diff as unknown as JsonValue,
      },
    });
    return { ok: true, operation: op, resolved: open };
  });
}

/** An admin's decision on a review (see `decideLocked`), announced to every instance. */
export async function decideReview(
  services: OperationDeps,
  em: EntityManager,
  principal: Principal,
  operationId: string,
  version: string,
  decision: ReviewDecision,
  note: string | null = null,
): Promise<ReviewOutcome> {
  const outcome = await decideLocked(em, principal, operationId, version, decision, note);
  if (outcome.ok) await announced(services, em, outcome.operation);
  return outcome;
}
