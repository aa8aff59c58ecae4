/** The review queue across workspaces (issues 12, 28): every operation held back for review. */
import { Args, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { OperationConnection } from '../connections/connection.resolver.js';
import type { Context } from '../graphql/context.js';
import { PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { Operation } from './operation.entity.js';

@Resolver()
export class ReviewQueueResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Query(() => OperationConnection, {
    description:
      'Operations awaiting an admin review in every workspace, oldest first. An OPERATOR may read it; only an ADMIN decides (approveReview, rejectReview).',
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
