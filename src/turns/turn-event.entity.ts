import { BigIntType, Entity, Enum, Index, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { registerEnumType } from 'type-graphql';
import type { JsonObject } from '../operations/types.js';
import { MAX_NAME_CHARS } from '../names.js';

export enum TurnEventType {
  TURN_STARTED = 'TURN_STARTED',
  CALL_STARTED = 'CALL_STARTED',
  /** A tool server's progress or log notification during a call (bounded per call). */
  CALL_PROGRESS = 'CALL_PROGRESS',
  CALL_FINISHED = 'CALL_FINISHED',
  TURN_FINISHED = 'TURN_FINISHED',
}
registerEnumType(TurnEventType, { name: 'TurnEventType' });

/**
 * The debugger's event log. `seq` is global and increasing, so a subscriber resumes with
 * `afterSeq` by replaying from here, and NOTIFY only has to carry the seq.
 */
@Entity({ tableName: 'turn_event' })
@Index({ properties: ['workspaceId', 'seq'] })
@Index({ properties: ['callId'] })
export class TurnEvent {
  @PrimaryKey({ type: new BigIntType('number'), autoincrement: true })
  seq!: number;

  @Property({ type: 'uuid' })
  workspaceId: string;

  @Property({ type: 'uuid' })
  assistantId: string;

  @Property({ type: 'string', length: MAX_NAME_CHARS })
  conversationId: string;

  @Property({ type: 'uuid' })
  turnId: string;

  @Property({ type: 'uuid', nullable: true })
  callId: string | null;

  @Enum({ items: () => TurnEventType })
  type: TurnEventType;

  @Property({ type: 'json' })
  payload: JsonObject;

  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(init: Omit<TurnEvent, 'seq' | 'createdAt'>) {
    this.workspaceId = init.workspaceId;
    this.assistantId = init.assistantId;
    this.conversationId = init.conversationId;
    this.turnId = init.turnId;
    this.callId = init.callId;
    this.type = init.type;
    this.payload = init.payload;
  }
}
