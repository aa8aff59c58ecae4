import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import type { JsonObject } from '../operations/types.js';
import { MAX_NAME_CHARS } from '../names.js';

export enum DiscoveryTrigger {
  CONNECT = 'CONNECT',
  REDISCOVER = 'REDISCOVER',
  SIGN_IN = 'SIGN_IN',
}
registerEnumType(DiscoveryTrigger, { name: 'DiscoveryTrigger' });

export enum DiscoveryOutcome {
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}
registerEnumType(DiscoveryOutcome, { name: 'DiscoveryOutcome' });

@ObjectType({ description: 'A tool or operation that discovery did not take, and why.' })
export class SkippedItem {
  @Field(() => String, { description: 'Tool name, operation name or `METHOD /path`.' })
  name!: string;

  @Field(() => String, {
    description: 'A stable code such as LIMIT, DEPRECATED, UNSUPPORTED_BODY, INVALID_SCHEMA.',
  })
  reason!: string;

  @Field(() => String, { nullable: true })
  detail?: string | null;
}

/** One connect or re-discover of one connection. */
@Entity({ tableName: 'discovery_run' })
@Index({ properties: ['connection', 'id'] })
@ObjectType({ implements: Node })
export class DiscoveryRun extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade' })
  connection: Ref<Connection>;

  @Field(() => DiscoveryTrigger)
  @Enum({ items: () => DiscoveryTrigger })
  trigger: DiscoveryTrigger;

  @Field(() => String, { description: 'Who started it (token label).' })
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  actor: string;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  startedAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  finishedAt: Date | null = null;

  @Field(() => DiscoveryOutcome)
  @Enum({ items: () => DiscoveryOutcome })
  outcome: DiscoveryOutcome & Opt = DiscoveryOutcome.RUNNING;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 64, nullable: true })
  errorCode: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  errorMessage: string | null = null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  added: number & Opt = 0;

  @Field(() => Int)
  @Property({ type: 'integer' })
  removed: number & Opt = 0;

  @Field(() => Int)
  @Property({ type: 'integer' })
  updated: number & Opt = 0;

  @Field(() => Int)
  @Property({ type: 'integer' })
  flagged: number & Opt = 0;

  @Field(() => [SkippedItem])
  @Property({ type: 'json' })
  skipped: SkippedItem[] & Opt = [];

  @Field(() => [String], { description: 'Non-fatal notes, such as why a tool list stopped early.' })
  @Property({ type: 'json' })
  diagnostics: string[] & Opt = [];

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 64, nullable: true })
  protocolVersion: string | null = null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @Property({ type: 'json', nullable: true })
  serverInfo: JsonObject | null = null;

  @Field(() => Boolean, {
    description:
      'True when the source, and everything else the conversion depends on, was as the last successful run read it, and no operation had changed since: nothing was converted or written.',
  })
  @Property({ type: 'boolean' })
  unchanged: boolean & Opt = false;

  /**
   * Of a successful run: the keyed digest of what its listing came from (`fingerprint.ts`). A later
   * run with the same fingerprint, finding the operations as this run left them, skips the work.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  fingerprint: string | null = null;

  /** Of a successful run: the operations' stamp (`operationsStamp`) as the run left them. */
  @Property({ type: 'string', length: 32, nullable: true })
  operationsStamp: string | null = null;

  /** The instance running it (Notifier.instanceId): a run of a dead instance is closed at start. */
  @Property({ type: 'string', length: 64, nullable: true })
  instanceId: string | null = null;

  constructor(connection: Ref<Connection>, trigger: DiscoveryTrigger, actor: string) {
    super();
    this.connection = connection;
    this.trigger = trigger;
    this.actor = actor;
  }

  override get nodeId(): string {
    return toGlobalId('DiscoveryRun', this.id);
  }
}
