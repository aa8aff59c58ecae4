import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { GraphQLJSON } from 'graphql-scalars';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { DiscoveryRun } from '../discovery/discovery-run.entity.js';
import { Node, toGlobalId } from '../graphql/node.js';
import type { JsonValue } from './types.js';
import { ChangeKinds, type ChangeKind, type DiffEntry } from './diff.js';
import { Operation } from './operation.entity.js';

/** What a discovery run did to one operation. */
export enum OperationChangeKind {
  ADDED = 'ADDED',
  UPDATED = 'UPDATED',
  REMOVED = 'REMOVED',
  /** Updated and held back for an admin's review (or added and held). */
  HELD = 'HELD',
}
registerEnumType(OperationChangeKind, { name: 'OperationChangeKind' });
registerEnumType(ChangeKinds, {
  name: 'ChangeKind',
  description: 'What kind of change one diff entry is (src/operations/diff.ts).',
});

@ObjectType('DiffEntry', {
  description:
    'One change of a refresh: where, the value before and after (JSON, bounded, scrubbed; null for absent), and whether it is breaking.',
})
export class DiffEntryType implements DiffEntry {
  @Field(() => String, {
    description: 'Such as `inputSchema.properties.plan.type`, `annotations.readOnlyHint`, `risk`.',
  })
  path!: string;

  @Field(() => ChangeKinds)
  kind!: ChangeKind;

  @Field(() => GraphQLJSON, { nullable: true })
  before!: JsonValue;

  @Field(() => GraphQLJSON, { nullable: true })
  after!: JsonValue;

  @Field(() => Boolean, {
    description:
      'A new required argument, a type changed, an enum narrowed, a property removed, the risk raised, or the endpoint moved.',
  })
  breaking!: boolean;
}

/**
 * One operation in one discovery run: added, updated, removed or held, with the diff for updated
 * and held ones. Kept as long as the run; the operation's link goes when the operation does.
 */
@Entity({ tableName: 'operation_change' })
@Index({ properties: ['run', 'id'] })
@Index({ properties: ['operation', 'id'] })
@ObjectType({ implements: Node })
export class OperationChange extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => DiscoveryRun, { ref: true, deleteRule: 'cascade', fieldName: 'discovery_run_id' })
  run: Ref<DiscoveryRun>;

  @ManyToOne(() => Operation, { ref: true, nullable: true, deleteRule: 'set null' })
  operation: Ref<Operation> | null = null;

  @Field(() => OperationChangeKind)
  @Enum({ items: () => OperationChangeKind, length: 16 })
  kind: OperationChangeKind;

  @Field(() => String, { description: 'The key as it was, kept after the operation is gone.' })
  @Property({ type: 'string', length: 300 })
  operationKey: string;

  @Field(() => String)
  @Property({ type: 'text' })
  operationName: string;

  @Field(() => [DiffEntryType], { description: 'Empty for ADDED and REMOVED.' })
  @Property({ type: 'json' })
  entries: DiffEntry[] & Opt = [];

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(init: {
    run: Ref<DiscoveryRun>;
    operation: Ref<Operation> | null;
    kind: OperationChangeKind;
    operationKey: string;
    operationName: string;
    entries: DiffEntry[];
  }) {
    super();
    this.run = init.run;
    this.operation = init.operation;
    this.kind = init.kind;
    this.operationKey = init.operationKey;
    this.operationName = init.operationName;
    this.entries = init.entries;
  }

  override get nodeId(): string {
    return toGlobalId('OperationChange', this.id);
  }

  @Field(() => Boolean, { description: 'Any entry is breaking.' })
  get breaking(): boolean {
    return this.entries.some((e) => e.breaking);
  }
}
