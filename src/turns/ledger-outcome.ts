/**
 * The outcome half of the ledger (I/O): one append-only `ledger_outcome` row per intent
 * (`ledger_entry`), written with the call's record, or by the sweep as OUTCOME_UNKNOWN.
 */
import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { registerEnumType } from 'type-graphql';
import type { CallStatus } from './call-status.js';

export enum LedgerOutcomeSource {
  /** Written by the call itself, right after the tool answered (or by its bounded retries). */
  CALL = 'CALL',
  /** Written by the sweep: the call's own outcome never arrived. */
  SWEEP = 'SWEEP',
}
registerEnumType(LedgerOutcomeSource, { name: 'LedgerOutcomeSource' });

export interface LedgerOutcomeRow {
  ledger_entry_id: string;
  status: CallStatus;
  attempts: number;
  message: string | null;
  closed_by: LedgerOutcomeSource;
  /** Text: raw SQL hands timestamps back as strings (see db/timestamps.ts). */
  created_at: string | Date;
}

/** The outcome of each intent, or null while it has none; one statement per page of the ledger. */
export function ledgerOutcomeLoader(em: EntityManager): DataLoader<string, LedgerOutcomeRow | null> {
  return new DataLoader<string, LedgerOutcomeRow | null>(async (ids) => {
    const rows = await em
      .getConnection()
      .execute<LedgerOutcomeRow[]>(
        `select ledger_entry_id, status, attempts, message, closed_by, created_at from ledger_outcome where ledger_entry_id in (${ids.map(() => '?').join(', ')})`,
        [...ids],
      );
    const byIntent = new Map(rows.map((r) => [r.ledger_entry_id, r]));
    return ids.map((id) => byIntent.get(id) ?? null);
  });
}
