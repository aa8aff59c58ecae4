/**
 * What the debugger shows of a call beyond its status: the result as the model received it, and
 * what the tool server said while it ran. Live on `TurnEvent.call`, and for later reading on
 * `TurnCall`, read from the call's CALL_FINISHED event (one statement per page of calls).
 *
 * Who sees it: whoever sees the call. A CUSTOMER sees its own workspace's calls (arguments and
 * results included); OPERATOR and ADMIN see every workspace's (DESIGN.md rule 16). Everything an
 * upstream controls was scrubbed of the connection's secrets before the model got it (rule 15).
 */
import DataLoader from 'dataloader';
import { GraphQLJSONObject } from 'graphql-scalars';
import {
  Ctx,
  Field,
  FieldResolver,
  Float,
  Int,
  ObjectType,
  registerEnumType,
  Resolver,
  Root,
} from 'type-graphql';
import { uuidv7Time } from '../db/ids.js';
import { DAY_MS } from '../db/partitions.js';
import type { Context } from '../graphql/context.js';
import type { JsonObject } from '../operations/types.js';
import { TurnCall } from './turn-call.entity.js';
import { isObject } from '../operations/types.js';

export enum ProgressKindType {
  /** `notifications/progress` for this call's progress token. */
  PROGRESS = 'PROGRESS',
  /** `notifications/message`: the server's log. */
  LOG = 'LOG',
}
registerEnumType(ProgressKindType, { name: 'ProgressKind' });

@ObjectType('ProgressLine', { description: 'Something the tool server said while a call ran.' })
export class ProgressLineType {
  @Field(() => ProgressKindType)
  kind!: ProgressKindType;

  @Field(() => Int, { description: 'Milliseconds after the call started.' })
  atMs!: number;

  @Field(() => Float, { nullable: true, description: 'PROGRESS: how far.' })
  progress!: number | null;

  @Field(() => Float, { nullable: true, description: 'PROGRESS: out of how much, when known.' })
  total!: number | null;

  @Field(() => String, { nullable: true, description: 'LOG: the level (debug … emergency).' })
  level!: string | null;

  @Field(() => String, { nullable: true, description: 'Scrubbed of secrets and cut to 300 characters.' })
  message!: string | null;
}

@ObjectType('ToolResult', {
  description: 'A result as the model received it: scrubbed of secrets and capped like every result.',
})
export class ToolResultType {
  @Field(() => [GraphQLJSONObject], { description: 'MCP-style content items.' })
  content!: JsonObject[];

  @Field(() => GraphQLJSONObject, { nullable: true })
  structuredContent!: JsonObject | null;

  @Field(() => Boolean, { description: 'The result was cut to the size limit.' })
  truncated!: boolean;
}

/** A stored result payload as the GraphQL type; null when absent (a call recorded before 0.2). */
export function toToolResult(value: unknown): ToolResultType | null {
  // Stored JSON, read field by field: each is checked before it is used.
  if (!isObject(value) || !Array.isArray(value.content)) return null;
  const content: unknown[] = value.content;
  return {
    content: content.filter(isObject) as JsonObject[],
    structuredContent: isObject(value.structuredContent) ? (value.structuredContent as JsonObject) : null,
    truncated: value.truncated === true,
  };
}

export function toProgressLineType(value: unknown): ProgressLineType | null {
  if (!isObject(value)) return null;
  const l = value;
  if (l.kind !== 'PROGRESS' && l.kind !== 'LOG') return null;
  return {
    kind: l.kind === 'LOG' ? ProgressKindType.LOG : ProgressKindType.PROGRESS,
    atMs: typeof l.atMs === 'number' ? l.atMs : 0,
    progress: typeof l.progress === 'number' ? l.progress : null,
    total: typeof l.total === 'number' ? l.total : null,
    level: typeof l.level === 'string' ? l.level : null,
    message: typeof l.message === 'string' ? l.message : null,
  };
}

function toProgress(value: unknown): { lines: ProgressLineType[]; dropped: number } {
  if (!isObject(value)) return { lines: [], dropped: 0 };
  const r = value;
  const lines = Array.isArray(r.lines)
    ? (r.lines as unknown[]).map(toProgressLineType).filter((l): l is ProgressLineType => l !== null)
    : [];
  return { lines, dropped: typeof r.dropped === 'number' ? r.dropped : 0 };
}

/** Per request: the CALL_FINISHED payloads of many calls in one statement. */
const loaders = new WeakMap<Context, DataLoader<string, JsonObject | null>>();

function finishedPayloads(ctx: Context): DataLoader<string, JsonObject | null> {
  let loader = loaders.get(ctx);
  if (!loader) {
    loader = new DataLoader<string, JsonObject | null>(async (ids) => {
      // A call finishes after it starts, and its id (UUIDv7) says when it started: bounding
      // created_at keeps the read to the daily partitions of turn_event from then on (a day's
      // margin for the clocks of the service and the database).
      const starts = ids.map(uuidv7Time);
      const since = starts.every((t) => t !== null) ? Math.min(...starts) - DAY_MS : null;
      const rows = await ctx.em
        .getConnection()
        .execute<{ call_id: string; payload: JsonObject }[]>(
          `select call_id, payload from turn_event where type = 'CALL_FINISHED' and call_id in (${ids.map(() => '?').join(', ')})${since === null ? '' : ' and created_at >= ?'}`,
          since === null ? [...ids] : [...ids, new Date(since)],
        );
      const byCall = new Map(rows.map((r) => [r.call_id, r.payload]));
      return ids.map((id) => byCall.get(id) ?? null);
    });
    loaders.set(ctx, loader);
  }
  return loader;
}

@Resolver(() => TurnCall)
export class TurnCallDetailsResolver {
  @FieldResolver(() => ToolResultType, {
    nullable: true,
    description: 'The result as the model received it (content and structuredContent).',
  })
  async result(@Root() call: TurnCall, @Ctx() ctx: Context): Promise<ToolResultType | null> {
    return toToolResult((await finishedPayloads(ctx).load(call.id))?.result);
  }

  @FieldResolver(() => [ProgressLineType], {
    description: "The tool server's progress and log lines during the call: the last 50, oldest first.",
  })
  async progress(@Root() call: TurnCall, @Ctx() ctx: Context): Promise<ProgressLineType[]> {
    return toProgress((await finishedPayloads(ctx).load(call.id))?.progress).lines;
  }

  @FieldResolver(() => Int, { description: 'Progress and log lines received but not kept (over 50).' })
  async progressDropped(@Root() call: TurnCall, @Ctx() ctx: Context): Promise<number> {
    return toProgress((await finishedPayloads(ctx).load(call.id))?.progress).dropped;
  }
}
