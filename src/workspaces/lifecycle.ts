/**
 * Create, rename and delete of workspaces and assistants (issue 12). Each persists, audits and
 * flushes here, so resolvers only check input and shape the payload.
 *
 * Deleting refuses while history exists. Turns and calls belong to their assistant and workspace
 * (foreign keys with cascade), and the ledger is append-only: deleting an owner would either erase
 * call history or leave ledger rows pointing at nothing. So a workspace or an assistant with any
 * recorded turn (or ledger row) cannot be deleted; it can be renamed, and its tools switched off.
 * The check and the delete run in one transaction holding the owner's row lock (`FOR UPDATE`): a
 * turn being started meanwhile holds `FOR KEY SHARE` on the same row through its foreign key, so
 * either the check sees that turn, or the turn waits and then fails on the missing owner.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Assistant } from '../assistants/assistant.entity.js';
import { ApiToken } from '../auth/api-token.entity.js';
import type { Principal } from '../auth/principal.js';
import { audit } from '../audit/audit.js';
import { notFoundError } from '../errors.js';
import { UserError } from '../graphql/user-error.js';
import { MAX_NAME_CHARS, nameLengthProblem } from '../names.js';
import { Workspace } from './workspace.entity.js';

/** Names are trimmed, 1 to 200 characters (`names.ts#nameLengthProblem`). */
export function checkName(name: string, field: string[]): UserError | null {
  const problem = nameLengthProblem(name);
  if (problem === 'EMPTY') return new UserError(field, 'must not be empty', 'REQUIRED');
  if (problem === 'TOO_LONG')
    return new UserError(field, `must be at most ${MAX_NAME_CHARS} characters`, 'TOO_LONG');
  return null;
}

/** A new workspace, audited, written in one flush. The name is already checked (`checkName`). */
export async function createWorkspace(
  em: EntityManager,
  principal: Principal,
  name: string,
): Promise<Workspace> {
  const workspace = new Workspace(name);
  em.persist(workspace);
  audit(em, principal, {
    workspaceId: workspace.id,
    action: 'CREATE_WORKSPACE',
    targetType: 'Workspace',
    targetId: workspace.nodeId,
    after: { name: workspace.name },
  });
  await em.flush();
  return workspace;
}

/** A new assistant in an existing workspace, audited, written in one flush. */
export async function createAssistant(
  em: EntityManager,
  principal: Principal,
  workspaceId: string,
  name: string,
): Promise<Assistant> {
  const assistant = new Assistant(em.getReference(Workspace, workspaceId, { wrapped: true }), name);
  em.persist(assistant);
  audit(em, principal, {
    workspaceId,
    action: 'CREATE_ASSISTANT',
    targetType: 'Assistant',
    targetId: assistant.nodeId,
    after: { name: assistant.name },
  });
  await em.flush();
  return assistant;
}

export interface DeleteResult {
  deleted: boolean;
  userErrors: UserError[];
  /** Workspace delete: the API tokens bound to it, deleted with it (to forget on every instance). */
  tokenIds: string[];
}

type Owner = 'workspace' | 'assistant';

/** One statement: whether any turn or ledger row belongs to the owner. */
async function hasHistory(
  tx: EntityManager,
  owner: Owner,
  id: string,
  workspaceId: string,
): Promise<boolean> {
  const sql =
    owner === 'workspace'
      ? `select exists (select 1 from turn where workspace_id = ?) or exists (select 1 from ledger_entry where workspace_id = ?) as "history"`
      : `select exists (select 1 from turn where assistant_id = ?) or exists (select 1 from ledger_entry where workspace_id = ? and assistant_id = ?) as "history"`;
  const params = owner === 'workspace' ? [id, id] : [id, workspaceId, id];
  const row = await tx
    .getConnection()
    .execute<{ history: boolean }>(sql, params, 'get', tx.getTransactionContext());
  return row.history;
}

function historyError(owner: Owner): UserError {
  const retire =
    owner === 'workspace'
      ? 'rename it, revoke its tokens and delete its connections to retire it'
      : 'rename it, or switch its connected tools off (setConnectedTools with none) to retire it';
  return new UserError(
    ['input', 'id'],
    `this ${owner} has recorded turns, and call history and the ledger are kept for good, so it cannot be deleted; ${retire}`,
    'HAS_HISTORY',
  );
}

export async function renameWorkspace(
  em: EntityManager,
  principal: Principal,
  id: string,
  name: string,
): Promise<Workspace> {
  return em.transactional(async (tx) => {
    const workspace = await tx.findOne(
      Workspace,
      { id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!workspace) throw notFoundError('workspace');
    await renameLocked(tx, principal, workspace, name, id, 'Workspace');
    return workspace;
  });
}

export async function renameAssistant(
  em: EntityManager,
  principal: Principal,
  id: string,
  name: string,
): Promise<Assistant> {
  return em.transactional(async (tx) => {
    const assistant = await tx.findOne(
      Assistant,
      { id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!assistant) throw notFoundError('assistant');
    await renameLocked(tx, principal, assistant, name, assistant.workspace.id, 'Assistant');
    return assistant;
  });
}

/** Renames a row the caller holds locked; an audit row only for a change that happened. */
async function renameLocked(
  tx: EntityManager,
  principal: Principal,
  target: { name: string; nodeId: string },
  name: string,
  workspaceId: string,
  targetType: 'Workspace' | 'Assistant',
): Promise<void> {
  const before = target.name;
  if (before === name) return;
  target.name = name;
  audit(tx, principal, {
    workspaceId,
    action: targetType === 'Workspace' ? 'RENAME_WORKSPACE' : 'RENAME_ASSISTANT',
    targetType,
    targetId: target.nodeId,
    before: { name: before },
    after: { name },
  });
  await tx.flush();
}

/**
 * Deletes a workspace without history, with everything it owns (assistants, connections,
 * operations, gates, discovery runs, its API tokens). Its audit trail stays. A refusal is a
 * `HAS_HISTORY` user error and leaves an audit row too.
 */
export async function deleteWorkspace(
  em: EntityManager,
  principal: Principal,
  id: string,
): Promise<DeleteResult> {
  return em.transactional(async (tx) => {
    const workspace = await tx.findOne(
      Workspace,
      { id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!workspace) throw notFoundError('workspace');
    const entry = {
      workspaceId: id,
      targetType: 'Workspace',
      targetId: workspace.nodeId,
      before: { name: workspace.name },
    };
    if (await hasHistory(tx, 'workspace', id, id)) {
      audit(tx, principal, { ...entry, action: 'DELETE_WORKSPACE_REFUSED' });
      await tx.flush();
      return { deleted: false, userErrors: [historyError('workspace')], tokenIds: [] };
    }
    const tokens = await tx.find(ApiToken, { workspace: id }, { fields: ['id'] });
    audit(tx, principal, { ...entry, action: 'DELETE_WORKSPACE' });
    await tx.flush();
    await tx.nativeDelete(Workspace, { id });
    return { deleted: true, userErrors: [], tokenIds: tokens.map((t) => t.id) };
  });
}

/** Deletes an assistant without history, with its gates. A refusal is `HAS_HISTORY`, audited. */
export async function deleteAssistant(
  em: EntityManager,
  principal: Principal,
  id: string,
): Promise<DeleteResult> {
  return em.transactional(async (tx) => {
    const assistant = await tx.findOne(
      Assistant,
      { id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!assistant) throw notFoundError('assistant');
    const workspaceId = assistant.workspace.id;
    const entry = {
      workspaceId,
      targetType: 'Assistant',
      targetId: assistant.nodeId,
      before: { name: assistant.name },
    };
    if (await hasHistory(tx, 'assistant', id, workspaceId)) {
      audit(tx, principal, { ...entry, action: 'DELETE_ASSISTANT_REFUSED' });
      await tx.flush();
      return { deleted: false, userErrors: [historyError('assistant')], tokenIds: [] };
    }
    audit(tx, principal, { ...entry, action: 'DELETE_ASSISTANT' });
    await tx.flush();
    await tx.nativeDelete(Assistant, { id });
    return { deleted: true, userErrors: [], tokenIds: [] };
  });
}
