/**
 * The console's list filters (issue 12): arguments and the column filters they become. Each is an
 * equality (or a half-open time range) on the child table, so a page of many parents still costs
 * one statement per distinct filter (see loadChildPages).
 */
import { ArgsType, Field, ID } from 'type-graphql';
import { ConnectionKind, ConnectionStatus } from '../connections/connection.entity.js';
import { DiscoveryOutcome } from '../discovery/discovery-run.entity.js';
import { CallStatus } from '../turns/turn-call.entity.js';
import { badInput } from './errors.js';
import type { ChildFilter } from './loaders.js';
import { fromGlobalId } from './node.js';
import { PageArgsType } from './relay.js';

@ArgsType()
export class ConnectionFilterArgs extends PageArgsType {
  @Field(() => ConnectionStatus, { nullable: true })
  status?: ConnectionStatus | null;

  @Field(() => ConnectionKind, { nullable: true })
  kind?: ConnectionKind | null;
}

export function connectionFilters(args: ConnectionFilterArgs): Record<string, ChildFilter> {
  const filters: Record<string, ChildFilter> = {};
  // The outcome lives in ledger_outcome; the intent row says RUNNING until then.
  if (args.status != null) filters.status = { ledgerStatus: args.status };
  if (args.kind != null) filters.kind = args.kind;
  return filters;
}

@ArgsType()
export class DiscoveryRunFilterArgs extends PageArgsType {
  @Field(() => DiscoveryOutcome, { nullable: true })
  outcome?: DiscoveryOutcome | null;
}

export function discoveryRunFilters(args: DiscoveryRunFilterArgs): Record<string, ChildFilter> {
  return args.outcome != null ? { outcome: args.outcome } : {};
}

@ArgsType()
export class LedgerFilterArgs extends PageArgsType {
  @Field(() => ID, { nullable: true, description: 'Only entries of this operation.' })
  operationId?: string | null;

  @Field(() => CallStatus, { nullable: true })
  status?: CallStatus | null;

  @Field(() => Date, { nullable: true, description: 'Entries at or after this instant.' })
  since?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Entries before this instant.' })
  until?: Date | null;
}

export function ledgerFilters(args: LedgerFilterArgs): Record<string, ChildFilter> {
  const filters: Record<string, ChildFilter> = {};
  if (args.operationId != null) {
    const parsed = fromGlobalId(args.operationId);
    if (parsed?.type !== 'Operation') throw badInput('"operationId" is not an operation ID');
    filters.operation_id = parsed.id;
  }
  // The outcome lives in ledger_outcome; the intent row says RUNNING until then.
  if (args.status != null) filters.status = { ledgerStatus: args.status };
  if (args.since != null || args.until != null) {
    filters.created_at = {
      ...(args.since != null ? { gte: args.since.toISOString() } : {}),
      ...(args.until != null ? { lt: args.until.toISOString() } : {}),
    };
  }
  return filters;
}

@ArgsType()
export class TurnFilterArgs extends PageArgsType {
  @Field(() => String, { nullable: true, description: 'Only the turns of this conversation.' })
  conversationId?: string | null;
}

export function turnFilters(args: TurnFilterArgs): Record<string, ChildFilter> {
  return args.conversationId != null ? { conversation_id: args.conversationId } : {};
}
