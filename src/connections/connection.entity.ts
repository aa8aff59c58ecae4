import {
  Entity,
  Enum,
  Index,
  ManyToOne,
  PrimaryKey,
  Property,
  Unique,
  type Opt,
  type Ref,
} from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import type { JsonObject } from '../operations/types.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

export enum ConnectionKind {
  MCP = 'MCP',
  OPENAPI = 'OPENAPI',
}
registerEnumType(ConnectionKind, { name: 'ConnectionKind', description: 'Where the operations come from.' });

export enum ConnectionStatus {
  /** Saved, never discovered successfully. */
  PENDING = 'PENDING',
  /** The last discovery succeeded. */
  READY = 'READY',
  /** The last discovery failed; operations are as the last good discovery left them. */
  FAILED = 'FAILED',
  /** The server asks for an OAuth sign-in (or the sign-in expired and could not be renewed). */
  NEEDS_SIGN_IN = 'NEEDS_SIGN_IN',
}
registerEnumType(ConnectionStatus, { name: 'ConnectionStatus' });

export enum CredentialKind {
  NONE = 'NONE',
  BEARER = 'BEARER',
  HEADER = 'HEADER',
  OAUTH = 'OAUTH',
}
registerEnumType(CredentialKind, { name: 'CredentialKind' });

/** What the API shows of a credential: never the secret itself. */
@ObjectType({ description: 'The visible part of a credential. The secret is never readable.' })
export class CredentialInfo {
  @Field(() => CredentialKind)
  kind!: CredentialKind;

  @Field(() => String, {
    nullable: true,
    description: 'The header the key is sent in; null means Authorization: Bearer.',
  })
  headerName!: string | null;

  @Field(() => String, { nullable: true, description: 'The last 4 characters of the key.' })
  last4!: string | null;

  @Field(() => [String], {
    nullable: true,
    description:
      'BEARER and HEADER: the origins (scheme://host:port) the key was given for; it is never sent anywhere else. Changing where calls go needs the key again.',
  })
  origins!: string[] | null;
}

@Entity({ tableName: 'connection' })
@Unique({ properties: ['workspace', 'slug'] })
@ObjectType({ implements: Node, description: 'A tool source: an MCP server or an OpenAPI description.' })
export class Connection extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Index()
  @ManyToOne(() => Workspace, { ref: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace>;

  @Field(() => ConnectionKind)
  @Enum({ items: () => ConnectionKind })
  kind: ConnectionKind;

  @Field(() => String)
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  name: string;

  @Field(() => String, { description: 'Fixed at creation; feeds operation keys and declared names.' })
  @Property({ type: 'string', length: 64 })
  slug: string;

  @Field(() => String, { nullable: true, description: 'MCP: the Streamable HTTP endpoint.' })
  @Property({ type: 'text', nullable: true })
  endpointUrl: string | null = null;

  @Field(() => String, {
    nullable: true,
    description: 'OpenAPI: the address the description is fetched from.',
  })
  @Property({ type: 'text', nullable: true })
  descriptionUrl: string | null = null;

  /** OpenAPI: the description text, when given as text (at most 5 MiB). */
  @Property({ type: 'text', nullable: true, lazy: true })
  descriptionText: string | null = null;

  @Field(() => Int, { nullable: true, description: 'Size in bytes of a description given as text.' })
  @Property({ type: 'integer', nullable: true })
  descriptionBytes: number | null = null;

  @Field(() => String, { nullable: true, description: 'OpenAPI: base address override (https only).' })
  @Property({ type: 'text', nullable: true })
  baseUrl: string | null = null;

  @Field(() => Int, { nullable: true, description: 'Per-attempt call timeout; null means the 10 s default.' })
  @Property({ type: 'integer', nullable: true })
  timeoutMs: number | null = null;

  @Enum({ items: () => CredentialKind })
  credentialKind: CredentialKind & Opt = CredentialKind.NONE;

  @Property({ type: 'string', length: 128, nullable: true })
  credentialHeaderName: string | null = null;

  @Property({ type: 'string', length: 4, nullable: true })
  credentialLast4: string | null = null;

  /**
   * BEARER and HEADER: the origins the key was given for (see `key-origins.ts`); null without a
   * key. Set only when the key is given.
   */
  @Property({ type: 'json', nullable: true })
  credentialOrigins: string[] | null = null;

  /** AES-256-GCM sealed secret (see connections/secrets.ts). Never exposed. */
  @Property({ type: 'text', nullable: true, hidden: true })
  credentialSecret: string | null = null;

  @Field(() => ConnectionStatus)
  @Enum({ items: () => ConnectionStatus })
  status: ConnectionStatus & Opt = ConnectionStatus.PENDING;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 64, nullable: true })
  protocolVersion: string | null = null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @Property({ type: 'json', nullable: true })
  serverInfo: JsonObject | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  lastDiscoveryAt: Date | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  lastDiscoveryError: string | null = null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Field(() => Date)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date & Opt = new Date();

  constructor(workspace: Ref<Workspace>, kind: ConnectionKind, name: string, slug: string) {
    super();
    this.workspace = workspace;
    this.kind = kind;
    this.name = name;
    this.slug = slug;
  }

  override get nodeId(): string {
    return toGlobalId('Connection', this.id);
  }

  @Field(() => CredentialInfo)
  get credential(): CredentialInfo {
    return {
      kind: this.credentialKind,
      headerName: this.credentialHeaderName,
      last4: this.credentialLast4,
      origins: this.credentialOrigins,
    };
  }
}
