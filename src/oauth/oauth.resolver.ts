import { Arg, Authorized, Ctx, Field, Mutation, ObjectType, Resolver } from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { visibleConnection } from '../connections/connection.resolver.js';
import type { Context } from '../graphql/context.js';
import { UserError } from '../graphql/user-error.js';
import { OAuthError } from './errors.js';
import { BeginSignInInput } from './oauth.input.js';

@ObjectType()
export class BeginSignInPayload {
  @Field(() => String, {
    nullable: true,
    description: 'Open this in a browser to sign in. It works once, until expiresAt.',
  })
  authorizationUrl!: string | null;

  @Field(() => Date, { nullable: true })
  expiresAt!: Date | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@Resolver()
export class OAuthResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => BeginSignInPayload, {
    description:
      'Starts an OAuth sign-in (authorization code with PKCE) for an MCP connection. The server is ' +
      'asked how it wants to be signed in to; what the operator can fix comes back in userErrors.',
  })
  async beginSignIn(
    @Arg('input', () => BeginSignInInput) input: BeginSignInInput,
    @Ctx() ctx: Context,
  ): Promise<BeginSignInPayload> {
    const connection = await visibleConnection(ctx, input.connectionId);
    try {
      const result = await ctx.services.oauth.beginSignIn(connection, ctx.principal!, input);
      return { authorizationUrl: result.authorizationUrl, expiresAt: result.expiresAt, userErrors: [] };
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      return {
        authorizationUrl: null,
        expiresAt: null,
        userErrors: [new UserError(err.field ?? ['input'], err.message, err.code)],
      };
    }
  }
}
