import {
  Arg,
  Args,
  ArgsType,
  Authorized,
  Ctx,
  Field,
  FieldResolver,
  ID,
  InputType,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { Role } from '../auth/api-token.entity.js';
import { Connection } from '../connections/connection.entity.js';
import type { Context } from '../graphql/context.js';
import { visible } from '../graphql/visible.js';
import type { ChildFilter } from '../graphql/loaders.js';
import { connectionType, PageArgsType, pageWindow, toPage, type Page } from '../graphql/relay.js';
import { UserError } from '../graphql/user-error.js';
import { Operation } from './operation.entity.js';
import { type Risk, RiskLevel } from './types.js';
import {
  decideReview,
  disableOperation,
  enableOperation,
  setOperationRisk,
  setOperationAlwaysDeclare,
  type ReviewOutcome,
} from './operation.service.js';
import { DiffEntryType, OperationChange } from './operation-change.entity.js';
import { ReviewDecision, ReviewReason } from './review-reason.entity.js';
import { reviewVersion } from './review-version.js';

export const ReviewReasonConnection = connectionType('ReviewReason', ReviewReason, { totalCount: true });
export const OperationChangeConnection = connectionType('OperationChange', OperationChange, {
  totalCount: true,
});

@InputType()
export class ApproveReviewInput {
  @Field(() => ID)
  operationId!: string;

  @Field(() => String, {
    description:
      "The review's version as loaded (Operation.reviewVersion): a review that changed since is refused.",
  })
  version!: string;
}

@InputType()
export class RejectReviewInput extends ApproveReviewInput {
  @Field(() => String, { description: 'Why, for the audit trail and the operation (1–500 characters).' })
  reason!: string;
}

const REFUSALS: Record<Exclude<ReviewOutcome, { ok: true }>['refusal'], string> = {
  NO_OPEN_REVIEW: 'this operation has no open review: it was decided meanwhile, or never held',
  STALE_REVIEW:
    'this review changed since it was loaded (a refresh changed the operation again): load it again and decide on the diff as it is now',
};

function reviewPayload(outcome: ReviewOutcome): OperationPayload {
  if (outcome.ok) return { operation: outcome.operation, resolvedReasons: outcome.resolved, userErrors: [] };
  const field = outcome.refusal === 'STALE_REVIEW' ? 'version' : 'operationId';
  return {
    operation: outcome.operation,
    resolvedReasons: [],
    userErrors: [new UserError(['input', field], REFUSALS[outcome.refusal], outcome.refusal)],
  };
}

/** Loads an operation the principal may see, or throws NOT_FOUND. */
export async function visibleOperation(ctx: Context, globalId: string): Promise<Operation> {
  return visible<Operation>(ctx, globalId, 'Operation');
}

@InputType()
export class EnableInput {
  @Field(() => ID)
  operationId!: string;
}

@InputType()
export class DisableInput {
  @Field(() => ID)
  operationId!: string;

  @Field(() => String, { description: 'Why it goes off, for the audit trail (1–500 characters).' })
  reason!: string;
}

@InputType()
export class SetRiskInput {
  @Field(() => ID)
  operationId!: string;

  @Field(() => RiskLevel)
  risk!: Risk;
}

@InputType()
export class SetAlwaysDeclareInput {
  @Field(() => ID)
  operationId!: string;

  @Field(() => Boolean)
  alwaysDeclare!: boolean;
}

@InputType()
export class ClearRiskInput {
  @Field(() => ID)
  operationId!: string;
}

@ObjectType()
export class OperationPayload {
  @Field(() => Operation, { nullable: true })
  operation!: Operation | null;

  @Field(() => [ReviewReason], { description: 'Review reasons this change resolved.' })
  resolvedReasons!: ReviewReason[];

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@ArgsType()
export class ReviewReasonArgs extends PageArgsType {
  @Field(() => Boolean, { nullable: true, description: 'true: open only; false: resolved only; null: all.' })
  open?: boolean | null;
}

@Resolver(() => Operation)
export class OperationResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @Query(() => Operation, {
    nullable: true,
    description: 'By global ID; NOT_FOUND (an error for this field only) when missing or out of scope.',
  })
  async operation(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Operation> {
    return visibleOperation(ctx, id);
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => OperationPayload, {
    description: 'Turns an operation on. With open review reasons only an ADMIN may, and that resolves them.',
  })
  async enable(
    @Arg('input', () => EnableInput) input: EnableInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const visible = await visibleOperation(ctx, input.operationId);
    const { operation, resolved } = await enableOperation(ctx.services, ctx.em, ctx.principal!, visible.id);
    return { operation, resolvedReasons: resolved, userErrors: [] };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => OperationPayload, {
    description: 'The incident switch: the operation stops being callable on every instance.',
  })
  async disable(
    @Arg('input', () => DisableInput) input: DisableInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    const reason = input.reason.trim();
    if (reason.length === 0 || reason.length > 500) {
      return {
        operation: null,
        resolvedReasons: [],
        userErrors: [new UserError(['input', 'reason'], 'must be 1–500 characters', 'REASON_INVALID')],
      };
    }
    const disabled = await disableOperation(ctx.services, ctx.em, ctx.principal!, op.id, reason);
    return { operation: disabled, resolvedReasons: [], userErrors: [] };
  }

  @Authorized(Role.ADMIN)
  @Mutation(() => OperationPayload, {
    description:
      'Approves the review as loaded: resolves every open reason and turns the operation on, in one transaction. userErrors STALE_REVIEW when the review changed since (see Operation.reviewVersion).',
  })
  async approveReview(
    @Arg('input', () => ApproveReviewInput) input: ApproveReviewInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    return reviewPayload(
      await decideReview(ctx.services, ctx.em, ctx.principal!, op.id, input.version, ReviewDecision.APPROVED),
    );
  }

  @Authorized(Role.ADMIN)
  @Mutation(() => OperationPayload, {
    description:
      'Rejects the review as loaded: resolves every open reason as rejected, with why, and keeps the operation off (only an ADMIN enables it later). userErrors as approveReview.',
  })
  async rejectReview(
    @Arg('input', () => RejectReviewInput) input: RejectReviewInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    const reason = input.reason.trim();
    if (reason.length === 0 || reason.length > 500) {
      return {
        operation: null,
        resolvedReasons: [],
        userErrors: [new UserError(['input', 'reason'], 'must be 1–500 characters', 'REASON_INVALID')],
      };
    }
    return reviewPayload(
      await decideReview(
        ctx.services,
        ctx.em,
        ctx.principal!,
        op.id,
        input.version,
        ReviewDecision.REJECTED,
        reason,
      ),
    );
  }

  @Authorized(Role.ADMIN)
  @Mutation(() => OperationPayload, {
    description: 'Sets the risk by hand; it survives refreshes until clearRisk.',
  })
  async setRisk(
    @Arg('input', () => SetRiskInput) input: SetRiskInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    const updated = await setOperationRisk(ctx.services, ctx.em, ctx.principal!, op.id, input.risk);
    return { operation: updated, resolvedReasons: [], userErrors: [] };
  }

  @Authorized(Role.ADMIN)
  @Mutation(() => OperationPayload, { description: "Hands the risk back to the source's own." })
  async clearRisk(
    @Arg('input', () => ClearRiskInput) input: ClearRiskInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    const updated = await setOperationRisk(ctx.services, ctx.em, ctx.principal!, op.id, null);
    return { operation: updated, resolvedReasons: [], userErrors: [] };
  }

  @Authorized(Role.ADMIN, Role.OPERATOR)
  @Mutation(() => OperationPayload, {
    description:
      'Marks an operation "always declare": when a turn searches its tools it is declared up front (docs/tool-search.md). Audited; reaches every instance.',
  })
  async setAlwaysDeclare(
    @Arg('input', () => SetAlwaysDeclareInput) input: SetAlwaysDeclareInput,
    @Ctx() ctx: Context,
  ): Promise<OperationPayload> {
    const op = await visibleOperation(ctx, input.operationId);
    const updated = await setOperationAlwaysDeclare(
      ctx.services,
      ctx.em,
      ctx.principal!,
      op.id,
      input.alwaysDeclare,
    );
    return { operation: updated, resolvedReasons: [], userErrors: [] };
  }

  @FieldResolver(() => Connection)
  async connection(@Root() operation: Operation, @Ctx() ctx: Context): Promise<Connection> {
    return (await ctx.loaders.connection.load(operation.connection.id))!;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      "OpenAPI: the connection's baseUrl override, when one is set: it replaces every base address of the description.",
  })
  async baseUrlOverride(@Root() operation: Operation, @Ctx() ctx: Context): Promise<string | null> {
    if (operation.binding === null) return null;
    return (await ctx.loaders.connection.load(operation.connection.id))?.baseUrl ?? null;
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      'The version of its open review (null without one), for approveReview and rejectReview: it changes whenever a refresh changes the review.',
  })
  async reviewVersion(@Root() operation: Operation, @Ctx() ctx: Context): Promise<string | null> {
    return reviewVersion(await ctx.loaders.openReasonsOfOperation.load(operation.id));
  }

  @FieldResolver(() => [DiffEntryType], {
    description:
      'What its open review is about: the diff from the operation before the review opened to now (empty without a review).',
  })
  async reviewDiff(@Root() operation: Operation, @Ctx() ctx: Context): Promise<DiffEntryType[]> {
    return (await ctx.loaders.openReasonsOfOperation.load(operation.id)).at(-1)?.diff ?? [];
  }

  @FieldResolver(() => OperationChangeConnection, {
    description: 'What each discovery run changed in it, newest first, with the diff.',
  })
  async changes(
    @Root() operation: Operation,
    @Args(() => PageArgsType) args: PageArgsType,
    @Ctx() ctx: Context,
  ): Promise<Page<OperationChange>> {
    const { limit, after } = pageWindow(args);
    const rows = await ctx.loaders.changesOfOperation.load({ parentId: operation.id, limit, after });
    return toPage(
      rows,
      limit,
      (r) => r.id,
      () => ctx.loaders.countChangesOfOperation.load({ parentId: operation.id }),
    );
  }

  @FieldResolver(() => ReviewReasonConnection, { description: 'Why refreshes turned it off, oldest first.' })
  async reviewReasons(
    @Root() operation: Operation,
    @Args(() => ReviewReasonArgs) args: ReviewReasonArgs,
    @Ctx() ctx: Context,
  ): Promise<Page<ReviewReason>> {
    const { limit, after } = pageWindow(args);
    const filters: Record<string, ChildFilter> =
      args.open == null ? {} : { resolved_at: { isNull: args.open } };
    const rows = await ctx.loaders.reviewReasonsOfOperation.load({
      parentId: operation.id,
      limit,
      after,
      filters,
    });
    return toPage(
      rows,
      limit,
      (r) => r.id,
      () => ctx.loaders.countReviewReasonsOfOperation.load({ parentId: operation.id, filters }),
    );
  }
}

@Resolver(() => OperationChange)
export class OperationChangeResolver {
  @FieldResolver(() => Operation, { nullable: true, description: 'Null once the operation is gone.' })
  async operation(@Root() change: OperationChange, @Ctx() ctx: Context): Promise<Operation | null> {
    return change.operation ? ctx.loaders.operation.load(change.operation.id) : null;
  }
}
