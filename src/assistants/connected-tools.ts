import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import { Connection } from '../connections/connection.entity.js';
import type { Services } from '../services.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { AssistantConnection } from './assistant-connection.entity.js';
import { Assistant } from './assistant.entity.js';

/**
 * The customer's gate: turns a connection's tools on or off for one assistant. Idempotent: turning
 * on what is on, or off what is off, changes nothing and writes no audit row.
 */
export async function setConnectedTools(
  services: Pick<Services, 'toolCache'>,
  em: EntityManager,
  principal: Principal,
  assistant: Assistant,
  connection: Connection,
  enabled: boolean,
): Promise<boolean> {
  const existing = await em.findOne(AssistantConnection, {
    assistant: assistant.id,
    connection: connection.id,
  });
  if (enabled === (existing !== null)) return false;
  if (enabled) {
    em.persist(
      new AssistantConnection(
        em.getReference(Assistant, assistant.id, { wrapped: true }),
        em.getReference(Connection, connection.id, { wrapped: true }),
        principal.label,
      ),
    );
  } else {
    em.remove(existing!);
  }
  audit(em, principal, {
    workspaceId: assistant.workspace.id,
    action: enabled ? 'CONNECT_TOOLS' : 'DISCONNECT_TOOLS',
    targetType: 'Assistant',
    targetId: assistant.nodeId,
    before: { connection: connection.nodeId, enabled: !enabled },
    after: { connection: connection.nodeId, enabled },
  });
  try {
    await em.flush();
  } catch (err) {
    // Two requests turning the same gate on at once: the other one won, which is what we wanted.
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
  await announceToolChange(services, em.getConnection(), {
    kind: 'assistant',
    id: assistant.id,
    workspaceId: assistant.workspace.id,
  });
  return true;
}
