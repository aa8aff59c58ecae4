/**
 * Turns' declared-tools records, stored once per workspace and tool list (`declared_tool_list`,
 * migration 20261201140000, written by src/turns/turn.service.ts#BEGIN_WITH_LIST_SQL): each turn
 * refers to its list by the SHA-256 of the record's JSON.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { DeclaredToolRecord } from './turn.entity.js';

export interface DeclaredToolListKey {
  workspaceId: string;
  digest: string;
}

const keyOf = (workspaceId: string, digest: string) => `${workspaceId} ${digest}`;

/** The declared tools of each turn's list; one statement per page of turns (often one list for all). */
export function declaredToolListLoader(
  em: EntityManager,
): DataLoader<DeclaredToolListKey, DeclaredToolRecord[], string> {
  return new DataLoader<DeclaredToolListKey, DeclaredToolRecord[], string>(
    async (keys) => {
      const rows = await em
        .getConnection()
        .execute<{ workspace_id: string; digest: string; tools: DeclaredToolRecord[] }[]>(
          `select workspace_id, digest, tools from declared_tool_list where (workspace_id, digest) in (${keys.map(() => '(?::uuid, ?)').join(', ')})`,
          keys.flatMap((k) => [k.workspaceId, k.digest]),
        );
      const byKey = new Map(rows.map((r) => [keyOf(r.workspace_id, r.digest), r.tools]));
      return keys.map(
        (k) =>
          byKey.get(keyOf(k.workspaceId, k.digest)) ??
          new Error(`declared-tools list ${k.digest} is missing`),
      );
    },
    { cacheKeyFn: (k) => keyOf(k.workspaceId, k.digest) },
  );
}
