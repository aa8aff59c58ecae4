/**
 * API tokens through the API: list, create (the secret is in the payload once) and revoke. ADMIN
 * sees and revokes every token; a CUSTOMER only its own workspace's MCP_CLIENT tokens (another
 * workspace's is as unknown as a missing one). A revocation reaches every instance through NOTIFY:
 * each drops the token from its cache and closes the token's open WebSockets and MCP streams (see
 * AuthService.forget).
 */
import {
  Arg,
  Args,
  ArgsType,
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
import { LockMode } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import { Notifier } from '../db/notifier.js';
import type { Context } from '../graphql/context.js';
import { forbidden, notFound } from '../graphql/errors.js';
import { fromGlobalId, idOf, toGlobalId } from '../graphql/node.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { MAX_NAME_CHARS } from '../names.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { ApiToken, Role } from './api-token.entity.js';
import type { Principal } from './principal.js';
import { scopedWorkspace } from './scope.js';
import { mintToken, TokenInputError } from './auth.service.js';

export const ApiTokenConnection = connectionType('ApiToken', ApiToken, { totalCount: true });

@ArgsType()
export class ApiTokenFilterArgs extends PageArgsType {
  @Field(() => Boolean, { nullable: true, description: 'Include revoked tokens (default false).' })
  includeRevoked?: boolean | null;

  @Field(() => Role, { nullable: true })
  role?: Role | null;

  @Field(() => ID, { nullable: true, description: 'Only tokens bound to this workspace.' })
  workspaceId?: string | null;
}

@InputType()
export class CreateApiTokenInput {
  @Field(() => Role)
  role!: Role;

  @Field(() => String, {
    description: `Who or what holds it, such as "acme dashboard". At most ${MAX_NAME_CHARS} characters.`,
  })
  label!: string;

  @Field(() => ID, {
    nullable: true,
    description:
      'Required for CUSTOMER, optional for RUNTIME (binds it to one workspace), refused for ADMIN and OPERATOR.',
  })
  workspaceId?: string | null;

  @Field(() => ID, {
    nullable: true,
    description:
      'Required for MCP_CLIENT (the assistant whose tools it lists and calls through /mcp/{assistantId}; its workspace comes with it), refused for every other role.',
  })
  assistantId?: string | null;

  @Field(() => Date, { nullable: true, description: 'Optional expiry, in the future. Null: never expires.' })
  expiresAt?: Date | null;
}

@ObjectType()
export class CreateApiTokenPayload {
  @Field(() => ApiToken, { nullable: true })
  apiToken!: ApiToken | null;

  @Field(() => String, {
    nullable: true,
    description: 'The token itself, for Authorization: Bearer. Shown this once: only its hash is kept.',
  })
  secret!: string | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class RevokeApiTokenInput {
  @Field(() => ID)
  id!: string;
}

@ObjectType()
export class RevokeApiTokenPayload {
  @Field(() => ApiToken, { nullable: true })
  apiToken!: ApiToken | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@Resolver(() => ApiToken)
export class ApiTokenResolver {
  @Authorized(Role.ADMIN, Role.CUSTOMER)
  @Query(() => ApiTokenConnection, {
    description:
      "API tokens, oldest first. ADMIN: every token. CUSTOMER: its own workspace's MCP_CLIENT tokens only.",
  })
  async apiTokens(
    @Args(() => ApiTokenFilterArgs) args: ApiTokenFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<ApiToken>> {
    const { limit, after } = pageWindow(args);
    const where: Record<string, unknown> = {};
    if (!args.includeRevoked) where.revokedAt = null;
    if (args.role) where.role = args.role;
    if (args.workspaceId) where.workspace = idOf(args.workspaceId, 'Workspace', 'workspace');
    const own = customerScope(ctx.principal!);
    if (own !== null) {
      // Filters narrow, never widen: another role or workspace asked for lists nothing.
      if ((args.role && args.role !== Role.MCP_CLIENT) || (where.workspace && where.workspace !== own))
        return toPage(
          [],
          limit,
          (t: ApiToken) => t.id,
          () => Promise.resolve(0),
        );
      where.role = Role.MCP_CLIENT;
      where.workspace = own;
    }
    const all = { ...where };
    if (after) where.id = { $gt: after };
    const rows = await ctx.em.find(ApiToken, where, { orderBy: { id: 'asc' }, limit: limit + 1 });
    return toPage(
      rows,
      limit,
      (t) => t.id,
      () => ctx.em.count(ApiToken, all),
    );
  }

  @FieldResolver(() => Workspace, { nullable: true, description: 'The workspace the token is bound to.' })
  async workspace(@Root() token: ApiToken, @Ctx() ctx: Context): Promise<Workspace | null> {
    return token.workspace ? ctx.loaders.workspace.load(token.workspace.id) : null;
  }

  @FieldResolver(() => ID, {
    nullable: true,
    description: 'MCP_CLIENT: the assistant whose tools it lists and calls (its GraphQL ID).',
  })
  assistantId(@Root() token: ApiToken): string | null {
    return token.assistantId ? toGlobalId('Assistant', token.assistantId) : null;
  }

  @FieldResolver(() => Boolean, { description: 'Neither revoked nor expired.' })
  active(@Root() token: ApiToken): boolean {
    return token.isActive(new Date());
  }

  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Mutation(() => CreateApiTokenPayload, {
    description:
      'ADMIN mints any token. OPERATOR, and a CUSTOMER for an assistant of its own workspace, mint MCP_CLIENT tokens only.',
  })
  async createApiToken(
    @Arg('input', () => CreateApiTokenInput) input: CreateApiTokenInput,
    @Ctx() ctx: Context,
  ): Promise<CreateApiTokenPayload> {
    const principal = ctx.principal!;
    if (principal.role !== Role.ADMIN && input.role !== Role.MCP_CLIENT)
      throw forbidden(`a ${principal.role} token may create MCP_CLIENT tokens only`);
    let assistantId: string | null = null;
    if (input.assistantId) {
      const parsed = fromGlobalId(input.assistantId);
      if (parsed?.type !== 'Assistant')
        return fail(['input', 'assistantId'], 'is not an assistant ID', 'ASSISTANT_NOT_FOUND');
      assistantId = parsed.id;
    }
    let workspaceId: string | null = null;
    if (input.workspaceId) {
      const parsed = fromGlobalId(input.workspaceId);
      if (parsed?.type !== 'Workspace') {
        return fail(['input', 'workspaceId'], 'is not a workspace ID', 'WORKSPACE_NOT_FOUND');
      }
      workspaceId = parsed.id;
    }
    if (input.label.trim() === '') return fail(['input', 'label'], 'must not be empty', 'REQUIRED');
    // A CUSTOMER's token is of its own workspace: another workspace's assistant is not found.
    const scope = scopedWorkspace(principal);
    if (scope !== null) {
      if (workspaceId !== null && workspaceId !== scope)
        return fail(
          ['input', 'workspaceId'],
          `workspace ${input.workspaceId} does not exist`,
          'WORKSPACE_NOT_FOUND',
        );
      workspaceId = scope;
    }
    try {
      const { token, row } = await ctx.em.transactional(async (em) => {
        const minted = await mintToken(em, {
          role: input.role,
          workspaceId,
          assistantId,
          label: input.label,
          expiresAt: input.expiresAt ?? null,
          createdBy: principal.label,
        });
        audit(em, principal, {
          workspaceId: minted.row.workspace?.id ?? null,
          action: 'CREATE_API_TOKEN',
          targetType: 'ApiToken',
          targetId: minted.row.nodeId,
          after: {
            role: minted.row.role,
            label: minted.row.label,
            assistantId: minted.row.assistantId,
            expiresAt: minted.row.expiresAt?.toISOString() ?? null,
          },
        });
        return minted;
      });
      return { apiToken: row, secret: token, userErrors: [] };
    } catch (err) {
      if (err instanceof TokenInputError) return fail(['input', err.field], err.message, err.code);
      throw err;
    }
  }

  @Authorized(Role.ADMIN, Role.CUSTOMER)
  @Mutation(() => RevokeApiTokenPayload, {
    description:
      "Revokes a token on every instance within a second: requests with it get 401, its open WebSockets close with 4403 and its MCP streams end. Revoking a revoked token changes nothing. ADMIN: any token. CUSTOMER: its own workspace's MCP_CLIENT tokens (any other is NOT_FOUND).",
  })
  async revokeApiToken(
    @Arg('input', () => RevokeApiTokenInput) input: RevokeApiTokenInput,
    @Ctx() ctx: Context,
  ): Promise<RevokeApiTokenPayload> {
    const id = idOf(input.id, 'ApiToken', 'API token');
    const principal = ctx.principal!;
    const row = await ctx.em.transactional(async (em) => {
      const own = customerScope(principal);
      const where = own === null ? { id } : { id, role: Role.MCP_CLIENT, workspace: own };
      const token = await em.findOne(ApiToken, where, { lockMode: LockMode.PESSIMISTIC_WRITE });
      // Another workspace's token, or one of another role, is as unknown as a missing one.
      if (!token) throw notFound('API token');
      if (token.revokedAt !== null) return token;
      token.revokedAt = new Date();
      token.revokedBy = principal.label;
      audit(em, principal, {
        workspaceId: token.workspace?.id ?? null,
        action: 'REVOKE_API_TOKEN',
        targetType: 'ApiToken',
        targetId: token.nodeId,
        before: { label: token.label, role: token.role },
      });
      await em.flush();
      return token;
    });
    // This instance forgets it at once; the others when the NOTIFY arrives (or, should it fail to
    // go out, when their cached lookup ends, PRINCIPAL_CACHE_TTL_MS at most).
    ctx.services.auth.forget(row.id);
    await Notifier.publishAuth(ctx.em.getConnection(), { tokenId: row.id }).catch((err: unknown) =>
      ctx.services.logger.warn({ err, tokenId: row.id }, 'could not announce a token revocation'),
    );
    return { apiToken: row, userErrors: [] };
  }
}

/** A CUSTOMER's workspace: the only one whose (MCP_CLIENT) tokens it sees; null for ADMIN. */
function customerScope(principal: Principal): string | null {
  if (principal.role !== Role.CUSTOMER) return null;
  // A CUSTOMER token always has its workspace (mintToken); without one it would see nothing.
  return principal.workspaceId ?? '00000000-0000-0000-0000-000000000000';
}

function fail(field: string[], message: string, code: string): CreateApiTokenPayload {
  return { apiToken: null, secret: null, userErrors: [new UserError(field, message, code)] };
}
