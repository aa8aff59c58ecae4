/**
 * The apply step's reads and writes (I/O, inside the apply's transaction under the connection's
 * row lock): the stored operations with their open review reasons, the plan written as rows
 * (operation-rows.ts) and review reasons, and the run closed as succeeded. `DiscoveryService`
 * (discover.ts) holds the lock and orders the steps.
 */
import type { EntityManager, Ref } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { type Connection, ConnectionStatus } from '../connections/connection.entity.js';
import type { Scrubber } from '../connections/scrub.js';
import { uuidv7 } from '../db/ids.js';
import { composeDiffs, diffOperation } from '../operations/diff.js';
import { OperationChangeKind } from '../operations/operation-change.entity.js';
import { Operation } from '../operations/operation.entity.js';
import { ReviewReason } from '../operations/review-reason.entity.js';
import { DiscoveryOutcome, type DiscoveryRun } from './discovery-run.entity.js';
import {
  deleteOperations,
  insertOperations,
  type OperationChangeRow,
  readStoredOperations,
  updateOperations,
} from './operation-rows.js';
import type { ReconcilePlan, ReviewReasonDraft, StoredOperation } from './reconcile.js';
import type { SourceListing } from './read-source.js';

/** The connection's operations as stored, with their open review reasons (rows and entities). */
export async function readStored(
  tx: EntityManager,
  connectionId: string,
): Promise<{ stored: StoredOperation[]; openRows: Map<string, ReviewReason[]> }> {
  // Rows, not entities: see operation-rows.ts for why the ORM stays out of this step.
  const rows = await readStoredOperations(tx, connectionId);
  const reasons = rows.length
    ? await tx.find(ReviewReason, { operation: { $in: rows.map((o) => o.id) }, resolvedAt: null })
    : [];
  const reasonsOf = new Map<string, ReviewReasonDraft[]>();
  const openRows = new Map<string, ReviewReason[]>();
  for (const r of reasons) openRows.set(r.operation.id, [...(openRows.get(r.operation.id) ?? []), r]);
  for (const r of reasons) {
    const list = reasonsOf.get(r.operation.id) ?? [];
    list.push({ code: r.code, detail: r.detail });
    reasonsOf.set(r.operation.id, list);
  }
  const stored: StoredOperation[] = rows.map((o) => ({ ...o, openReasons: reasonsOf.get(o.id) ?? [] }));
  return { stored, openRows };
}

/** Where the plan is written: the run, its connection and workspace, and who ran it. */
export interface PlanTarget {
  workspaceId: string;
  connectionId: string;
  runRef: Ref<DiscoveryRun>;
  now: Date;
  /** Scrubs the diffs with today's secrets. */
  scrubber: Scrubber;
  principal: Pick<Principal, 'label'>;
  /** The open review reasons by operation id, as `readStored` found them. */
  openRows: Map<string, ReviewReason[]>;
}

/**
 * Writes a plan: removed, updated, then added operations, and their review reasons. Returns the
 * ids of added and changed operations, and the change rows for the run's history.
 */
export async function writePlan(
  tx: EntityManager,
  plan: ReconcilePlan,
  target: PlanTarget,
): Promise<{ changed: string[]; changeRows: OperationChangeRow[] }> {
  const { now } = target;
  // Removed first, so that nothing new can collide with a row that is going.
  await deleteOperations(
    tx,
    plan.remove.map((gone) => gone.id),
  );
  const updates = plan.update.filter((u) => u.changed);
  await updateOperations(
    tx,
    updates.map((u) => ({
      id: u.id,
      fields: Object.fromEntries(u.changedFields.map((f) => [f, u.after[f]])),
      hold: u.disable,
      release: u.release,
    })),
    now,
  );
  const changeRows: OperationChangeRow[] = plan.remove.map((gone) => ({
    operationId: null,
    kind: OperationChangeKind.REMOVED,
    operationKey: gone.key,
    operationName: gone.name,
    entries: [],
  }));
  const changed = updates.map((update) => {
    changeRows.push(reviewUpdate(tx, update, target));
    return update.id;
  });
  const added = await addOperations(tx, plan.add, target);
  changed.push(...added.changed);
  changeRows.push(...added.changeRows);
  return { changed, changeRows };
}

/**
 * One updated operation's change row and review: the reasons it resolves are closed, those still
 * open get this refresh composed onto their diff, and new ones are opened with it.
 */
function reviewUpdate(
  tx: EntityManager,
  update: ReconcilePlan['update'][number],
  { runRef, now, scrubber, principal, openRows }: PlanTarget,
): OperationChangeRow {
  // Scrubbed again with today's secrets: the stored side was scrubbed with those of its day.
  const entries = scrubber.json(diffOperation(update.before, update.after));
  for (const reason of update.resolved) {
    for (const r of openRows.get(update.id) ?? []) {
      if (r.code !== reason.code || r.detail !== reason.detail) continue;
      r.resolvedAt = now;
      r.resolvedBy = principal.label;
    }
  }
  // The review's diff runs from the operation as it was before the review opened to now:
  // every reason still open, and every new one, holds this refresh composed onto it.
  const stillOpen = (openRows.get(update.id) ?? []).filter((r) => r.resolvedAt === null);
  const reviewDiff = composeDiffs(stillOpen.at(-1)?.diff ?? [], entries);
  if (entries.length > 0) for (const r of stillOpen) r.diff = reviewDiff;
  for (const reason of update.newReasons) {
    tx.persist(
      new ReviewReason(
        tx.getReference(Operation, update.id, { wrapped: true }),
        reason.code,
        reason.detail,
        runRef,
        reviewDiff,
      ),
    );
  }
  return {
    operationId: update.id,
    kind: update.disable ? OperationChangeKind.HELD : OperationChangeKind.UPDATED,
    operationKey: update.before.key,
    operationName: update.before.name,
    entries,
  };
}

/** The added operations as new rows, each with its change row and its review reasons, if any. */
async function addOperations(
  tx: EntityManager,
  adds: ReconcilePlan['add'],
  { workspaceId, connectionId, runRef, now }: PlanTarget,
): Promise<{ changed: string[]; changeRows: OperationChangeRow[] }> {
  const added = adds.map((add) => ({
    id: uuidv7(),
    key: add.key,
    name: add.op.name,
    title: add.op.title,
    description: add.op.description,
    inputSchema: add.op.inputSchema,
    checkSchema: add.op.checkSchema ?? null,
    outputSchema: add.op.outputSchema ?? null,
    annotations: add.op.annotations,
    binding: add.op.binding,
    risk: add.op.risk,
    idempotent: add.op.idempotent,
    enabled: add.enabled,
    needsReview: add.reasons.length > 0,
  }));
  await insertOperations(tx, { workspaceId, connectionId }, added, now);
  const changeRows = adds.map((add, i): OperationChangeRow => {
    for (const reason of add.reasons) {
      tx.persist(
        new ReviewReason(
          tx.getReference(Operation, added[i]!.id, { wrapped: true }),
          reason.code,
          reason.detail,
          runRef,
        ),
      );
    }
    return {
      operationId: added[i]!.id,
      kind: add.reasons.length > 0 ? OperationChangeKind.HELD : OperationChangeKind.ADDED,
      operationKey: add.key,
      operationName: add.op.name,
      entries: [],
    };
  });
  return { changed: added.map((a) => a.id), changeRows };
}

/** The connection READY and the run SUCCEEDED, with what the listing and the plan said. */
export function closeRun(
  connection: Connection,
  run: DiscoveryRun,
  listing: SourceListing,
  plan: ReconcilePlan,
  now: Date,
): void {
  connection.status = ConnectionStatus.READY;
  connection.lastDiscoveryAt = now;
  connection.lastDiscoveryError = null;
  if (listing.protocolVersion !== null) connection.protocolVersion = listing.protocolVersion;
  if (listing.serverInfo !== null) connection.serverInfo = listing.serverInfo;

  run.outcome = DiscoveryOutcome.SUCCEEDED;
  run.finishedAt = now;
  run.added = plan.counts.added;
  run.removed = plan.counts.removed;
  run.updated = plan.counts.updated;
  run.flagged = plan.counts.flagged;
  run.skipped = [
    ...listing.skipped,
    ...plan.skipped.map((s) => ({ name: s.name, reason: s.reason, detail: null })),
  ];
  run.diagnostics = listing.diagnostics;
  run.protocolVersion = listing.protocolVersion;
  run.serverInfo = listing.serverInfo;
}
