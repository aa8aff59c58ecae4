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
