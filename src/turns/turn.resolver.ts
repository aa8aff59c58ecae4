import {
  Arg,
  Args,
  Authorized,
  Ctx,
  FieldResolver,
  ID,
  Mutation,
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
import type { JsonObject } from '../operations/types.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { ConnectionConnection } from '../workspaces/workspace.resolver.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { TurnCall } from './turn-call.entity.js';
import { Turn } from './turn.entity.js';
import { toolSearchPayload } from './search/tool-search.graphql.js';
import { forModel } from './dialects/for-model.js';
import type { JsonValue } from '../operations/types.js';
import { MAX_NAME_CHARS, nameLengthProblem } from '../names.js';
import {
  BeginTurnInput,
  BeginTurnPayload,
  CallToolInput,
  CallToolPayload,
  FinishTurnInput,
  FinishTurnPayload,
  LeftOutToolType,
  SetConnectedToolsInput,
  SetConnectedToolsPayload,
} from './turn.input.js';
import { toEvent, TurnEventsArgs, TurnEventType_ } from './turn-event.types.js';

export const TurnConnection = connectionType('Turn', Turn);
export const TurnCallConnection = connectionType('TurnCall', TurnCall, { totalCount: true });
export const LedgerEntryConnection = connectionType('LedgerEntry', LedgerEntry);

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
