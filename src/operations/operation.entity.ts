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
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { type JsonObject, type OpenApiBinding, type Risk, RiskLevel } from './types.js';
import { MAX_NAME_CHARS } from '../names.js';

registerEnumType(RiskLevel, {
  name: 'Risk',
  description: 'READ has no side effect; WRITE calls leave a ledger row.',
});

/** One tool of a connection. */
@Entity({ tableName: 'operation' })
@Unique({ properties: ['workspace', 'key'] })
@Unique({ properties: ['connection', 'name'] })
@ObjectType({ implements: Node })
export class Operation extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Workspace, { ref: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace>;

  @Index()
  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade' })
  connection: Ref<Connection>;

  @Field(() => String, { description: '`connector.<connection>.<operation>`, fixed when first found.' })
  @Property({ type: 'string', length: 300 })
  key: string;

  @Field(() => String, { description: 'The bare name that goes on the wire.' })
  @Property({ type: 'text' })
  name: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  title: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Field(() => GraphQLJSONObject)
  @Property({ type: 'json' })
  inputSchema: JsonObject;

  /**
   * What the argument check takes instead of `inputSchema` (OpenAPI: every option of a union,
   * DESIGN.md rule 17); `null` when the check is `inputSchema`. Not exposed: it says nothing the
   * declared schema and the description do not.
   */
  @Property({ type: 'json', nullable: true, lazy: true })
  checkSchema: Opt<JsonObject> | null = null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @Property({ type: 'json', nullable: true })
  annotations: JsonObject | null = null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "MCP: the tool's outputSchema, as listed (scrubbed); null when it has none.",
  })
  @Property({ type: 'json', nullable: true })
  outputSchema: JsonObject | null = null;

  @Field(() => RiskLevel)
  @Enum({ items: () => RiskLevel })
  risk: Risk;

  @Field(() => Boolean, { description: 'The risk was set by an admin and survives refreshes.' })
  @Property({ type: 'boolean' })
  riskSetByAdmin: boolean & Opt = false;

  /** The source's own risk, kept so that clearRisk can hand the risk back. */
  @Field(() => RiskLevel)
  @Enum({ items: () => RiskLevel })
  sourceRisk: Risk;

  @Field(() => Boolean, { description: "The operator's switch." })
  @Property({ type: 'boolean' })
  enabled: boolean;

  @Field(() => String, {
    nullable: true,
    description:
      "Why the operator's switch is off, as given to disable; null while on, and for an operation held for review (see reviewReasons) or added off.",
  })
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Field(() => String, { nullable: true, description: 'Label of the token that disabled it.' })
  @Property({ type: 'string', length: MAX_NAME_CHARS, nullable: true })
  disabledBy: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  disabledAt: Date | null = null;

  @Field(() => Boolean, { description: 'Safe to retry after a timeout (idempotentHint).' })
  @Property({ type: 'boolean' })
  idempotent: boolean & Opt = false;

  @Field(() => Boolean, {
    description:
      'An operator marked it "always declare": when a turn searches its tools (docs/tool-search.md), it is declared up front instead of being found by a search.',
  })
  @Property({ type: 'boolean', default: false })
  alwaysDeclare: boolean & Opt = false;

  @Field(() => Boolean, { description: 'Open review reasons exist; only an admin can enable it.' })
  @Property({ type: 'boolean' })
  needsReview: boolean & Opt = false;

  @Field(() => Boolean, {
    description: 'An admin rejected its last review: it stays off until an ADMIN enables it.',
  })
  @Property({ type: 'boolean' })
  reviewRejected: boolean & Opt = false;

  /** OpenAPI only: how the operation is called. */
  @Property({ type: 'json', nullable: true })
  binding: OpenApiBinding | null = null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Field(() => Date)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date & Opt = new Date();

  constructor(init: {
    workspace: Ref<Workspace>;
    connection: Ref<Connection>;
    key: string;
    name: string;
    inputSchema: JsonObject;
    risk: Risk;
    enabled: boolean;
  }) {
    super();
    this.workspace = init.workspace;
    this.connection = init.connection;
    this.key = init.key;
    this.name = init.name;
    this.inputSchema = init.inputSchema;
    this.risk = init.risk;
    this.sourceRisk = init.risk;
    this.enabled = init.enabled;
  }

  override get nodeId(): string {
    return toGlobalId('Operation', this.id);
  }

  @Field(() => String, { nullable: true, description: 'OpenAPI: the HTTP method.' })
  get method(): string | null {
    return this.binding?.method ?? null;
  }

  @Field(() => String, { nullable: true, description: 'OpenAPI: the path template.' })
  get path(): string | null {
    return this.binding?.path ?? null;
  }

  @Field(() => String, {
    nullable: true,
    description:
      'OpenAPI: the base address calls go to (the path is appended to it), as the last discovery chose it: the baseUrl override, else the operation, path or document servers (the first https one), or the Swagger host.',
  })
  get baseAddress(): string | null {
    return this.binding?.baseUrl ?? null;
  }
}
