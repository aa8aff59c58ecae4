import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import type { DiffEntry } from './diff.js';
import { DiffEntryType } from './operation-change.entity.js';
import { uuidv7 } from '../db/ids.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Operation } from './operation.entity.js';
import { type ReviewCode, ReviewCodes } from './review-codes.js';
import { MAX_NAME_CHARS } from '../names.js';

registerEnumType(ReviewCodes, {
  name: 'ReviewCode',
  description:
    'Why a refresh turned an operation off, or held a new one. KEY_ORIGIN_NOT_GIVEN and BASE_ADDRESS_UNCALLABLE are holds: the next discovery after the key is given again (or baseUrl is set) resolves them.',
});

/** How an admin decided a review (`approveReview`, `rejectReview`); null for other resolutions. */
export enum ReviewDecision {
  APPROVED = 'APPROVED',
  REJECTED = 'REJECTED',
}
registerEnumType(ReviewDecision, { name: 'ReviewDecision' });

@Entity({ tableName: 'review_reason' })
@Index({ properties: ['operation', 'resolvedAt'] })
@ObjectType({ implements: Node })
export class ReviewReason extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Operation, { ref: true, deleteRule: 'cascade' })
  operation: Ref<Operation>;

  @Field(() => ReviewCodes)
  @Enum({ items: () => ReviewCodes })
  code: ReviewCode;

  @Field(() => String, { description: 'Which arguments, or old → new.' })
  @Property({ type: 'text' })
  detail: string;

  @Field(() => [DiffEntryType], {
    description:
      'What changed, from the operation as it was before the review opened to the last refresh: every open reason of an operation holds the same diff.',
  })
  @Property({ type: 'json' })
  diff: DiffEntry[] & Opt = [];

  @Field(() => ReviewDecision, { nullable: true })
  @Enum({ items: () => ReviewDecision, nullable: true, length: 16 })
  decision: ReviewDecision | null = null;

  @Field(() => String, { nullable: true, description: "The admin's note: why a review was rejected." })
  @Property({ type: 'text', nullable: true })
  note: string | null = null;

  @ManyToOne(() => DiscoveryRun, { ref: true, nullable: true, deleteRule: 'set null' })
  discoveryRun: Ref<DiscoveryRun> | null = null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  resolvedAt: Date | null = null;

  @Field(() => String, { nullable: true, description: 'The admin who resolved it (token label).' })
  @Property({ type: 'string', length: MAX_NAME_CHARS, nullable: true })
  resolvedBy: string | null = null;

  constructor(
    operation: Ref<Operation>,
    code: ReviewCode,
    detail: string,
    run: Ref<DiscoveryRun> | null,
    diff: DiffEntry[] = [],
  ) {
    super();
    this.diff = diff;
    this.operation = operation;
    this.code = code;
    this.detail = detail;
    this.discoveryRun = run;
  }

  override get nodeId(): string {
    return toGlobalId('ReviewReason', this.id);
  }
}
