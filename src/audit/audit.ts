import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { JsonValue } from '../operations/types.js';
import { AuditEvent } from './audit-event.entity.js';

/**
 * Who did it, as the audit log names them: a principal (its token's label), the person who began a
 * sign-in, or the service itself (`SYSTEM_ACTOR`-style labels). Only the label is kept.
 */
export type Actor = Pick<Principal, 'label'>;

/**
 * Queues an audit row on `em`; it is written by the same flush (and transaction) as the change.
 * Every audit row goes through here.
 */
export function audit(
  em: EntityManager,
  actor: Actor,
  entry: {
    workspaceId: string | null;
    action: string;
    targetType: string;
    targetId: string;
    before?: JsonValue;
    after?: JsonValue;
  },
): AuditEvent {
  const event = new AuditEvent({
    workspaceId: entry.workspaceId,
    actor: actor.label,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    before: entry.before ?? null,
    after: entry.after ?? null,
  });
  em.persist(event);
  return event;
}

/**
 * The SQL that writes an audit row for the row of `source` (a CTE of the same statement, at most
 * one row), for the changes the service makes in one statement (a breaker opening or closing,
 * src/guards/store.ts). `columns` are SQL expressions over `source`. Its five placeholders, in
 * order: the row's id (`uuidv7()`), the actor's label, the action, the target type and target id.
 */
export function auditRowsSql(source: string, columns: { workspaceId: string; after: string }): string {
  return `insert into audit_event (id, workspace_id, actor, action, target_type, target_id, before, after, created_at)
  select ?::uuid, ${columns.workspaceId}, ?, ?, ?, ?, null, ${columns.after}, now() from ${source}`;
}
