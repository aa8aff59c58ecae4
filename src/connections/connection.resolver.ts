import {
  Arg,
  Args,
  ArgsType,
  Authorized,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import type { Context } from '../graphql/context.js';
import { visible } from '../graphql/visible.js';
import { notFound } from '../graphql/errors.js';
import type { ChildFilter } from '../graphql/loaders.js';
import { idOf } from '../graphql/node.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { Operation } from '../operations/operation.entity.js';
import { type Risk, RiskLevel } from '../operations/types.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { Connection } from './connection.entity.js';
import { CreateConnectionInput, DeleteConnectionInput, UpdateConnectionInput } from './connection.input.js';
import { connect, deleteConnection, updateConnection, type ConnectionResult } from './connection.service.js';

export const OperationConnection = connectionType('Operation', Operation, { totalCount: true });

@ArgsType()
export class OperationFilterArgs extends PageArgsType {
  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => RiskLevel, { nullable: true })
  risk?: Risk | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Only operations with (true) or without (false) open review reasons.',
  })
  needsReview?: boolean | null;
}

@ObjectType()
export class ConnectionPayload {
  @Field(() => Connection, { nullable: true })
  connection!: Connection | null;

  @Field(() => DiscoveryRun, {
    nullable: true,
    description: 'createConnection: the first discovery. A failed one keeps the connection, with its error.',
  })
  discoveryRun?: DiscoveryRun | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@ObjectType()
export class DeleteConnectionPayload {
  @Field(() => ID, { nullable: true })
  deletedConnectionId!: string | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

function payload(result: ConnectionResult): ConnectionPayload {
  return {
    connection: result.connection,
    userErrors: result.userErrors.map((p) => new UserError(p.field, p.message, p.code)),
  };
}

/** Loads a connection the principal may see, or throws NOT_FOUND. */
export async function visibleConnection(ctx: Context, globalId: string): Promise<Connection> {
  return visible<Connection>(ctx, globalId, 'Connection');
}

export function operationFilters(args: OperationFilterArgs): Record<string, ChildFilter> {
  const filters: Record<string, ChildFilter> = {};
  if (args.enabled != null) filters.enabled = args.enabled;
  if (args.risk != null) filters.risk = args.risk;
  if (args.needsReview != null) filters.needs_review = args.needsReview;
  return filters;
}

@Resolver(() => Connection)
export class ConnectionResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Connection, {
    nullable: true,
    description: 'By global ID; NOT_FOUND (an error for this field only) when missing or out of scope.',
  })
  async connection(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Connection> {
    return visibleConnection(ctx, id);
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => ConnectionPayload, {
    description: 'Saves a tool source. The first discovery runs at once.',
  })
  async createConnection(
    @Arg('input', () => CreateConnectionInput) input: CreateConnectionInput,
    @Ctx() ctx: Context,
  ): Promise<ConnectionPayload> {
    const workspace = await ctx.loaders.workspace.load(idOf(input.workspaceId, 'Workspace', 'workspace'));
    if (!workspace) throw notFound('workspace');
    const result = await connect(ctx.em, ctx.services, ctx.principal!, workspace.id, input);
    return { ...payload(result), discoveryRun: result.discoveryRun };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => ConnectionPayload)
  async updateConnection(
    @Arg('input', () => UpdateConnectionInput) input: UpdateConnectionInput,
    @Ctx() ctx: Context,
  ): Promise<ConnectionPayload> {
    const connection = await visibleConnection(ctx, input.connectionId);
    return payload(await updateConnection(ctx.em, ctx.services, ctx.principal!, connection, input));
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => DeleteConnectionPayload, {
    description: 'Deletes the connection and its operations. Call history stays.',
  })
  async deleteConnection(
    @Arg('input', () => DeleteConnectionInput) input: DeleteConnectionInput,
    @Ctx() ctx: Context,
  ): Promise<DeleteConnectionPayload> {
    const connection = await visibleConnection(ctx, input.connectionId);
    const id = connection.nodeId;
    await deleteConnection(ctx.em, ctx.services, ctx.principal!, connection);
    return { deletedConnectionId: id, userErrors: [] };
  }

  @FieldResolver(() => Workspace)
  async workspace(@Root() connection: Connection, @Ctx() ctx: Context): Promise<Workspace> {
    return (await ctx.loaders.workspace.load(connection.workspace.id))!;
  }

  @FieldResolver(() => OperationConnection)
  async operations(
    @Root() connection: Connection,
    @Args(() => OperationFilterArgs) args: OperationFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<Operation>> {
    const { limit, after } = pageWindow(args);
    const filters = operationFilters(args);
    const rows = await ctx.loaders.operationsOfConnection.load({
      parentId: connection.id,
      limit,
      after,
      filters,
    });
    return toPage(
      rows,
      limit,
      (o) => o.id,
      () => ctx.loaders.countOperationsOfConnection.load({ parentId: connection.id, filters }),
    );
  }
}
