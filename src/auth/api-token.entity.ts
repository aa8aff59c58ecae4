import { Entity, Enum, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { isTokenActive } from './token-validity.js';
import { MAX_NAME_CHARS } from '../names.js';

export enum Role {
  ADMIN = 'ADMIN',
  OPERATOR = 'OPERATOR',
  /** Bound to one workspace. */
  CUSTOMER = 'CUSTOMER',
  /** The conversation runtime: opens turns and calls tools. */
  RUNTIME = 'RUNTIME',
  /** An MCP client of one assistant (issue 27): lists and calls that assistant's tools, nothing else. */
  MCP_CLIENT = 'MCP_CLIENT',
}
registerEnumType(Role, { name: 'Role' });

/**
 * An opaque API token, stored as its SHA-256 hash only: the secret is shown once, when it is made,
 * and never again. ADMIN lists, creates and revokes tokens through the API.
 */
@Entity({ tableName: 'api_token' })
@ObjectType({ implements: Node, description: 'An API token. Its secret is shown once, by createApiToken.' })
export class ApiToken extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'string', length: 64, unique: true, hidden: true })
  tokenHash: string;

  @Field(() => Role)
  @Enum({ items: () => Role })
  role: Role;

  /** Resolved by the resolver (`ApiToken.workspace`), through the workspace loader. */
  @ManyToOne(() => Workspace, { ref: true, nullable: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace> | null;

  /** MCP_CLIENT: the one assistant whose tools it may list and call (its workspace is the assistant's). */
  @Property({ type: 'uuid', nullable: true })
  assistantId: string | null = null;

  @Field(() => String)
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  label: string;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Field(() => String, {
    nullable: true,
    description: 'Label of the token that created this one (null: the CLI).',
  })
  @Property({ type: 'string', length: MAX_NAME_CHARS, nullable: true })
  createdBy: string | null = null;

  @Field(() => Date, { nullable: true, description: 'After this instant the token is refused; null: never.' })
  @Property({ type: 'datetime', nullable: true })
  expiresAt: Date | null = null;

  @Field(() => Date, {
    nullable: true,
    description: 'When the token was last accepted (kept to the minute; null: never used).',
  })
  @Property({ type: 'datetime', nullable: true })
  lastUsedAt: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  revokedAt: Date | null = null;

  @Field(() => String, { nullable: true, description: 'Label of the token that revoked this one.' })
  @Property({ type: 'string', length: MAX_NAME_CHARS, nullable: true })
  revokedBy: string | null = null;

  constructor(tokenHash: string, role: Role, workspace: Ref<Workspace> | null, label: string) {
    super();
    this.tokenHash = tokenHash;
    this.role = role;
    this.workspace = workspace;
    this.label = label;
  }

  override get nodeId(): string {
    return toGlobalId('ApiToken', this.id);
  }

  /** Not revoked and not expired at `now` (`token-validity.ts#isTokenActive`). */
  isActive(now: Date): boolean {
    return isTokenActive(this, now);
  }
}
