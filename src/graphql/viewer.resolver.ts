import { Arg, Authorized, Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { canSeeWorkspace } from '../auth/scope.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import type { Context } from './context.js';
import { badInput, notFound } from './errors.js';
import { fromGlobalId, Node } from './node.js';
import { MAX_PAGE_SIZE } from './relay.js';
import { loadNode } from './node-loader.js';

@ObjectType({ description: 'Who the token belongs to.' })
export class Viewer {
  @Field(() => Role)
  role!: Role;

  @Field(() => String)
  label!: string;

  // RUNTIME sees only what its three mutations need (DESIGN.md rule 16): not its workspace.
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Field(() => Workspace, { nullable: true, description: 'The workspace a CUSTOMER token is bound to.' })
  workspace!: Workspace | null;
}

@Resolver()
export class ViewerResolver {
  @Authorized()
  @Query(() => Viewer)
  async viewer(@Ctx() ctx: Context): Promise<Viewer> {
    const p = ctx.principal!;
    const workspace =
      p.workspaceId && p.role !== Role.RUNTIME ? await ctx.loaders.workspace.load(p.workspaceId) : null;
    return { role: p.role, label: p.label, workspace };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Node, { nullable: true, description: 'Any object by its global ID.' })
  async node(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Node> {
    const parsed = fromGlobalId(id);
    if (!parsed) throw notFound('node');
    const found = await loadNode(ctx, parsed.type, parsed.id);
    if (!found || !canSeeWorkspace(ctx.principal!, found.workspaceId)) throw notFound('node');
    return found.node;
  }

  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => [Node], {
    nullable: 'items',
    description:
      'Objects by global ID, in the order asked (at most 100). A missing or out-of-scope one is null with a NOT_FOUND error at its index; the others are still answered.',
  })
  async nodes(@Arg('ids', () => [ID]) ids: string[], @Ctx() ctx: Context): Promise<(Node | Error)[]> {
    if (ids.length > MAX_PAGE_SIZE) throw badInput(`"ids" may hold at most ${MAX_PAGE_SIZE} IDs`);
    return Promise.all(
      ids.map(async (id) => {
        const parsed = fromGlobalId(id);
        if (!parsed) return notFound('node');
        const found = await loadNode(ctx, parsed.type, parsed.id);
        if (!found || !canSeeWorkspace(ctx.principal!, found.workspaceId)) return notFound('node');
        return found.node;
      }),
    );
  }
}
