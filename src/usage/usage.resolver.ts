/**
 * Usage for dashboards (issue 12): `Workspace.usage` and `Assistant.usage`. The owner is reached
 * through the usual scoped lookups, so a CUSTOMER only ever asks about its own workspace.
 */
import {
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  Float,
  ID,
  Int,
  ObjectType,
  registerEnumType,
  Resolver,
  Root,
} from 'type-graphql';
import { Assistant } from '../assistants/assistant.entity.js';
import { Connection } from '../connections/connection.entity.js';
import type { Context } from '../graphql/context.js';
import { badInput } from '../graphql/errors.js';
import { toGlobalId } from '../graphql/node.js';
import { CallStatus } from '../turns/turn-call.entity.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { rollupMarks } from './marks.js';
import { summarize, type UsageStats as Stats } from './summary.js';
import { queryUsage, UsageGroupBy } from './usage.query.js';
import { MAX_USAGE_BUCKETS, UsageBucket, usageWindow } from './window.js';

registerEnumType(UsageBucket, { name: 'UsageBucket', description: 'Whole UTC hours or UTC days.' });
registerEnumType(UsageGroupBy, { name: 'UsageGroupBy' });

@ArgsType()
export class UsageArgs {
  @Field(() => Date, { description: 'Start; floored to the bucket (UTC).' })
  from!: Date;

  @Field(() => Date, { description: 'End (exclusive); ceiled to the bucket (UTC).' })
  to!: Date;

  @Field(() => UsageBucket, { defaultValue: UsageBucket.DAY })
  bucket!: UsageBucket;

  @Field(() => UsageGroupBy, {
    nullable: true,
    description: 'One series per tool, connection or status; none: one series.',
  })
  groupBy?: UsageGroupBy | null;
}

@ObjectType('UsageStats')
export class UsageStatsType implements Stats {
  @Field(() => Int)
  calls!: number;

  @Field(() => Int, { description: 'Calls that ended other than SUCCEEDED.' })
  errors!: number;

  @Field(() => Float, { description: 'errors / calls (0 without calls).' })
  errorRate!: number;

  @Field(() => Float, { nullable: true })
  meanDurationMs!: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'From a log-scale histogram: within about 9 % of the exact value (docs/usage.md).',
  })
  p50DurationMs!: number | null;

  @Field(() => Float, { nullable: true, description: 'As p50DurationMs.' })
  p95DurationMs!: number | null;
}

@ObjectType()
export class UsagePoint extends UsageStatsType {
  @Field(() => Date, { description: 'The bucket’s start (UTC).' })
  start!: Date;
}

@ObjectType()
export class UsageSeries {
  @Field(() => String, {
    nullable: true,
    description: 'TOOL: the operation key; null for calls of an unknown name.',
  })
  tool!: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'CONNECTION: the connection’s ID; null for calls of no connection.',
  })
  connectionId!: string | null;

  @Field(() => CallStatus, { nullable: true, description: 'STATUS: the status.' })
  status!: CallStatus | null;

  @Field(() => UsageStatsType)
  total!: UsageStatsType;

  @Field(() => [UsagePoint], {
    description: 'Buckets with calls, in order; buckets without calls are left out.',
  })
  points!: UsagePoint[];

  rawConnectionId!: string | null;
}

@ObjectType()
export class Usage {
  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;

  @Field(() => UsageBucket)
  bucket!: UsageBucket;

  @Field(() => UsageGroupBy, { nullable: true })
  groupBy!: UsageGroupBy | null;

  @Field(() => UsageStatsType)
  total!: UsageStatsType;

  @Field(() => [UsageSeries])
  series!: UsageSeries[];
}

async function usage(
  ctx: Context,
  workspaceId: string,
  assistantId: string | null,
  args: UsageArgs,
): Promise<Usage> {
  const window = usageWindow(args.from, args.to, args.bucket);
  if (!window.ok) throw badInput(window.message);
  const groupBy = args.groupBy ?? null;
  const marks = await rollupMarks(ctx.services.orm, ctx.em);
  const rows = await queryUsage(
    ctx.em,
    { workspaceId, assistantId, from: window.from, to: window.to, bucket: args.bucket, groupBy },
    marks,
  );
  const { total, series } = summarize(rows);
  return {
    from: window.from,
    to: window.to,
    bucket: args.bucket,
    groupBy,
    total,
    series: series.map((s) => ({
      tool: groupBy === UsageGroupBy.TOOL ? s.group : null,
      rawConnectionId: groupBy === UsageGroupBy.CONNECTION ? s.group : null,
      connectionId: groupBy === UsageGroupBy.CONNECTION && s.group ? toGlobalId('Connection', s.group) : null,
      status: groupBy === UsageGroupBy.STATUS ? (s.group as CallStatus) : null,
      total: s.total,
      points: s.points,
    })),
  };
}

const DESCRIPTION = `Calls, errors, error rate and p50/p95 duration over a time range, bucketed by UTC HOUR or DAY, optionally grouped by tool, connection or status. At most ${MAX_USAGE_BUCKETS} buckets.`;

@Resolver(() => Workspace)
export class WorkspaceUsageResolver {
  @FieldResolver(() => Usage, { description: DESCRIPTION })
  async usage(
    @Root() workspace: Workspace,
    @Args(() => UsageArgs) args: UsageArgs,
    @Ctx() ctx: Context,
  ): Promise<Usage> {
    return usage(ctx, workspace.id, null, args);
  }
}

@Resolver(() => Assistant)
export class AssistantUsageResolver {
  @FieldResolver(() => Usage, { description: DESCRIPTION })
  async usage(
    @Root() assistant: Assistant,
    @Args(() => UsageArgs) args: UsageArgs,
    @Ctx() ctx: Context,
  ): Promise<Usage> {
    return usage(ctx, assistant.workspace.id, assistant.id, args);
  }
}

@Resolver(() => UsageSeries)
export class UsageSeriesResolver {
  @FieldResolver(() => Connection, {
    nullable: true,
    description: 'CONNECTION: the connection, null once deleted.',
  })
  async connection(@Root() series: UsageSeries, @Ctx() ctx: Context): Promise<Connection | null> {
    return series.rawConnectionId ? ctx.loaders.connection.load(series.rawConnectionId) : null;
  }
}
