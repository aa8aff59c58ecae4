import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Operation } from '../operations/operation.entity.js';
import { type JsonObject, type Risk, RiskLevel } from '../operations/types.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { Turn } from './turn.entity.js';
import { CallStatus } from './call-status.js';

export { CallStatus };
registerEnumType(CallStatus, {
  name: 'CallStatus',
  valuesConfig: {
    RATE_LIMITED: {
      description:
        'A rate limit or concurrency cap refused the call: nothing was sent. retryAfterMs says when to try again. See docs/limits.md, "Limits and breakers".',
    },
    OUTCOME_UNKNOWN: {
      description:
        'Records only: a WRITE that may have reached the tool server, whose outcome was never stored. See docs/ledger.md.',
    },
  },
});

/**
 * One tool call in a turn. History outlives a deleted operation: the key is kept as a string.
 * Partitioned by day of its id (UUIDv7) and without foreign keys in the database: see migration
 * 20261201110000 and src/db/partitions.ts.
 */
@Entity({ tableName: 'turn_call' })
@Index({ properties: ['turn', 'seq'] })
@ObjectType({ implements: Node })
export class TurnCall extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Turn, { ref: true, deleteRule: 'cascade' })
  turn: Ref<Turn>;

  @ManyToOne(() => Workspace, { ref: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace>;

  @Field(() => Int, { description: 'Order within the turn, from 1.' })
  @Property({ type: 'integer' })
  seq: number;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 300, nullable: true })
  operationKey: string | null;

  @ManyToOne(() => Operation, { ref: true, nullable: true, deleteRule: 'set null' })
  operation: Ref<Operation> | null;

  @Field(() => String, { description: 'The name the model called.' })
  @Property({ type: 'string', length: 200 })
  declaredName: string;

  @Field(() => GraphQLJSONObject, {
    description:
      "The canonical arguments: what was checked and sent to the tool server (the model's own, mapped back from the turn's dialect).",
  })
  @Property({ type: 'json' })
  arguments: JsonObject;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "The arguments exactly as the model wrote them, when the turn's dialect mapping changed them (renamed properties, strict-mode nulls, JSON text); null when they are the canonical ones.",
  })
  @Property({ type: 'json', nullable: true })
  modelArguments: JsonObject | null = null;

  @Field(() => CallStatus)
  @Enum({ items: () => CallStatus })
  status: CallStatus & Opt = CallStatus.RUNNING;

  @Field(() => String, { nullable: true, description: 'What the model was told, for failures.' })
  @Property({ type: 'text', nullable: true })
  message: string | null = null;

  @Field(() => Int, {
    description:
      'Attempts at the call: 0 (stopped before any request), 1, or 2 after the one retry. A re-send of a request the server refused without acting is not an attempt: see resends.',
  })
  @Property({ type: 'integer' })
  attempts: number & Opt = 0;

  @Field(() => Int, {
    description:
      'Requests sent again because the server refused them without acting: a new MCP session after 400/404, or a renewed OAuth token after 401.',
  })
  @Property({ type: 'integer' })
  resends: number & Opt = 0;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  durationMs: number | null = null;

  @Field(() => RiskLevel, { nullable: true })
  @Enum({ items: () => RiskLevel, nullable: true })
  risk: Risk | null;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  startedAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  finishedAt: Date | null = null;

  @Field(() => String, {
    nullable: true,
    description:
      'The W3C traceparent the runtime sent with this call (validated), passed on to the tool server.',
  })
  @Property({ type: 'string', length: 256, nullable: true })
  traceparent: string | null = null;

  @Field(() => String, {
    nullable: true,
    description: 'The W3C tracestate sent with the traceparent, if any.',
  })
  @Property({ type: 'string', length: 512, nullable: true })
  tracestate: string | null = null;

  constructor(init: {
    turn: Ref<Turn>;
    workspace: Ref<Workspace>;
    seq: number;
    declaredName: string;
    arguments: JsonObject;
    operation: Ref<Operation> | null;
    operationKey: string | null;
    risk: Risk | null;
  }) {
    super();
    this.turn = init.turn;
    this.workspace = init.workspace;
    this.seq = init.seq;
    this.declaredName = init.declaredName;
    this.arguments = init.arguments;
    this.operation = init.operation;
    this.operationKey = init.operationKey;
    this.risk = init.risk;
  }

  override get nodeId(): string {
    return toGlobalId('TurnCall', this.id);
  }
}
