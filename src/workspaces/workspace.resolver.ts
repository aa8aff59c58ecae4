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
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { Assistant } from '../assistants/assistant.entity.js';
import { Role } from '../auth/api-token.entity.js';
import { scopedWorkspace } from '../auth/scope.js';
import { AuditEvent } from '../audit/audit-event.entity.js';
import { Connection } from '../connections/connection.entity.js';
import {
  OperationConnection,
  OperationFilterArgs,
  operationFilters,
} from '../connections/connection.resolver.js';
import { Operation } from '../operations/operation.entity.js';
import type { Context } from '../graphql/context.js';
import { visible } from '../graphql/visible.js';
import { ConnectionFilterArgs, connectionFilters } from '../graphql/filters.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { Notifier } from '../db/notifier.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { checkName, createWorkspace, deleteWorkspace, renameWorkspace } from './lifecycle.js';
import { Workspace } from './workspace.entity.js';

export const WorkspaceConnection = connectionType('Workspace', Workspace, { totalCount: true });
export const AssistantConnectionPage = connectionType('Assistant', Assistant, { totalCount: true });
export const ConnectionConnection = connectionType('Connection', Connection, { totalCount: true });
export const AuditEventConnection = connectionType('AuditEvent', AuditEvent);

@InputType()
export class CreateWorkspaceInput {
  @Field(() => String)
  name!: string;
}

@ObjectType()
export class CreateWorkspacePayload {
  @Field(() => Workspace, { nullable: true })
  workspace!: Workspace | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class RenameWorkspaceInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;
}

@InputType()
export class DeleteWorkspaceInput {
  @Field(() => ID)
  id!: string;
}

@ObjectType()
export class DeleteWorkspacePayload {
  @Field(() => ID, { nullable: true, description: 'The deleted workspace, or null when refused.' })
  deletedWorkspaceId!: string | null;

  @Field(() => [UserError], {
    description: 'HAS_HISTORY: the workspace has recorded turns, which are kept; nothing was deleted.',
  })
  userErrors!: UserError[];
}

@Resolver(() => Workspace)
export class WorkspaceResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => WorkspaceConnection, { description: 'All workspaces; a customer sees only its own.' })
  async workspaces(
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<Workspace>> {
    const { limit, after } = pageWindow(args);
    const scope = scopedWorkspace(ctx.principal!);
    const where: Record<string, unknown> = {};
    if (scope !== null) where.id = scope;
    const all = { ...where };
    if (after) where.id = scope !== null ? { $eq: scope, $gt: after } : { $gt: after };
    const rows = await ctx.em.find(Workspace, where, { orderBy: { id: 'asc' }, limit: limit + 1 });
    return toPage(
      rows,
      limit,
      (w) => w.id,
      () => ctx.em.count(Workspace, all),
    );
  }

  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Workspace, {
    nullable: true,
    description: 'By global ID; NOT_FOUND (an error for this field only) when missing or out of scope.',
  })
  async workspace(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Workspace> {
    return visible<Workspace>(ctx, id, 'Workspace');
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CreateWorkspacePayload)
  async createWorkspace(
    @Arg('input', () => CreateWorkspaceInput) input: CreateWorkspaceInput,
    @Ctx() ctx: Context,
  ): Promise<CreateWorkspacePayload> {
    const error = checkName(input.name, ['input', 'name']);
    if (error) return { workspace: null, userErrors: [error] };
    return { workspace: await createWorkspace(ctx.em, ctx.principal!, input.name.trim()), userErrors: [] };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CreateWorkspacePayload, { description: 'Renames a workspace (audited).' })
  async renameWorkspace(
    @Arg('input', () => RenameWorkspaceInput) input: RenameWorkspaceInput,
    @Ctx() ctx: Context,
  ): Promise<CreateWorkspacePayload> {
    const { id } = await visible<Workspace>(ctx, input.id, 'Workspace');
    const error = checkName(input.name, ['input', 'name']);
    if (error) return { workspace: null, userErrors: [error] };
    return {
      workspace: await renameWorkspace(ctx.em, ctx.principal!, id, input.name.trim()),
      userErrors: [],
    };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => DeleteWorkspacePayload, {
    description:
      'Deletes a workspace that has no recorded turns, with its assistants, connections, operations and API tokens; its audit trail stays. A workspace with history is refused (HAS_HISTORY).',
  })
  async deleteWorkspace(
    @Arg('input', () => DeleteWorkspaceInput) input: DeleteWorkspaceInput,
    @Ctx() ctx: Context,
  ): Promise<DeleteWorkspacePayload> {
    const workspace = await visible<Workspace>(ctx, input.id, 'Workspace');
    const result = await deleteWorkspace(ctx.em, ctx.principal!, workspace.id);
    if (!result.deleted) return { deletedWorkspaceId: null, userErrors: result.userErrors };
    const sql = ctx.em.getConnection();
    for (const tokenId of result.tokenIds) {
      ctx.services.auth.forget(tokenId);
      await Notifier.publishAuth(sql, { tokenId }).catch((err: unknown) =>
        ctx.services.logger.warn({ err, tokenId }, 'could not announce a deleted token'),
      );
    }
    await announceToolChange(ctx.services, sql, {
      kind: 'workspace',
      id: workspace.id,
      workspaceId: workspace.id,
    });
    return { deletedWorkspaceId: workspace.nodeId, userErrors: [] };
  }

  @FieldResolver(() => AssistantConnectionPage)
  async assistants(
    @Root() workspace: Workspace,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<Assistant>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.assistantsOfWorkspace.load({ parentId: workspace.id, limit, after });
    return toPage(
      rows,
      limit,
      (a) => a.id,
      () => ctx.loaders.countAssistantsOfWorkspace.load({ parentId: workspace.id }),
    );
  }

  @FieldResolver(() => ConnectionConnection, { description: 'Connections, filtered by status and kind.' })
  async connections(
    @Root() workspace: Workspace,
    @Args(() => ConnectionFilterArgs) args: ConnectionFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<Connection>> {
    const { limit, after } = pageWindow(args);
    const filters = connectionFilters(args);
    const rows = await ctx.loaders.connectionsOfWorkspace.load({
      parentId: workspace.id,
      limit,
      after,
      filters,
    });
    return toPage(
      rows,
      limit,
      (c) => c.id,
      () => ctx.loaders.countConnectionsOfWorkspace.load({ parentId: workspace.id, filters }),
    );
  }

  @FieldResolver(() => OperationConnection, { description: 'Every operation of the workspace, filtered.' })
  async operations(
    @Root() workspace: Workspace,
    @Args(() => OperationFilterArgs) args: OperationFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<Operation>> {
    const { limit, after } = pageWindow(args);
    const filters = operationFilters(args);
    const rows = await ctx.loaders.operationsOfWorkspace.load({
      parentId: workspace.id,
      limit,
      after,
      filters,
    });
    return toPage(
      rows,
      limit,
      (o) => o.id,
      () => ctx.loaders.countOperationsOfWorkspace.load({ parentId: workspace.id, filters }),
    );
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @FieldResolver(() => AuditEventConnection, {
    description: 'Who did what in this workspace, newest first. ADMIN and OPERATOR only.',
  })
  async auditEvents(
    @Root() workspace: Workspace,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<AuditEvent>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.auditEventsOfWorkspace.load({ parentId: workspace.id, limit, after });
    return toPage(rows, limit, (a) => a.id);
  }
}
