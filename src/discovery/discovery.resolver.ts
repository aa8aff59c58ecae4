import {
  Arg,
  Args,
  Authorized,
  Ctx,
  Field,
  FieldResolver,
  ID,
  InputType,
  Mutation,
  ObjectType,
  Resolver,
  Root,
} from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { Connection } from '../connections/connection.entity.js';
import { visibleConnection } from '../connections/connection.resolver.js';
import type { Context } from '../graphql/context.js';
import { DiscoveryRunFilterArgs, discoveryRunFilters } from '../graphql/filters.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { Operation } from '../operations/operation.entity.js';
import { OperationChange } from '../operations/operation-change.entity.js';
import { OperationChangeConnection } from '../operations/operation.resolver.js';
import { DiscoveryRun, DiscoveryTrigger } from './discovery-run.entity.js';

export const DiscoveryRunConnection = connectionType('DiscoveryRun', DiscoveryRun, { totalCount: true });

@InputType()
export class DiscoverInput {
  @Field(() => ID)
  connectionId!: string;
}

@ObjectType()
export class DiscoverPayload {
  @Field(() => DiscoveryRun, {
    nullable: true,
    description: 'The run, whatever its outcome: read outcome and errorCode.',
  })
  run!: DiscoveryRun | null;

  @Field(() => [Operation], { description: 'Operations this run added or changed.' })
  changedOperations!: Operation[];

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@Resolver(() => DiscoveryRun)
export class DiscoveryRunResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => DiscoverPayload, {
    description: 'Re-discover: reads the source again and reconciles its operations, all or nothing.',
  })
  async discover(
    @Arg('input', () => DiscoverInput) input: DiscoverInput,
    @Ctx() ctx: Context,
  ): Promise<DiscoverPayload> {
    const connection = await visibleConnection(ctx, input.connectionId);
    const result = await ctx.services.discovery.run(
      connection.id,
      DiscoveryTrigger.REDISCOVER,
      ctx.principal!,
    );
    return { run: result.run, changedOperations: result.changed, userErrors: [] };
  }

  @FieldResolver(() => OperationChangeConnection, {
    description:
      'Per operation, what this run did (ADDED, UPDATED, REMOVED, HELD), with the diff for updated and held ones, in the order applied.',
  })
  async changes(
    @Root() run: DiscoveryRun,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<OperationChange>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.changesOfRun.load({ parentId: run.id, limit, after });
    return toPage(
      rows,
      limit,
      (r) => r.id,
      () => ctx.loaders.countChangesOfRun.load({ parentId: run.id }),
    );
  }

  @FieldResolver(() => Connection)
  async connection(@Root() run: DiscoveryRun, @Ctx() ctx: Context): Promise<Connection> {
    return (await ctx.loaders.connection.load(run.connection.id))!;
  }
}

@Resolver(() => Connection)
export class ConnectionRunsResolver {
  @FieldResolver(() => DiscoveryRunConnection, {
    description: 'Discovery runs, newest first, filtered by outcome.',
  })
  async discoveryRuns(
    @Root() connection: Connection,
    @Args(() => DiscoveryRunFilterArgs) args: DiscoveryRunFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<DiscoveryRun>> {
    const { limit, after } = pageWindow(args);
    const filters = discoveryRunFilters(args);
    const rows = await ctx.loaders.discoveryRunsOfConnection.load({
      parentId: connection.id,
      limit,
      after,
      filters,
    });
    return toPage(
      rows,
      limit,
      (r) => r.id,
      () => ctx.loaders.countDiscoveryRunsOfConnection.load({ parentId: connection.id, filters }),
    );
  }
}
