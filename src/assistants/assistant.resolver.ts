import {
  Arg,
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
import { Role } from '../auth/api-token.entity.js';
import type { Context } from '../graphql/context.js';
import { visible } from '../graphql/visible.js';
import { notFound } from '../graphql/errors.js';
import { idOf } from '../graphql/node.js';
import { UserError } from '../graphql/user-error.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { checkName, createAssistant, deleteAssistant, renameAssistant } from '../workspaces/lifecycle.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { Assistant } from './assistant.entity.js';

@InputType()
export class CreateAssistantInput {
  @Field(() => ID)
  workspaceId!: string;

  @Field(() => String)
  name!: string;
}

@ObjectType()
export class CreateAssistantPayload {
  @Field(() => Assistant, { nullable: true })
  assistant!: Assistant | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class RenameAssistantInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;
}

@InputType()
export class DeleteAssistantInput {
  @Field(() => ID)
  id!: string;
}

@ObjectType()
export class DeleteAssistantPayload {
  @Field(() => ID, { nullable: true, description: 'The deleted assistant, or null when refused.' })
  deletedAssistantId!: string | null;

  @Field(() => [UserError], {
    description: 'HAS_HISTORY: the assistant has recorded turns, which are kept; nothing was deleted.',
  })
  userErrors!: UserError[];
}

@Resolver(() => Assistant)
export class AssistantResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Assistant, {
    nullable: true,
    description: 'By global ID; NOT_FOUND (an error for this field only) when missing or out of scope.',
  })
  async assistant(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Assistant> {
    return visible<Assistant>(ctx, id, 'Assistant');
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CreateAssistantPayload)
  async createAssistant(
    @Arg('input', () => CreateAssistantInput) input: CreateAssistantInput,
    @Ctx() ctx: Context,
  ): Promise<CreateAssistantPayload> {
    const workspace = await ctx.loaders.workspace.load(idOf(input.workspaceId, 'Workspace', 'workspace'));
    if (!workspace) throw notFound('workspace');
    const error = checkName(input.name, ['input', 'name']);
    if (error) return { assistant: null, userErrors: [error] };
    return {
      assistant: await createAssistant(ctx.em, ctx.principal!, workspace.id, input.name.trim()),
      userErrors: [],
    };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CreateAssistantPayload, { description: 'Renames an assistant (audited).' })
  async renameAssistant(
    @Arg('input', () => RenameAssistantInput) input: RenameAssistantInput,
    @Ctx() ctx: Context,
  ): Promise<CreateAssistantPayload> {
    const { id } = await visible<Assistant>(ctx, input.id, 'Assistant');
    const error = checkName(input.name, ['input', 'name']);
    if (error) return { assistant: null, userErrors: [error] };
    return {
      assistant: await renameAssistant(ctx.em, ctx.principal!, id, input.name.trim()),
      userErrors: [],
    };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => DeleteAssistantPayload, {
    description:
      'Deletes an assistant that has no recorded turns, with its connected-tools gates. One with history is refused (HAS_HISTORY).',
  })
  async deleteAssistant(
    @Arg('input', () => DeleteAssistantInput) input: DeleteAssistantInput,
    @Ctx() ctx: Context,
  ): Promise<DeleteAssistantPayload> {
    const assistant = await visible<Assistant>(ctx, input.id, 'Assistant');
    const result = await deleteAssistant(ctx.em, ctx.principal!, assistant.id);
    if (!result.deleted) return { deletedAssistantId: null, userErrors: result.userErrors };
    await announceToolChange(ctx.services, ctx.em.getConnection(), {
      kind: 'assistant',
      id: assistant.id,
      workspaceId: assistant.workspace.id,
    });
    return { deletedAssistantId: assistant.nodeId, userErrors: [] };
  }

  @FieldResolver(() => Workspace)
  async workspace(@Root() assistant: Assistant, @Ctx() ctx: Context): Promise<Workspace> {
    return (await ctx.loaders.workspace.load(assistant.workspace.id))!;
  }
}
