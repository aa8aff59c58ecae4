import { Entity, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { GraphQLJSON } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import type { JsonValue } from '../operations/types.js';
import { MAX_NAME_CHARS } from '../names.js';

/** Who did what to which object, and when. Written in the same transaction as the change. */
@Entity({ tableName: 'audit_event' })
@Index({ properties: ['workspaceId', 'id'] })
@ObjectType({ implements: Node })
export class AuditEvent extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'uuid', nullable: true })
  workspaceId: string | null;

  @Field(() => String, { description: 'The token label of who did it.' })
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  actor: string;

  @Field(() => String, {
    description: 'Such as CONNECT, DISCOVER, ENABLE, DISABLE, REVIEW_ENABLE, SET_RISK.',
  })
  @Property({ type: 'string', length: 64 })
  action: string;

  @Field(() => String)
  @Property({ type: 'string', length: 64 })
  targetType: string;

  @Field(() => String, { description: 'The global ID of the target.' })
  @Property({ type: 'string', length: 200 })
  targetId: string;

  @Field(() => GraphQLJSON, { nullable: true })
  @Property({ type: 'json', nullable: true })
  before: JsonValue | null;

  @Field(() => GraphQLJSON, { nullable: true })
  @Property({ type: 'json', nullable: true })
  after: JsonValue | null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(init: Omit<AuditEvent, 'id' | 'createdAt' | 'nodeId'>) {
    super();
    this.workspaceId = init.workspaceId;
    this.actor = init.actor;
    this.action = init.action;
    this.targetType = init.targetType;
    this.targetId = init.targetId;
    this.before = init.before;
    this.after = init.after;
  }

  override get nodeId(): string {
    return toGlobalId('AuditEvent', this.id);
  }
}
