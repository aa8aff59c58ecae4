import { Field, ID, InputType } from 'type-graphql';

@InputType({ description: 'Starts an OAuth sign-in for an MCP connection whose server asks for one.' })
export class BeginSignInInput {
  @Field(() => ID)
  connectionId!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'A client id registered with the authorization server, for servers without dynamic registration. ' +
      'Omitted: a client registered before is reused, or one is registered now.',
  })
  clientId?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The client secret, if any; write-only, stored encrypted.',
  })
  clientSecret?: string | null;
}
