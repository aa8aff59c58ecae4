import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { JsonValue } from '../operations/types.js';
import { AuditEvent } from './audit-event.entity.js';

/** Queues an audit row on `em`; it is written by the same flush (and transaction) as the change. */
export function audit(
  em: EntityManager,
  principal: Principal,
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
    actor: principal.label,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    before: entry.before ?? null,
    after: entry.after ?? null,
  });
  em.persist(event);
  return event;
}
