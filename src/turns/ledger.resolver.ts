import { Ctx, FieldResolver, Int, Resolver, Root } from 'type-graphql';
import { fromSqlTimestampOrNull } from '../db/timestamps.js';
import type { Context } from '../graphql/context.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { LedgerOutcomeSource, type LedgerOutcomeRow } from './ledger-outcome.js';
import { CallStatus } from './turn-call.entity.js';

/**
 * One ledger entry as people read it: the intent written before the request, joined with its
 * outcome. Without an outcome yet the status is RUNNING (the call is in flight, or its outcome is
 * still being retried); the sweep later closes it as OUTCOME_UNKNOWN.
 */
@Resolver(() => LedgerEntry)
export class LedgerEntryResolver {
  async #outcome(entry: LedgerEntry, ctx: Context): Promise<LedgerOutcomeRow | null> {
    return ctx.loaders.ledgerOutcome.load(entry.id);
  }

  @FieldResolver(() => CallStatus, {
    description:
      'The outcome: a call status, RUNNING while no outcome is stored, or OUTCOME_UNKNOWN when the sweep closed it.',
  })
  async status(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<CallStatus> {
    return (await this.#outcome(entry, ctx))?.status ?? entry.status;
  }

  @FieldResolver(() => Int, { description: 'Attempts at the call; 0 when the outcome is unknown.' })
  async attempts(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<number> {
    return (await this.#outcome(entry, ctx))?.attempts ?? entry.attempts;
  }

  @FieldResolver(() => String, { nullable: true, description: 'What the model was told, for failures.' })
  async message(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<string | null> {
    const outcome = await this.#outcome(entry, ctx);
    return outcome ? outcome.message : entry.message;
  }

  @FieldResolver(() => Date, { nullable: true, description: 'When the outcome was stored.' })
  async outcomeAt(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<Date | null> {
    // Read through raw SQL: the timestamp arrives as text.
    return fromSqlTimestampOrNull((await this.#outcome(entry, ctx))?.created_at);
  }

  @FieldResolver(() => LedgerOutcomeSource, {
    nullable: true,
    description: 'Who stored the outcome: the call itself, or the sweep (OUTCOME_UNKNOWN).',
  })
  async outcomeBy(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<LedgerOutcomeSource | null> {
    return (await this.#outcome(entry, ctx))?.closed_by ?? null;
  }
}
