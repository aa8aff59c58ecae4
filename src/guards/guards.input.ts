/**
 * The GraphQL types of limits, caps and breakers (type-graphql, issue 29): the views, the inputs
 * and the payloads `GuardsResolver` takes and returns.
 */
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { UserError } from '../graphql/user-error.js';
import { DEFAULT_CAP_WAIT_MS, MAX_CAP_WAIT_MS } from './cap.js';

export enum BreakerStateValue {
  CLOSED = 'CLOSED',
  OPEN = 'OPEN',
  HALF_OPEN = 'HALF_OPEN',
}
registerEnumType(BreakerStateValue, {
  name: 'BreakerState',
  valuesConfig: {
    CLOSED: { description: 'Calls go through.' },
    OPEN: { description: 'Calls are answered UNAVAILABLE at once, until the cool-down ends.' },
    HALF_OPEN: { description: 'One probe call is out; the others are answered UNAVAILABLE.' },
  },
});

export enum BreakerForceValue {
  OPEN = 'OPEN',
  CLOSED = 'CLOSED',
}
registerEnumType(BreakerForceValue, {
  name: 'BreakerForce',
  description: "An operator's hand on a breaker: always open, or always closed, whatever the calls do.",
});

export enum LimitScopeValue {
  CONNECTION = 'CONNECTION',
  OPERATION = 'OPERATION',
  WORKSPACE = 'WORKSPACE',
}
registerEnumType(LimitScopeValue, {
  name: 'CallLimitScope',
  valuesConfig: {
    WORKSPACE: { description: "One workspace's calls on a connection." },
  },
});

export enum LimitPeriod {
  SECOND = 'SECOND',
  MINUTE = 'MINUTE',
}
registerEnumType(LimitPeriod, { name: 'CallLimitPeriod' });

export const PERIOD_MS: Record<LimitPeriod, number> = { SECOND: 1_000, MINUTE: 60_000 };
/** The most calls a limit may allow per period, and the largest burst. */
export const MAX_LIMIT_CALLS = 1_000_000;

@ObjectType({ description: 'A circuit breaker (docs/limits.md, "Limits and breakers").' })
export class Breaker {
  @Field(() => BreakerStateValue)
  state!: BreakerStateValue;

  @Field(() => Boolean, {
    description: 'Counts calls and opens by itself. On by default for connections, off for operations.',
  })
  enabled!: boolean;

  @Field(() => BreakerForceValue, { nullable: true, description: "The operator's force, if any." })
  forced!: BreakerForceValue | null;

  @Field(() => Date, { nullable: true })
  openedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why it opened.' })
  reason!: string | null;

  @Field(() => Date, { nullable: true, description: 'OPEN: when a probe call may go through.' })
  retryAt!: Date | null;
}

@ObjectType({
  description:
    'A rate limit: calls per second or minute, with a burst (docs/limits.md, "Limits and breakers").',
})
export class CallLimit {
  @Field(() => LimitScopeValue)
  scope!: LimitScopeValue;

  @Field(() => Int)
  calls!: number;

  @Field(() => LimitPeriod)
  per!: LimitPeriod;

  @Field(() => Int, { description: 'The most calls at once after a quiet spell (the bucket size).' })
  burst!: number;

  @Field(() => ID, { nullable: true, description: 'WORKSPACE: the workspace whose calls it counts.' })
  workspaceId!: string | null;

  @Field(() => ID, { nullable: true, description: 'OPERATION: the operation.' })
  operationId!: string | null;
}

@InputType()
export class SetCallLimitInput {
  @Field(() => ID, {
    nullable: true,
    description: 'A limit for the connection (or, with workspaceId, one workspace on it).',
  })
  connectionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'A limit for one operation (instead of connectionId).' })
  operationId?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: "With connectionId: that workspace's calls on the connection (ADMIN only).",
  })
  workspaceId?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Calls per period (1–1,000,000); null removes the limit.',
  })
  calls?: number | null;

  @Field(() => LimitPeriod, { nullable: true, defaultValue: LimitPeriod.MINUTE })
  per?: LimitPeriod | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Bucket size (1–calls); default a tenth of calls, at least 1.',
  })
  burst?: number | null;
}

@ObjectType()
export class CallLimitPayload {
  @Field(() => CallLimit, { nullable: true, description: 'The limit as set; null when removed or refused.' })
  callLimit!: CallLimit | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@ObjectType({
  description:
    'A concurrency cap: the most calls in flight at once, across every instance (docs/limits.md, "Limits and breakers").',
})
export class CallCap {
  @Field(() => LimitScopeValue, { description: 'CONNECTION or OPERATION.' })
  scope!: LimitScopeValue;

  @Field(() => Int)
  maxInFlight!: number;

  @Field(() => Int, {
    description: "How long a call over the cap waits in line (ms), never more than half the call's budget.",
  })
  maxWaitMs!: number;

  @Field(() => ID, { nullable: true, description: 'OPERATION: the operation.' })
  operationId!: string | null;
}

@InputType()
export class SetCallCapInput {
  @Field(() => ID, { nullable: true, description: 'A cap for the connection.' })
  connectionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'A cap for one operation (instead of connectionId).' })
  operationId?: string | null;

  @Field(() => Int, {
    nullable: true,
    description: 'The most calls in flight at once (1–10,000); null removes the cap.',
  })
  maxInFlight?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: `How long a call over the cap may wait for a slot, in ms (0–${MAX_CAP_WAIT_MS}; default ${DEFAULT_CAP_WAIT_MS}).`,
  })
  maxWaitMs?: number | null;
}

@ObjectType()
export class CallCapPayload {
  @Field(() => CallCap, { nullable: true, description: 'The cap as set; null when removed or refused.' })
  callCap!: CallCap | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class SetBreakerInput {
  @Field(() => ID, { nullable: true })
  connectionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Instead of connectionId: the breaker of one operation.' })
  operationId?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Counts calls and opens by itself; unchanged when null.',
  })
  enabled?: boolean | null;

  @Field(() => BreakerForceValue, {
    nullable: true,
    description: 'Force it OPEN or CLOSED; null lifts a force. Any change starts the breaker closed.',
  })
  force?: BreakerForceValue | null;
}

@ObjectType()
export class BreakerPayload {
  @Field(() => Breaker, { nullable: true })
  breaker!: Breaker | null;

  @Field(() => [UserError])
  userErrors!: UserError[];
}
