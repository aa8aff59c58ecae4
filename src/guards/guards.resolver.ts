/**
 * Rate limits, concurrency caps and circuit breakers in the API (issue 29): `setCallLimit`,
 * `setCallCap` and `setBreaker`, and the `callLimits` / `callLimit`, `callCap` and `breaker` fields
 * of Connection and Operation. Their GraphQL types and input checks are in guards.input.ts. Every
 * change is audited in its own statement or transaction; every instance hears it by NOTIFY
 * (store.ts, cap-store.ts). Reads come from this instance's memory of them (`CallGuard`, which
 * keeps caps in cap-slots.ts and limits in rate-limits.ts): no statement per row.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Arg, Authorized, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import { audit } from '../audit/audit.js';
import { Role } from '../auth/api-token.entity.js';
import { scopedWorkspace } from '../auth/scope.js';
import { Connection } from '../connections/connection.entity.js';
import { visibleConnection } from '../connections/connection.resolver.js';
import type { SqlRunner } from '../db/notifier.js';
import { forbiddenError } from '../errors.js';
import type { Context } from '../graphql/context.js';
import { idOf, toGlobalId } from '../graphql/node.js';
import { UserError } from '../graphql/user-error.js';
import { Operation } from '../operations/operation.entity.js';
import { visibleOperation } from '../operations/operation.resolver.js';
import { onByDefault, type BreakerRecord, type BreakerScope } from './breaker.js';
import type { LimitScope } from './bucket.js';
import { LimitStore, type LimitRecord } from './store.js';
import { DEFAULT_CAP_WAIT_MS, MAX_CAP_WAIT_MS, MAX_IN_FLIGHT } from './cap.js';
import { CapStore, type CapRecord } from './cap-store.js';
import {
  Breaker,
  BreakerForceValue,
  BreakerPayload,
  BreakerStateValue,
  CallCap,
  CallCapPayload,
  CallLimit,
  CallLimitPayload,
  LimitPeriod,
  LimitScopeValue,
  MAX_LIMIT_CALLS,
  PERIOD_MS,
  SetBreakerInput,
  SetCallCapInput,
  SetCallLimitInput,
} from './guards.input.js';

function breakerView(scope: BreakerScope, record: BreakerRecord | undefined): Breaker {
  return {
    state: (record?.state ?? 'CLOSED') as BreakerStateValue,
    enabled: record?.enabled ?? onByDefault(scope),
    forced: (record?.forced ?? null) as BreakerForceValue | null,
    openedAt: record?.openedAt ?? null,
    reason: record?.reason ?? null,
    retryAt: record?.state === 'OPEN' && record.retryAtMs !== null ? new Date(record.retryAtMs) : null,
  };
}

function limitView(limit: LimitRecord): CallLimit {
  return {
    scope: limit.scope as LimitScopeValue,
    calls: limit.calls,
    per: limit.periodMs === 1_000 ? LimitPeriod.SECOND : LimitPeriod.MINUTE,
    burst: limit.burst,
    workspaceId: limit.forWorkspaceId ? toGlobalId('Workspace', limit.forWorkspaceId) : null,
    operationId: limit.operationId ? toGlobalId('Operation', limit.operationId) : null,
  };
}

function capView(cap: CapRecord): CallCap {
  return {
    scope: cap.scope as LimitScopeValue,
    maxInFlight: cap.maxInFlight,
    maxWaitMs: cap.maxWaitMs,
    operationId: cap.operationId ? toGlobalId('Operation', cap.operationId) : null,
  };
}

/** The transaction's connection as a SqlRunner (raw SQL inside `em.transactional`). */
function txSql(tx: EntityManager): SqlRunner {
  return {
    execute: (sql, params) =>
      tx.getConnection().execute(sql, params ?? [], 'all', tx.getTransactionContext()),
  };
}

function problem(field: string, message: string, code: string): UserError {
  return new UserError(['input', field], message, code);
}

/** A limit or cap is set on one connection or one operation: a problem unless exactly one is given. */
function targetProblem(input: {
  connectionId?: string | null;
  operationId?: string | null;
}): UserError | null {
  if ((input.connectionId ? 1 : 0) + (input.operationId ? 1 : 0) === 1) return null;
  return problem('connectionId', 'give connectionId or operationId', 'TARGET_INVALID');
}

/** The connection or operation a limit or cap is set on (one of them, `targetProblem` checked), as the caller may see it. */
async function guardTarget(
  ctx: Context,
  input: { connectionId?: string | null; operationId?: string | null },
): Promise<{
  connectionId: string;
  operationId: string | null;
  scope: 'OPERATION' | 'CONNECTION';
  workspaceOfTarget: string;
  targetType: 'Connection' | 'Operation';
  targetId: string;
}> {
  if (input.operationId) {
    const op = await visibleOperation(ctx, input.operationId);
    return {
      connectionId: op.connection.id,
      operationId: op.id,
      scope: 'OPERATION',
      workspaceOfTarget: op.workspace.id,
      targetType: 'Operation',
      targetId: op.nodeId,
    };
  }
  const connection = await visibleConnection(ctx, input.connectionId!);
  return {
    connectionId: connection.id,
    operationId: null,
    scope: 'CONNECTION',
    workspaceOfTarget: connection.workspace.id,
    targetType: 'Connection',
    targetId: toGlobalId('Connection', connection.id),
  };
}

@Resolver()
export class GuardsResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CallLimitPayload, {
    description:
      'Sets or removes a rate limit on an operation, a connection, or (ADMIN) one workspace on a connection. A call over it is RATE_LIMITED, recorded, and not sent.',
  })
  async setCallLimit(
    @Arg('input', () => SetCallLimitInput) input: SetCallLimitInput,
    @Ctx() ctx: Context,
  ): Promise<CallLimitPayload> {
    const invalid = targetProblem(input);
    if (invalid !== null) return { callLimit: null, userErrors: [invalid] };
    if (input.workspaceId && !input.connectionId)
      return {
        callLimit: null,
        userErrors: [problem('workspaceId', 'goes with connectionId', 'TARGET_INVALID')],
      };
    if (input.workspaceId && ctx.principal!.role !== Role.ADMIN)
      throw forbiddenError('only an ADMIN sets a limit for a whole workspace');
    const { connectionId, operationId, workspaceOfTarget, targetType, targetId, ...target } =
      await guardTarget(ctx, input);
    let forWorkspaceId: string | null = null;
    let scope: LimitScope = target.scope;
    if (input.workspaceId) {
      forWorkspaceId = idOf(input.workspaceId, 'Workspace', 'workspace');
      scope = 'WORKSPACE';
    }
    let spec: { calls: number; periodMs: number; burst: number } | null = null;
    if (input.calls !== null && input.calls !== undefined) {
      const calls = input.calls;
      if (!Number.isInteger(calls) || calls < 1 || calls > MAX_LIMIT_CALLS)
        return { callLimit: null, userErrors: [problem('calls', 'must be 1–1,000,000', 'LIMIT_INVALID')] };
      const burst = input.burst ?? Math.max(1, Math.floor(calls / 10));
      if (!Number.isInteger(burst) || burst < 1 || burst > calls)
        return { callLimit: null, userErrors: [problem('burst', 'must be 1–calls', 'LIMIT_INVALID')] };
      spec = { calls, periodMs: PERIOD_MS[input.per ?? LimitPeriod.MINUTE], burst };
    }
    const now = ctx.services.guard.clock();
    const stored = await ctx.em.fork().transactional(async (tx) => {
      const limit = await LimitStore.set(
        txSql(tx),
        { scope, connectionId, operationId, forWorkspaceId },
        spec,
        now,
      );
      audit(tx, ctx.principal!, {
        workspaceId: workspaceOfTarget,
        action: 'SET_CALL_LIMIT',
        targetType,
        targetId,
        after: {
          scope,
          workspaceId: forWorkspaceId ? toGlobalId('Workspace', forWorkspaceId) : null,
          calls: spec?.calls ?? null,
          periodMs: spec?.periodMs ?? null,
          burst: spec?.burst ?? null,
        },
      });
      return limit;
    });
    await ctx.services.guard.refreshLimits(connectionId);
    return { callLimit: spec !== null && stored !== null ? limitView(stored) : null, userErrors: [] };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => CallCapPayload, {
    description:
      'Sets or removes a concurrency cap on an operation or a connection: the most calls in flight at once, across every instance. A call over it waits in line up to maxWaitMs, then is RATE_LIMITED, recorded, and not sent.',
  })
  async setCallCap(
    @Arg('input', () => SetCallCapInput) input: SetCallCapInput,
    @Ctx() ctx: Context,
  ): Promise<CallCapPayload> {
    const invalid = targetProblem(input);
    if (invalid !== null) return { callCap: null, userErrors: [invalid] };
    const { connectionId, operationId, scope, workspaceOfTarget, targetType, targetId } = await guardTarget(
      ctx,
      input,
    );
    let spec: { maxInFlight: number; maxWaitMs: number } | null = null;
    if (input.maxInFlight !== null && input.maxInFlight !== undefined) {
      const maxInFlight = input.maxInFlight;
      if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT)
        return {
          callCap: null,
          userErrors: [problem('maxInFlight', 'must be 1–10,000', 'LIMIT_INVALID')],
        };
      const maxWaitMs = input.maxWaitMs ?? DEFAULT_CAP_WAIT_MS;
      if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_CAP_WAIT_MS)
        return {
          callCap: null,
          userErrors: [problem('maxWaitMs', `must be 0–${MAX_CAP_WAIT_MS}`, 'LIMIT_INVALID')],
        };
      spec = { maxInFlight, maxWaitMs };
    }
    const stored = await ctx.em.fork().transactional(async (tx) => {
      const cap = await CapStore.set(txSql(tx), { scope, connectionId, operationId }, spec);
      audit(tx, ctx.principal!, {
        workspaceId: workspaceOfTarget,
        action: 'SET_CALL_CAP',
        targetType,
        targetId,
        after: { scope, maxInFlight: spec?.maxInFlight ?? null, maxWaitMs: spec?.maxWaitMs ?? null },
      });
      return cap;
    });
    await ctx.services.guard.refreshCaps(connectionId);
    return { callCap: spec !== null && stored !== null ? capView(stored) : null, userErrors: [] };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => BreakerPayload, {
    description:
      "Forces a circuit breaker open or closed, lifts the force, or switches it on or off. A breaker never changes the operator's switch (enable/disable), nor does this.",
  })
  async setBreaker(
    @Arg('input', () => SetBreakerInput) input: SetBreakerInput,
    @Ctx() ctx: Context,
  ): Promise<BreakerPayload> {
    if ((input.connectionId ? 1 : 0) + (input.operationId ? 1 : 0) !== 1)
      return {
        breaker: null,
        userErrors: [problem('connectionId', 'give connectionId or operationId', 'TARGET_INVALID')],
      };
    const scope: BreakerScope = input.operationId ? 'OPERATION' : 'CONNECTION';
    const id = input.operationId
      ? (await visibleOperation(ctx, input.operationId)).id
      : (await visibleConnection(ctx, input.connectionId!)).id;
    const guard = ctx.services.guard;
    const current = guard.breaker(id);
    const enabled = input.enabled ?? current?.enabled ?? onByDefault(scope);
    const stored = await guard.breakerStore.set(
      scope,
      id,
      enabled,
      input.force ?? null,
      ctx.principal!.label,
    );
    if (stored !== null) guard.remember(stored);
    return { breaker: breakerView(scope, stored ?? undefined), userErrors: [] };
  }
}

@Resolver(() => Connection)
export class ConnectionGuardsResolver {
  @FieldResolver(() => Breaker, { description: "The connection's circuit breaker." })
  breaker(@Root() connection: Connection, @Ctx() ctx: Context): Breaker {
    return breakerView('CONNECTION', ctx.services.guard.breaker(connection.id));
  }

  @FieldResolver(() => CallCap, {
    nullable: true,
    description: "The connection's concurrency cap: the most of its calls in flight at once.",
  })
  callCap(@Root() connection: Connection, @Ctx() ctx: Context): CallCap | null {
    const cap = ctx.services.guard.caps(connection.id).find((c) => c.scope === 'CONNECTION');
    return cap ? capView(cap) : null;
  }

  @FieldResolver(() => [CallLimit], {
    description:
      "Rate limits on the connection's calls: the connection's own, and per workspace (a customer sees its own).",
  })
  callLimits(@Root() connection: Connection, @Ctx() ctx: Context): CallLimit[] {
    const scope = ctx.principal ? scopedWorkspace(ctx.principal) : null;
    return ctx.services.guard
      .limits(connection.id)
      .filter(
        (l) =>
          l.scope !== 'OPERATION' &&
          (l.scope !== 'WORKSPACE' || scope === null || l.forWorkspaceId === scope),
      )
      .map(limitView);
  }
}

@Resolver(() => Operation)
export class OperationGuardsResolver {
  @FieldResolver(() => Breaker, {
    description: "The operation's own circuit breaker (off unless an operator switches it on).",
  })
  breaker(@Root() operation: Operation, @Ctx() ctx: Context): Breaker {
    return breakerView('OPERATION', ctx.services.guard.breaker(operation.id));
  }

  @FieldResolver(() => CallLimit, { nullable: true, description: "The operation's own rate limit." })
  callLimit(@Root() operation: Operation, @Ctx() ctx: Context): CallLimit | null {
    const limit = ctx.services.guard
      .limits(operation.connection.id)
      .find((l) => l.scope === 'OPERATION' && l.operationId === operation.id);
    return limit ? limitView(limit) : null;
  }

  @FieldResolver(() => CallCap, { nullable: true, description: "The operation's own concurrency cap." })
  callCap(@Root() operation: Operation, @Ctx() ctx: Context): CallCap | null {
    const cap = ctx.services.guard
      .caps(operation.connection.id)
      .find((c) => c.scope === 'OPERATION' && c.operationId === operation.id);
    return cap ? capView(cap) : null;
  }
}
