/**
 * Links between records for the console (issue 12): a ledger row to its turn, call and operation,
 * and a workspace's turns by conversation. Every link goes through a per-request DataLoader, so a
 * page of 100 rows costs the same statements as a page of one.
 */
import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context.js';
import { TurnFilterArgs, turnFilters } from '../graphql/filters.js';
import { pageWindow, toPage, type Page } from '../graphql/relay.js';
import { Operation } from '../operations/operation.entity.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { TurnCall } from './turn-call.entity.js';
import { Turn } from './turn.entity.js';
import { TurnConnection } from './turn.resolver.js';

@Resolver(() => LedgerEntry)
export class LedgerLinksResolver {
  @FieldResolver(() => Turn, { nullable: true, description: 'The turn this entry was made in.' })
  async turn(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<Turn | null> {
    return ctx.loaders.turn.load(entry.turnId);
  }

  @FieldResolver(() => TurnCall, { nullable: true, description: 'The call this entry records.' })
  async call(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<TurnCall | null> {
    return ctx.loaders.turnCall.load(entry.turnCallId);
  }

  @FieldResolver(() => Operation, {
    nullable: true,
    description: 'The operation called; null once it was deleted (operationKey stays).',
  })
  async operation(@Root() entry: LedgerEntry, @Ctx() ctx: Context): Promise<Operation | null> {
    return entry.operationId ? ctx.loaders.operation.load(entry.operationId) : null;
  }
}

@Resolver(() => Workspace)
export class WorkspaceTurnsResolver {
  @FieldResolver(() => TurnConnection, {
    description:
      "Turns of every assistant of the workspace, newest first; with conversationId, that conversation's.",
  })
  async turns(
    @Root() workspace: Workspace,
    @Args(() => TurnFilterArgs) args: TurnFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<Turn>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.turnsOfWorkspace.load({
      parentId: workspace.id,
      limit,
      after,
      filters: turnFilters(args),
    });
    return toPage(rows, limit, (t) => t.id);
  }
}
