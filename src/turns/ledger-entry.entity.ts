import { Entity, Enum, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import type { JsonObject } from '../operations/types.js';
import { CallStatus } from './turn-call.entity.js';

/**
 * Append-only record of a side-effecting (WRITE) call, whatever its outcome. A trigger refuses
 * UPDATE and DELETE. It holds plain ids rather than foreign keys, so that deleting an operation
 * or connection never needs to touch it.
 *
 * Since the ledger-outcome migration a row is the call's *intent*, written with status RUNNING
 * before the request goes out; its outcome is a `ledger_outcome` row (see LedgerEntryResolver,
 * which shows the two as one entry). Older rows carry their final status themselves.
 */
@Entity({ tableName: 'ledger_entry' })
@Index({ properties: ['workspaceId', 'id'] })
@ObjectType({ implements: Node })
export class LedgerEntry extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'uuid' })
  workspaceId: string;

  @Property({ type: 'uuid' })
  assistantId: string;

  @Property({ type: 'uuid' })
  turnId: string;

  @Property({ type: 'uuid' })
  turnCallId: string;

  @Field(() => ID, {
    name: 'turnCallId',
    description: 'The TurnCall this entry belongs to (also given to the runtime as callTool.callId).',
  })
  get turnCallNodeId(): string {
    return toGlobalId('TurnCall', this.turnCallId);
  }

  @Property({ type: 'uuid', nullable: true })
  connectionId: string | null;

  @Property({ type: 'uuid', nullable: true })
  operationId: string | null;

  @Field(() => String)
  @Property({ type: 'string', length: 300 })
  operationKey: string;

  @Field(() => GraphQLJSONObject)
  @Property({ type: 'json' })
  arguments: JsonObject;

  /** As written with the row: RUNNING for an intent; the final status on rows older than intents. */
  @Enum({ items: () => CallStatus })
  status: CallStatus;

  @Property({ type: 'integer' })
  attempts: number;

  @Property({ type: 'text', nullable: true })
  message: string | null;

  @Field(() => Int, { nullable: true, description: "The call's seq within its turn." })
  @Property({ type: 'integer', nullable: true })
  callSeq: number | null = null;

  @Field(() => String, { nullable: true, description: 'The name the model called.' })
  @Property({ type: 'string', length: 200, nullable: true })
  declaredName: string | null = null;

  @Field(() => Date, { description: 'When the intent was written, before the request went out.' })
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(
    init: Omit<LedgerEntry, 'id' | 'createdAt' | 'nodeId' | 'turnCallNodeId' | 'callSeq' | 'declaredName'>,
  ) {
    super();
    this.workspaceId = init.workspaceId;
    this.assistantId = init.assistantId;
    this.turnId = init.turnId;
    this.turnCallId = init.turnCallId;
    this.connectionId = init.connectionId;
    this.operationId = init.operationId;
    this.operationKey = init.operationKey;
    this.arguments = init.arguments;
    this.status = init.status;
    this.attempts = init.attempts;
    this.message = init.message;
  }

  override get nodeId(): string {
    return toGlobalId('LedgerEntry', this.id);
  }
}
