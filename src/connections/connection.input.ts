import { Field, ID, InputType, Int } from 'type-graphql';
import { ConnectionKind, CredentialKind } from './connection.entity.js';

@InputType({ description: 'A credential: none, a bearer key, or a key in a header you name.' })
export class CredentialInput {
  @Field(() => CredentialKind, { description: 'NONE, BEARER or HEADER. OAuth is set up with beginSignIn.' })
  kind!: CredentialKind;

  @Field(() => String, { nullable: true, description: 'The secret key; write-only.' })
  key?: string | null;

  @Field(() => String, { nullable: true, description: 'HEADER only: letters, digits and hyphens.' })
  headerName?: string | null;
}

@InputType()
export class CreateConnectionInput {
  @Field(() => ID)
  workspaceId!: string;

  @Field(() => ConnectionKind)
  kind!: ConnectionKind;

  @Field(() => String)
  name!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Defaults to the name in snake_case. Fixed after creation.',
  })
  slug?: string | null;

  @Field(() => String, { nullable: true, description: 'MCP: the Streamable HTTP endpoint.' })
  endpointUrl?: string | null;

  @Field(() => String, { nullable: true, description: 'OPENAPI: where to fetch the description.' })
  descriptionUrl?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'OPENAPI: the description itself, JSON or YAML, at most 5 MiB.',
  })
  descriptionText?: string | null;

  @Field(() => String, { nullable: true, description: 'OPENAPI: base address override; https:// only.' })
  baseUrl?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Per-attempt call timeout in ms (100…60000); default 10000.',
  })
  timeoutMs?: number | null;

  @Field(() => CredentialInput, { nullable: true })
  credential?: CredentialInput | null;
}

@InputType({ description: 'Only the fields given are changed. Kind and slug are fixed.' })
export class UpdateConnectionInput {
  @Field(() => ID)
  connectionId!: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  endpointUrl?: string | null;

  @Field(() => String, { nullable: true })
  descriptionUrl?: string | null;

  @Field(() => String, { nullable: true })
  descriptionText?: string | null;

  @Field(() => String, { nullable: true, description: 'An empty string clears the override.' })
  baseUrl?: string | null;

  @Field(() => Int, { nullable: true })
  timeoutMs?: number | null;

  @Field(() => CredentialInput, { nullable: true, description: 'Replaces the credential.' })
  credential?: CredentialInput | null;
}

@InputType()
export class DeleteConnectionInput {
  @Field(() => ID)
  connectionId!: string;
}
