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
import { audit } from '../audit/audit.js';
import type { Context } from '../graphql/context.js';
import { visible } from '../graphql/visible.js';
import { notFound } from '../graphql/errors.js';
import { idOf } from '../graphql/node.js';
import { UserError } from '../graphql/user-error.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { checkName } from '../workspaces/workspace.resolver.js';
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
    const assistant = new Assistant(
      ctx.em.getReference(Workspace, workspace.id, { wrapped: true }),
      input.name.trim(),
    );
    ctx.em.persist(assistant);
    audit(ctx.em, ctx.principal!, {
      workspaceId: workspace.id,
      action: 'CREATE_ASSISTANT',
      targetType: 'Assistant',
      targetId: assistant.nodeId,
      after: { name: assistant.name },
    });
    await ctx.em.flush();
    return { assistant, userErrors: [] };
  }

  @FieldResolver(() => Workspace)
  async workspace(@Root() assistant: Assistant, @Ctx() ctx: Context): Promise<Workspace> {
    return (await ctx.loaders.workspace.load(assistant.workspace.id))!;
  }
}
