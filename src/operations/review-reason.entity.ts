import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Operation } from './operation.entity.js';

export enum ReviewCode {
  RISK_RAISED = 'RISK_RAISED',
  ARGUMENTS_ADDED = 'ARGUMENTS_ADDED',
  ARGUMENTS_UNDESCRIBED = 'ARGUMENTS_UNDESCRIBED',
  ENDPOINT_CHANGED = 'ENDPOINT_CHANGED',
  /** Calls would go to an origin the connection's key was not given for (`connections/key-origins.ts`). */
  KEY_ORIGIN_NOT_GIVEN = 'KEY_ORIGIN_NOT_GIVEN',
  /** The description offers no base address that can be called; an admin sets `baseUrl`. */
  BASE_ADDRESS_UNCALLABLE = 'BASE_ADDRESS_UNCALLABLE',
}
registerEnumType(ReviewCode, {
  name: 'ReviewCode',
  description:
    'Why a refresh turned an operation off, or held a new one. KEY_ORIGIN_NOT_GIVEN and BASE_ADDRESS_UNCALLABLE are holds: the next discovery after the key is given again (or baseUrl is set) resolves them.',
});

@Entity({ tableName: 'review_reason' })
@Index({ properties: ['operation', 'resolvedAt'] })
@ObjectType({ implements: Node })
export class ReviewReason extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Operation, { ref: true, deleteRule: 'cascade' })
  operation: Ref<Operation>;

  @Field(() => ReviewCode)
  @Enum({ items: () => ReviewCode })
  code: ReviewCode;

  @Field(() => String, { description: 'Which arguments, or old → new.' })
  @Property({ type: 'text' })
  detail: string;

  @ManyToOne(() => DiscoveryRun, { ref: true, nullable: true, deleteRule: 'set null' })
  discoveryRun: Ref<DiscoveryRun> | null = null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  resolvedAt: Date | null = null;

  @Field(() => String, { nullable: true, description: 'The admin who resolved it (token label).' })
  @Property({ type: 'string', length: 200, nullable: true })
  resolvedBy: string | null = null;

  constructor(operation: Ref<Operation>, code: ReviewCode, detail: string, run: Ref<DiscoveryRun> | null) {
    super();
    this.operation = operation;
    this.code = code;
    this.detail = detail;
    this.discoveryRun = run;
  }

  override get nodeId(): string {
    return toGlobalId('ReviewReason', this.id);
  }
}
