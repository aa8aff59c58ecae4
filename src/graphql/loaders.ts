import type { EntityClass, EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { Assistant } from '../assistants/assistant.entity.js';
import { Connection } from '../connections/connection.entity.js';
import { AuditEvent } from '../audit/audit-event.entity.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { Operation } from '../operations/operation.entity.js';
import { OperationChange } from '../operations/operation-change.entity.js';
import { ReviewReason } from '../operations/review-reason.entity.js';
import { LedgerEntry } from '../turns/ledger-entry.entity.js';
import { declaredToolListLoader } from '../turns/declared-tool-list.js';
import { ledgerOutcomeLoader } from '../turns/ledger-outcome.js';
import { TurnCall } from '../turns/turn-call.entity.js';
import { Turn } from '../turns/turn.entity.js';
import { Workspace } from '../workspaces/workspace.entity.js';

/** A page of children per parent: `limit + 1` rows so the caller can tell whether more exist. */
export type ChildFilter =
  | string
  | boolean
  | { isNull: boolean }
  /** A half-open range on a timestamp column: `gte` ≤ value < `lt` (ISO strings; either may be absent). */
  | { gte?: string; lt?: string }
  /** A ledger entry's status as people read it: its outcome's, else the intent's own (RUNNING). */
  | { ledgerStatus: string };

export interface ChildPageKey {
  parentId: string;
  limit: number;
  after: string | null;
  /** Extra filters on columns of the child table: column name → value, or `{ isNull }`. */
  filters?: Record<string, ChildFilter>;
}

/** The filters as `and …` conditions on the child table `t`, their values appended to `params`. */
function filterSql(filters: Record<string, ChildFilter> | undefined, params: unknown[]): string {
  let where = '';
  for (const [column, value] of Object.entries(filters ?? {})) {
    if (!/^[a-z_]+$/.test(column)) throw new Error(`bad filter column ${column}`);
    if (typeof value === 'object' && 'isNull' in value) {
      where += ` and t."${column}" is ${value.isNull ? '' : 'not '}null`;
    } else if (typeof value === 'object' && 'ledgerStatus' in value) {
      where += ` and coalesce((select o."status" from "ledger_outcome" o where o."ledger_entry_id" = t."id"), t."${column}") = ?`;
      params.push(value.ledgerStatus);
    } else if (typeof value === 'object') {
      if (value.gte !== undefined) {
        where += ` and t."${column}" >= ?`;
        params.push(value.gte);
      }
      if (value.lt !== undefined) {
        where += ` and t."${column}" < ?`;
        params.push(value.lt);
      }
    } else {
      where += ` and t."${column}" = ?`;
      params.push(value);
    }
  }
  return where;
}

/**
 * Loads the first `limit + 1` children of many parents in ONE statement per distinct
 * (limit, after, filters), with a window function, so a page of 100 parents costs the same SQL
 * as a page of one.
 */
export async function loadChildPages<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  table: string,
  parentColumn: string,
  keys: readonly ChildPageKey[],
  order: 'asc' | 'desc' = 'asc',
): Promise<T[][]> {
  const groups = new Map<string, ChildPageKey[]>();
  const groupKey = (key: ChildPageKey) => JSON.stringify([key.limit, key.after, key.filters ?? {}]);
  for (const key of keys) {
    const g = groupKey(key);
    const list = groups.get(g) ?? [];
    list.push(key);
    groups.set(g, list);
  }
  const byParent = new Map<string, T[]>();
  for (const [g, group] of groups) {
    const first = group[0]!;
    const parents = [...new Set(group.map((k) => k.parentId))];
    const params: unknown[] = [...parents];
    let where = `t."${parentColumn}" in (${parents.map(() => '?').join(', ')})`;
    where += filterSql(first.filters, params);
    if (first.after !== null) {
      where += ` and t."id" ${order === 'asc' ? '>' : '<'} ?`;
      params.push(first.after);
    }
    params.push(first.limit + 1);
    const sql =
      `select * from (select t.*, row_number() over (partition by t."${parentColumn}" order by t."id" ${order}) as "rn__" ` +
      `from "${table}" t where ${where}) s where s."rn__" <= ? order by s."${parentColumn}", s."rn__"`;
    const rows = await em.getConnection().execute<Record<string, unknown>[]>(sql, params);
    for (const row of rows) {
      // Keyed by group too: two filters on one parent (aliases) must not mix their rows.
      const slot = `${g}\n${row[parentColumn] as string}`;
      delete row.rn__;
      const list = byParent.get(slot) ?? [];
      list.push(em.map(entity, row as never));
      byParent.set(slot, list);
    }
  }
  return keys.map((k) => byParent.get(`${groupKey(k)}\n${k.parentId}`) ?? []);
}

export interface CountKey {
  parentId: string;
  filters?: Record<string, ChildFilter>;
}

/**
 * `totalCount` of many parents' children: ONE `count(*) … group by parent` per distinct filter, with
 * the same filters as the page. Only for children that stay few per parent (see docs/api.md, "Lists, errors and cost").
 */
function countLoader(
  em: EntityManager,
  table: string,
  parentColumn: string,
): DataLoader<CountKey, number, string> {
  const filterKey = (k: CountKey) => JSON.stringify(k.filters ?? {});
  return new DataLoader<CountKey, number, string>(
    async (keys) => {
      const counts = new Map<string, number>();
      const groups = new Map<string, CountKey[]>();
      for (const key of keys) groups.set(filterKey(key), [...(groups.get(filterKey(key)) ?? []), key]);
      for (const [g, group] of groups) {
        const parents = [...new Set(group.map((k) => k.parentId))];
        const params: unknown[] = [...parents];
        let where = `t."${parentColumn}" in (${parents.map(() => '?').join(', ')})`;
        where += filterSql(group[0]!.filters, params);
        const rows = await em
          .getConnection()
          .execute<{ parent: string; n: string }[]>(
            `select t."${parentColumn}" as "parent", count(*) as "n" from "${table}" t where ${where} group by t."${parentColumn}"`,
            params,
          );
        for (const row of rows) counts.set(`${g}\n${row.parent}`, Number(row.n));
      }
      return keys.map((k) => counts.get(`${filterKey(k)}\n${k.parentId}`) ?? 0);
    },
    { cacheKeyFn: (k) => JSON.stringify([k.parentId, k.filters ?? {}]) },
  );
}

function byIdLoader<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
): DataLoader<string, T | null> {
  return new DataLoader<string, T | null>(async (ids) => {
    const rows = await em.find(entity, { id: { $in: [...ids] } } as never);
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  });
}

function pageLoader<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  table: string,
  parentColumn: string,
  order: 'asc' | 'desc' = 'asc',
): DataLoader<ChildPageKey, T[], string> {
  return new DataLoader<ChildPageKey, T[], string>(
    (keys) => loadChildPages(em, entity, table, parentColumn, keys, order),
    {
      cacheKeyFn: (k) => JSON.stringify([k.parentId, k.limit, k.after, k.filters ?? {}]),
    },
  );
}

export function createLoaders(em: EntityManager) {
  return {
    workspace: byIdLoader(em, Workspace),
    assistant: byIdLoader(em, Assistant),
    connection: byIdLoader(em, Connection),
    operation: byIdLoader(em, Operation),
    connectionsOfWorkspace: pageLoader(em, Connection, 'connection', 'workspace_id'),
    assistantsOfWorkspace: pageLoader(em, Assistant, 'assistant', 'workspace_id'),
    operationsOfConnection: pageLoader(em, Operation, 'operation', 'connection_id'),
    operationsOfWorkspace: pageLoader(em, Operation, 'operation', 'workspace_id'),
    reviewReasonsOfOperation: pageLoader(em, ReviewReason, 'review_reason', 'operation_id'),
    discoveryRunsOfConnection: pageLoader(em, DiscoveryRun, 'discovery_run', 'connection_id', 'desc'),
    /** Every open reason of each operation (few: one per review code and detail), oldest first. */
    openReasonsOfOperation: new DataLoader<string, ReviewReason[]>((ids) =>
      loadChildPages(
        em,
        ReviewReason,
        'review_reason',
        'operation_id',
        ids.map((parentId) => ({
          parentId,
          limit: 1_000,
          after: null,
          filters: { resolved_at: { isNull: true } },
        })),
      ),
    ),
    changesOfRun: pageLoader(em, OperationChange, 'operation_change', 'discovery_run_id'),
    changesOfOperation: pageLoader(em, OperationChange, 'operation_change', 'operation_id', 'desc'),
    countChangesOfRun: countLoader(em, 'operation_change', 'discovery_run_id'),
    countChangesOfOperation: countLoader(em, 'operation_change', 'operation_id'),
    auditEventsOfWorkspace: pageLoader(em, AuditEvent, 'audit_event', 'workspace_id', 'desc'),
    callsOfTurn: pageLoader(em, TurnCall, 'turn_call', 'turn_id'),
    turnsOfAssistant: pageLoader(em, Turn, 'turn', 'assistant_id', 'desc'),
    turnsOfWorkspace: pageLoader(em, Turn, 'turn', 'workspace_id', 'desc'),
    turn: byIdLoader(em, Turn),
    declaredToolList: declaredToolListLoader(em),
    turnCall: byIdLoader(em, TurnCall),
    ledgerOfWorkspace: pageLoader(em, LedgerEntry, 'ledger_entry', 'workspace_id', 'desc'),
    ledgerOutcome: ledgerOutcomeLoader(em),
    countConnectionsOfWorkspace: countLoader(em, 'connection', 'workspace_id'),
    countAssistantsOfWorkspace: countLoader(em, 'assistant', 'workspace_id'),
    countOperationsOfConnection: countLoader(em, 'operation', 'connection_id'),
    countOperationsOfWorkspace: countLoader(em, 'operation', 'workspace_id'),
    countReviewReasonsOfOperation: countLoader(em, 'review_reason', 'operation_id'),
    countDiscoveryRunsOfConnection: countLoader(em, 'discovery_run', 'connection_id'),
    countCallsOfTurn: countLoader(em, 'turn_call', 'turn_id'),
    countConnectedToolsOfAssistant: countLoader(em, 'assistant_connection', 'assistant_id'),
    connectedToolsOfAssistant: new DataLoader<ChildPageKey, Connection[], string>(
      async (keys) => {
        const assistants = [...new Set(keys.map((k) => k.parentId))];
        const rows = await em
          .getConnection()
          .execute<Record<string, unknown>[]>(
            `select ac.assistant_id as "gate__assistant", c.* from assistant_connection ac join connection c on c.id = ac.connection_id where ac.assistant_id in (${assistants.map(() => '?').join(', ')}) order by c.id`,
            assistants,
          );
        const byAssistant = new Map<string, Connection[]>();
        for (const row of rows) {
          const assistantId = row.gate__assistant as string;
          delete row.gate__assistant;
          byAssistant.set(assistantId, [
            ...(byAssistant.get(assistantId) ?? []),
            em.map(Connection, row as never),
          ]);
        }
        return keys.map((k) => {
          const all = byAssistant.get(k.parentId) ?? [];
          const from = k.after === null ? all : all.filter((c) => c.id > k.after!);
          return from.slice(0, k.limit + 1);
        });
      },
      { cacheKeyFn: (k) => JSON.stringify([k.parentId, k.limit, k.after]) },
    ),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
