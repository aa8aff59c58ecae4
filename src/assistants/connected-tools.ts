import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import { Connection } from '../connections/connection.entity.js';
import type { Services } from '../services.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { AssistantConnection } from './assistant-connection.entity.js';
import { Assistant } from './assistant.entity.js';

/**
 * The customer's gate: turns a connection's tools on or off for one assistant. Idempotent: turning
 * on what is on, or off what is off, changes nothing and writes no audit row. The check and the
 * change run in one transaction holding the assistant's row lock, so concurrent identical calls
 * serialise: one changes the gate and writes its audit row, the others see it done.
 */
export async function setConnectedTools(
  services: Pick<Services, 'toolCache'>,
  em: EntityManager,
  principal: Principal,
  assistant: Assistant,
  connection: Connection,
  enabled: boolean,
): Promise<boolean> {
  const changed = await em.transactional(async (tx) => {
    await tx.findOneOrFail(
      Assistant,
      { id: assistant.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const existing = await tx.findOne(
      AssistantConnection,
      { assistant: assistant.id, connection: connection.id },
      { refresh: true },
    );
    if (enabled === (existing !== null)) return false;
    if (enabled) {
      tx.persist(
        new AssistantConnection(
          tx.getReference(Assistant, assistant.id, { wrapped: true }),
          tx.getReference(Connection, connection.id, { wrapped: true }),
          principal.label,
        ),
      );
    } else {
      tx.remove(existing!);
    }
    audit(tx, principal, {
      workspaceId: assistant.workspace.id,
      action: enabled ? 'CONNECT_TOOLS' : 'DISCONNECT_TOOLS',
      targetType: 'Assistant',
      targetId: assistant.nodeId,
      before: { connection: connection.nodeId, enabled: !enabled },
      after: { connection: connection.nodeId, enabled },
    });
    return true;
  });
  if (!changed) return false;
  await announceToolChange(services, em.getConnection(), {
    kind: 'assistant',
    id: assistant.id,
    workspaceId: assistant.workspace.id,
  });
  return true;
}
