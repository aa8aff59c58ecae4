/**
 * The live turn debugger's event as GraphQL shows it, and the mapping from a stored or live event.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { toGlobalId } from '../graphql/node.js';
import { type Risk, RiskLevel } from '../operations/types.js';
import type { JsonObject } from '../operations/types.js';
import {
  ProgressLineType,
  toProgressLineType,
  toToolResult,
  ToolResultType,
} from './call-details.resolver.js';
import type { TurnEventRecord } from './events.js';
import { CallStatus } from './turn-call.entity.js';
import { TurnEventType } from './turn-event.entity.js';
import { ToolDialectEnum, type ToolDialect } from './dialects/dialect-enum.js';
import { LeftOutToolType } from './turn.input.js';

@ObjectType({ description: 'A call as the debugger shows it.' })
export class TurnEventCall {
  @Field(() => Int)
  seq!: number;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  operationKey!: string | null;

  @Field(() => RiskLevel, { nullable: true })
  risk!: Risk | null;

  @Field(() => CallStatus, { nullable: true })
  status!: CallStatus | null;

  @Field(() => Int, { nullable: true })
  durationMs!: number | null;

  @Field(() => Int, { nullable: true })
  attempts!: number | null;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "CALL_STARTED: the model's arguments (null when too large for an event: read TurnCall).",
  })
  arguments!: JsonObject | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "CALL_STARTED: the arguments exactly as the model wrote them, when the turn's dialect mapping changed them (arguments are then the canonical ones).",
  })
  modelArguments!: JsonObject | null;

  @Field(() => ToolResultType, {
    nullable: true,
    description: 'CALL_FINISHED: the result as the model received it.',
  })
  result!: ToolResultType | null;

  @Field(() => ProgressLineType, {
    nullable: true,
    description: 'CALL_PROGRESS: what the tool server just said (progress or log).',
  })
  progress!: ProgressLineType | null;
}

@ObjectType('TurnEvent', { description: 'One event of the live turn debugger.' })
export class TurnEventType_ {
  @Field(() => Float, { description: 'Global, increasing: resume with afterSeq.' })
  seq!: number;

  @Field(() => TurnEventType)
  type!: TurnEventType;

  @Field(() => ID)
  turnId!: string;

  @Field(() => ID)
  assistantId!: string;

  @Field(() => String)
  conversationId!: string;

  @Field(() => TurnEventCall, { nullable: true })
  call!: TurnEventCall | null;

  @Field(() => ToolDialectEnum, {
    nullable: true,
    description: 'TURN_STARTED: the dialect the tools were declared for.',
  })
  dialect!: ToolDialect | null;

  @Field(() => [LeftOutToolType], {
    nullable: true,
    description:
      'TURN_STARTED: tools left out of the declared list, with why (the first 10; Turn.leftOut has all).',
  })
  leftOut!: LeftOutToolType[] | null;

  @Field(() => Date)
  at!: Date;
}

@ArgsType()
export class TurnEventsArgs {
  @Field(() => ID, { nullable: true, description: 'Required for customers.' })
  assistantId?: string | null;

  @Field(() => String, { nullable: true })
  conversationId?: string | null;

  @Field(() => Float, { nullable: true, description: 'Replay stored events after this seq first.' })
  afterSeq?: number | null;
}

export function toEvent(e: TurnEventRecord): TurnEventType_ {
  const p = e.payload as Record<string, unknown>;
  const call =
    e.type === TurnEventType.CALL_STARTED ||
    e.type === TurnEventType.CALL_FINISHED ||
    e.type === TurnEventType.CALL_PROGRESS
      ? {
          seq: Number(p.seq),
          name: typeof p.name === 'string' ? p.name : '',
          operationKey: (p.operationKey as string | null) ?? null,
          risk: (p.risk as Risk | null) ?? null,
          status:
            (p.status as CallStatus | undefined) ??
            (e.type === TurnEventType.CALL_FINISHED ? null : CallStatus.RUNNING),
          durationMs: (p.durationMs as number | undefined) ?? null,
          attempts: (p.attempts as number | undefined) ?? null,
          message: (p.message as string | null | undefined) ?? null,
          arguments: jsonObjectOrNull(p.arguments),
          modelArguments: jsonObjectOrNull(p.modelArguments),
          result: toToolResult(p.result),
          progress: toProgressLineType(p.progress),
        }
      : null;
  return {
    seq: e.seq,
    type: e.type,
    turnId: toGlobalId('Turn', e.turnId),
    assistantId: toGlobalId('Assistant', e.assistantId),
    conversationId: e.conversationId,
    call,
    dialect:
      e.type === TurnEventType.TURN_STARTED
        ? typeof p.dialect === 'string' && p.dialect in ToolDialectEnum
          ? (p.dialect as ToolDialect)
          : 'GENERIC'
        : null,
    leftOut:
      e.type === TurnEventType.TURN_STARTED
        ? Array.isArray(p.leftOut)
          ? (p.leftOut as LeftOutToolType[]).filter((t) => typeof t === 'object' && t !== null)
          : []
        : null,
    at: e.createdAt,
  };
}

function jsonObjectOrNull(v: unknown): JsonObject | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : null;
}
