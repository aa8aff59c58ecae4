import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import {
  Arg,
  Args,
  ArgsType,
  Authorized,
  Ctx,
  Field,
  FieldResolver,
  Float,
  ID,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import { Assistant } from '../assistants/assistant.entity.js';
import { setConnectedTools } from '../assistants/connected-tools.js';
import { Role } from '../auth/api-token.entity.js';
import { scopedWorkspace } from '../auth/scope.js';
import { Connection } from '../connections/connection.entity.js';
import { visibleConnection } from '../connections/connection.resolver.js';
import type { Context } from '../graphql/context.js';
import { LedgerFilterArgs, ledgerFilters } from '../graphql/filters.js';
import { visible } from '../graphql/visible.js';
import { badInput, forbidden, unauthenticated } from '../graphql/errors.js';
import { idOf, toGlobalId } from '../graphql/node.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { type Risk, RiskLevel } from '../operations/types.js';
import type { JsonObject } from '../operations/types.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { ConnectionConnection } from '../workspaces/workspace.resolver.js';
import {
  ProgressLineType,
  toProgressLineType,
  toToolResult,
  ToolResultType,
} from './call-details.resolver.js';
import type { TurnEventRecord } from './events.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { CallStatus, TurnCall } from './turn-call.entity.js';
import { TurnEventType } from './turn-event.entity.js';
import { Turn } from './turn.entity.js';
import { toolSearchPayload, ToolSearchInputType, ToolSearchType } from './search/tool-search.graphql.js';
import { forModel } from './dialects/for-model.js';
import { ToolDialectEnum, type ToolDialect } from './dialects/dialect-enum.js';
import type { LeftOutCode } from './dialects/compile.js';
import type { JsonValue } from '../operations/types.js';
import { MAX_NAME_CHARS, nameLengthProblem } from '../names.js';

export const TurnConnection = connectionType('Turn', Turn);
export const TurnCallConnection = connectionType('TurnCall', TurnCall, { totalCount: true });
export const LedgerEntryConnection = connectionType('LedgerEntry', LedgerEntry);

/** The GraphQL shape of a built-in or connection tool as declared to the model. */
@ObjectType('DeclaredTool')
export class DeclaredToolType {
  @Field(() => String, {
    description: 'Matches ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ (every model API takes it); unique in the turn.',
  })
  name!: string;

  @Field(() => String)
  description!: string;

  @Field(() => GraphQLJSONObject, { description: 'The canonical input schema (the same in every dialect).' })
  inputSchema!: JsonObject;

  @Field(() => GraphQLJSONObject, {
    description:
      "The tool exactly as the turn's dialect's request takes it: append it unchanged to that API's tools " +
      '(docs/declaring-tools.md). GENERIC: { name, description, inputSchema }.',
  })
  declaration!: JsonObject;
}

@ObjectType('LeftOutTool', {
  description: "A tool that passes both gates but could not be declared in the turn's dialect, and why.",
})
export class LeftOutToolType {
  @Field(() => String, { description: 'The name it would have been declared under.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'Null for built-ins and finish_turn.' })
  operationKey!: string | null;

  @Field(() => String, {
    description: 'SCHEMA_TOO_LARGE, UNSUPPORTED_SCHEMA, IRREVERSIBLE, RULE_VIOLATION or TOOL_LIMIT.',
  })
  code!: LeftOutCode;

  @Field(() => String)
  reason!: string;
}

@InputType()
export class SetConnectedToolsInput {
  @Field(() => ID)
  assistantId!: string;

  @Field(() => ID)
  connectionId!: string;

  @Field(() => Boolean)
  enabled!: boolean;
}

@ObjectType()
export class SetConnectedToolsPayload {
  @Field(() => Assistant, { nullable: true })
  assistant!: Assistant | null;

  @Field(() => Boolean, { description: 'False when the gate already was as asked.' })
  changed!: boolean;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class BeginTurnInput {
  @Field(() => ID)
  assistantId!: string;

  @Field(() => String, { description: "The runtime's own conversation id (1–200 characters)." })
  conversationId!: string;

  @Field(() => ToolDialectEnum, {
    defaultValue: 'GENERIC',
    description:
      'The model API the tools are declared for; callTool then takes arguments and shapes results for it.',
  })
  dialect!: ToolDialect;

  @Field(() => ToolSearchInputType, {
    nullable: true,
    description: 'Tool search for assistants with many tools (docs/tool-search.md); default mode AUTO.',
  })
  toolSearch?: ToolSearchInputType | null;
}

@ObjectType()
export class BeginTurnPayload {
  @Field(() => ID)
  turnId!: string;

  @Field(() => [DeclaredToolType], {
    description: 'Built-ins first, connection tools next, finish_turn last.',
  })
  tools!: DeclaredToolType[];

  @Field(() => [LeftOutToolType], {
    description:
      "Callable tools that the dialect's API would refuse, left out of tools (never sent broken), with why.",
  })
  leftOut!: LeftOutToolType[];

  @Field(() => ToolSearchType, {
    description: 'Whether this turn searches its tools (docs/tool-search.md).',
  })
  toolSearch!: ToolSearchType;
}

@InputType()
export class CallToolInput {
  @Field(() => ID)
  turnId!: string;

  @Field(() => String, { description: 'The declared name the model called.' })
  name!: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  arguments?: JsonObject | null;
}

@ObjectType({
  description: 'What the model reads. Failures are results too: ok is false and message says why.',
})
export class CallToolPayload {
  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => CallStatus)
  status!: CallStatus;

  @Field(() => [GraphQLJSONObject], { description: 'MCP-style content items.' })
  content!: JsonObject[];

  @Field(() => GraphQLJSONObject, { nullable: true })
  structuredContent!: JsonObject | null;

  @Field(() => String, { nullable: true, description: 'For failures: written for the model.' })
  message!: string | null;

  @Field(() => Boolean, { description: 'The result was cut to the size limit.' })
  truncated!: boolean;

  @Field(() => ID, { nullable: true })
  callId!: string | null;

  @Field(() => Int, { nullable: true })
  seq!: number | null;

  @Field(() => Boolean, {
    description:
      'True when the call is on record (its TurnCall and, for a WRITE, its ledger row) before this answer. ' +
      'False when the platform could not store the record, for example while its database is down: the ' +
      "result is still the tool's real result, and callId (when given) is the id its record will have. " +
      'A WRITE is sent only after its ledger intent is stored, so a WRITE that ran always has a ledger entry; ' +
      'its outcome is retried in the background, or closed as OUTCOME_UNKNOWN by the ledger sweep (docs/' +
      'ledger.md). Also false for calls refused without any record (the turn has finished, the tools ' +
      'could not be read).',
  })
  recorded!: boolean;

  @Field(() => Int, { description: 'Attempts at the call: 0, 1, or 2 after the one retry.' })
  attempts!: number;

  @Field(() => Int, {
    description: 'Refused requests sent again (new session, renewed token); not attempts.',
  })
  resends!: number;

  @Field(() => Int)
  durationMs!: number;

  @Field(() => GraphQLJSON, {
    description:
      "The result as the turn's dialect's next request takes it: OPENAI(_STRICT) the tool message's content (a string); " +
      "ANTHROPIC a tool_result's content blocks; GEMINI(_JSON_SCHEMA) functionResponse.response (an object); GENERIC " +
      "{ content, structuredContent?, isError }. Within the dialect's size budget.",
  })
  forModel!: JsonValue;
  @Field(() => Int, {
    nullable: true,
    description:
      'RATE_LIMITED, or UNAVAILABLE from an open circuit breaker: about when trying again may work, in ms (docs/limits.md, "Limits and breakers").',
  })
  retryAfterMs?: number | null;
}

@InputType()
export class FinishTurnInput {
  @Field(() => ID)
  turnId!: string;
}

@ObjectType()
export class FinishTurnPayload {
  @Field(() => Boolean, { description: 'False when the turn had already finished.' })
  finished!: boolean;
}

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
      'TURN_STARTED: tools left out of the declared list, with why (the first 100; Turn.leftOut has all).',
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

function toEvent(e: TurnEventRecord): TurnEventType_ {
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

async function visibleAssistant(ctx: Context, globalId: string): Promise<Assistant> {
  return visible<Assistant>(ctx, globalId, 'Assistant');
}

@Resolver(() => Turn)
export class TurnResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Mutation(() => SetConnectedToolsPayload, {
    description: "The customer's gate: a connection's tools on or off for one assistant.",
  })
  async setConnectedTools(
    @Arg('input', () => SetConnectedToolsInput) input: SetConnectedToolsInput,
    @Ctx() ctx: Context,
  ): Promise<SetConnectedToolsPayload> {
    const assistant = await visibleAssistant(ctx, input.assistantId);
    const connection = await visibleConnection(ctx, input.connectionId);
    if (connection.workspace.id !== assistant.workspace.id) {
      return {
        assistant: null,
        changed: false,
        userErrors: [
          new UserError(
            ['input', 'connectionId'],
            'the connection belongs to another workspace than the assistant',
            'WORKSPACE_MISMATCH',
          ),
        ],
      };
    }
    const changed = await setConnectedTools(
      ctx.services,
      ctx.em,
      ctx.principal!,
      assistant,
      connection,
      input.enabled,
    );
    return { assistant, changed, userErrors: [] };
  }

  @Authorized(Role.RUNTIME)
  @Mutation(() => BeginTurnPayload, {
    description: 'Opens a turn: the tools to declare to the model, from the cache.',
  })
  async beginTurn(
    @Arg('input', () => BeginTurnInput) input: BeginTurnInput,
    @Ctx() ctx: Context,
  ): Promise<BeginTurnPayload> {
    const conversationId = input.conversationId.trim();
    if (nameLengthProblem(conversationId) !== null)
      throw badInput(`conversationId must be 1–${MAX_NAME_CHARS} characters`);
    const result = await ctx.services.turns.begin(
      ctx.principal!,
      idOf(input.assistantId, 'Assistant', 'assistant'),
      conversationId,
      input.dialect ?? 'GENERIC',
      input.toolSearch ?? null,
    );
    return {
      turnId: toGlobalId('Turn', result.turnId),
      tools: result.tools,
      leftOut: result.leftOut,
      toolSearch: toolSearchPayload(result.toolSearch),
    };
  }

  @Authorized(Role.RUNTIME)
  @Mutation(() => CallToolPayload, {
    description: 'Calls a declared tool. Never an error for an upstream problem: read ok and message.',
  })
  async callTool(
    @Arg('input', () => CallToolInput) input: CallToolInput,
    @Ctx() ctx: Context,
  ): Promise<CallToolPayload> {
    const budgets = ctx.services.config.forModelMaxChars;
    const result = await ctx.services.turns.call(
      ctx.principal!,
      idOf(input.turnId, 'Turn', 'turn'),
      input.name,
      input.arguments ?? {},
      ctx.trace ?? null,
    );
    return {
      ok: result.ok,
      status: result.status,
      content: result.content as JsonObject[],
      structuredContent: result.structuredContent,
      message: result.message,
      truncated: result.truncated,
      callId: result.callId ? toGlobalId('TurnCall', result.callId) : null,
      seq: result.seq,
      recorded: result.recorded,
      attempts: result.attempts,
      resends: result.resends,
      durationMs: result.durationMs,
      // Shaped only when asked for.
      get forModel(): JsonValue {
        return forModel(result.dialect, result, budgets);
      },
      retryAfterMs: result.retryAfterMs ?? null,
    };
  }

  @Authorized(Role.RUNTIME)
  @Mutation(() => FinishTurnPayload)
  async finishTurn(
    @Arg('input', () => FinishTurnInput) input: FinishTurnInput,
    @Ctx() ctx: Context,
  ): Promise<FinishTurnPayload> {
    return { finished: await ctx.services.turns.finish(ctx.principal!, idOf(input.turnId, 'Turn', 'turn')) };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Turn, {
    nullable: true,
    description: 'By global ID; NOT_FOUND (an error for this field only) when missing or out of scope.',
  })
  async turn(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Turn> {
    return visible<Turn>(ctx, id, 'Turn');
  }

  @FieldResolver(() => TurnCallConnection, { description: 'The calls, in order.' })
  async calls(
    @Root() turn: Turn,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<TurnCall>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.callsOfTurn.load({ parentId: turn.id, limit, after });
    return toPage(
      rows,
      limit,
      (c) => c.id,
      () => ctx.loaders.countCallsOfTurn.load({ parentId: turn.id }),
    );
  }

  @FieldResolver(() => [String], { description: 'The tool names declared to the model, in order.' })
  async declaredToolNames(@Root() turn: Turn, @Ctx() ctx: Context): Promise<string[]> {
    const tools = await ctx.loaders.declaredToolList.load({
      workspaceId: turn.workspace.id,
      digest: turn.declaredToolsDigest,
    });
    return tools.filter((t) => !t.leftOut).map((t) => t.name);
  }

  @FieldResolver(() => [LeftOutToolType], {
    description: "Tools that passed both gates but were left out of the turn's dialect, with why.",
  })
  async leftOut(@Root() turn: Turn, @Ctx() ctx: Context): Promise<LeftOutToolType[]> {
    const tools = await ctx.loaders.declaredToolList.load({
      workspaceId: turn.workspace.id,
      digest: turn.declaredToolsDigest,
    });
    return tools.flatMap((t) =>
      t.leftOut
        ? [{ name: t.name, operationKey: t.operationKey, code: t.leftOut.code, reason: t.leftOut.reason }]
        : [],
    );
  }

  @FieldResolver(() => Assistant)
  async assistant(@Root() turn: Turn, @Ctx() ctx: Context): Promise<Assistant> {
    return (await ctx.loaders.assistant.load(turn.assistant.id))!;
  }

  @Subscription(() => TurnEventType_, {
    description:
      'The live turn debugger: TURN_STARTED, CALL_STARTED, CALL_PROGRESS, CALL_FINISHED, TURN_FINISHED, scoped to your workspace.',
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      const principal = ctx.principal;
      if (!principal) throw unauthenticated();
      if (principal.role === Role.RUNTIME) throw forbidden('the runtime does not subscribe to the debugger');
      const a = args as TurnEventsArgs;
      const scope = scopedWorkspace(principal);
      let assistantId: string | null = null;
      if (a.assistantId) assistantId = (await visibleAssistant(ctx, a.assistantId)).id;
      else if (scope !== null)
        throw forbidden('a customer subscribes to one of its assistants: give assistantId');
      const events = ctx.services.turnEvents.subscribe(
        { workspaceId: scope, assistantId, conversationId: a.conversationId ?? null },
        a.afterSeq ?? null,
      );
      // Not an async generator: its return() could not run while it waits for the next event, and
      // a closed socket would leave the subscriber behind.
      const mapped: AsyncIterableIterator<TurnEventType_> = {
        next: async () => {
          const r = await events.next();
          return r.done ? { done: true, value: undefined } : { done: false, value: toEvent(r.value) };
        },
        return: async () => {
          await events.return?.();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
      return mapped;
    },
  })
  turnEvents(
    @Root() event: TurnEventType_,
    @Args(() => TurnEventsArgs) _args: TurnEventsArgs,
  ): TurnEventType_ {
    return event;
  }
}

@Resolver(() => Assistant)
export class AssistantTurnsResolver {
  @FieldResolver(() => ConnectionConnection, {
    description: 'Connections whose tools the customer enabled on this assistant.',
  })
  async connectedTools(
    @Root() assistant: Assistant,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<Connection>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.connectedToolsOfAssistant.load({ parentId: assistant.id, limit, after });
    return toPage(
      rows,
      limit,
      (c) => c.id,
      () => ctx.loaders.countConnectedToolsOfAssistant.load({ parentId: assistant.id }),
    );
  }

  @FieldResolver(() => TurnConnection, { description: 'Turns, newest first.' })
  async turns(
    @Root() assistant: Assistant,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<Turn>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.turnsOfAssistant.load({ parentId: assistant.id, limit, after });
    return toPage(rows, limit, (t) => t.id);
  }
}

@Resolver(() => Workspace)
export class WorkspaceLedgerResolver {
  @FieldResolver(() => LedgerEntryConnection, {
    description: 'Side-effecting calls, newest first, filtered by operation, status and time. Append-only.',
  })
  async ledger(
    @Root() workspace: Workspace,
    @Args(() => LedgerFilterArgs) args: LedgerFilterArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<LedgerEntry>> {
    const { limit, after } = pageWindow(args);
    const filters = ledgerFilters(args);
    const rows = await ctx.loaders.ledgerOfWorkspace.load({ parentId: workspace.id, limit, after, filters });
    return toPage(rows, limit, (l) => l.id);
  }
}
