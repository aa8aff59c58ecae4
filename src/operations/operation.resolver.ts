import { Arg, Authorized, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { assertWorkspace } from '../auth/scope.js';
import { Connection } from '../connections/connection.entity.js';
import type { Context } from '../graphql/context.js';
import { notFound } from '../graphql/errors.js';
import { idOf } from '../graphql/node.js';
import { Operation } from './operation.entity.js';

/** Loads an operation the principal may see, or throws NOT_FOUND. */
export async function visibleOperation(ctx: Context, globalId: string): Promise<Operation> {
  const operation = await ctx.loaders.operation.load(idOf(globalId, 'Operation', 'operation'));
  if (!operation) throw notFound('operation');
  assertWorkspace(ctx.principal!, operation.workspace.id, 'operation');
  return operation;
}

@Resolver(() => Operation)
export class OperationResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Operation)
  async operation(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Operation> {
    return visibleOperation(ctx, id);
  }

  @FieldResolver(() => Connection)
  async connection(@Root() operation: Operation, @Ctx() ctx: Context): Promise<Connection> {
    return (await ctx.loaders.connection.load(operation.connection.id))!;
  }
}
