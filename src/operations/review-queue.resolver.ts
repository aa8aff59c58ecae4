/** ADMIN's review queue across workspaces (issue 12): every operation held back for review. */
import { Args, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { OperationConnection } from '../connections/connection.resolver.js';
import type { Context } from '../graphql/context.js';
import { PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { Operation } from './operation.entity.js';

@Resolver()
export class ReviewQueueResolver {
  @Authorized(Role.ADMIN)
  @Query(() => OperationConnection, {
    description:
      'Operations awaiting an admin review in every workspace, oldest first; enabling one (as ADMIN) resolves its reasons and takes it off the queue.',
  })
  async reviewQueue(
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<Operation>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.em.find(
      Operation,
      { needsReview: true, ...(after ? { id: { $gt: after } } : {}) },
      { orderBy: { id: 'asc' }, limit: limit + 1 },
    );
    return toPage(
      rows,
      limit,
      (o) => o.id,
      () => ctx.em.count(Operation, { needsReview: true }),
    );
  }
}
