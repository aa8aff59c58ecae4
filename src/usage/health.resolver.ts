/**
 * `Connection.health` and `Operation.health` for the ops console (issue 28). Each question is a
 * fixed number of statements per page, however many connections or operations it shows: the
 * loaders below batch every subject of a request into one usage statement (`health.ts`), one for
 * the last discovery runs, one for the sign-ins and one for the declaring assistants. A CUSTOMER
 * reaches only its own workspace's connections and operations, so only its numbers.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import {
  Args,
  ArgsType,
  Authorized,
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
import { Role } from '../auth/api-token.entity.js';
import { Connection, CredentialKind } from '../connections/connection.entity.js';
import { DiscoveryOutcome } from '../discovery/discovery-run.entity.js';
import type { Context } from '../graphql/context.js';
import { Operation } from '../operations/operation.entity.js';
import { CallStatus } from '../turns/turn-call.entity.js';
import { addInto, HISTOGRAM_BUCKETS, parseSparseHistogram, percentile } from './histogram.js';
import { healthRange, healthStatement, HealthWindow, operationGroup, type HealthSubject } from './health.js';
import { rollupMarks } from './marks.js';

registerEnumType(HealthWindow, {
  name: 'HealthWindow',
  description: 'The last hour, day or 7 days, as the whole UTC hours that cover it.',
});

export enum SignInState {
  /** A sign-in is stored with a usable token. */
  SIGNED_IN = 'SIGNED_IN',
  /** No usable token: someone must sign in (beginSignIn). */
  NEEDS_SIGN_IN = 'NEEDS_SIGN_IN',
}
registerEnumType(SignInState, { name: 'SignInState' });

@ArgsType()
export class HealthArgs {
  @Field(() => HealthWindow, { defaultValue: HealthWindow.DAY })
  window!: HealthWindow;

  @Field(() => Date, { nullable: true, description: 'The window ends at this time; default now.' })
  until?: Date | null;
}

@ObjectType()
export class StatusCount {
  @Field(() => CallStatus)
  status!: CallStatus;

  @Field(() => Int)
  calls!: number;
}

@ObjectType()
export class HealthPoint {
  @Field(() => Date, { description: 'The hour’s start (UTC).' })
  start!: Date;

  @Field(() => Int)
  calls!: number;

  @Field(() => Int)
  errors!: number;
}

@ObjectType({ description: 'Calls over the window, from the usage roll-up and the calls after it.' })
export class HealthStats {
  @Field(() => HealthWindow)
  window!: HealthWindow;

  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;

  @Field(() => Int)
  calls!: number;

  @Field(() => Int, { description: 'Calls that ended other than SUCCEEDED.' })
  errors!: number;

  @Field(() => Float, { description: 'errors / calls (0 without calls).' })
  errorRate!: number;

  @Field(() => [StatusCount], { description: 'Calls per status, only statuses that occurred.' })
  byStatus!: StatusCount[];

  @Field(() => Float, { nullable: true, description: 'From the log-scale histogram (within about 9 %).' })
  p50DurationMs!: number | null;

  @Field(() => Float, { nullable: true })
  p95DurationMs!: number | null;

  @Field(() => [HealthPoint], { description: 'Per UTC hour with calls, in order.' })
  points!: HealthPoint[];
}

@ObjectType()
export class LastDiscovery {
  @Field(() => Date)
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => DiscoveryOutcome)
  outcome!: DiscoveryOutcome;

  @Field(() => String, { nullable: true })
  errorCode!: string | null;

  @Field(() => Boolean, { description: 'Some tools or operations were left out (see the run’s skipped).' })
  partial!: boolean;

  @Field(() => Int)
  skipped!: number;
}

@ObjectType()
export class ConnectionHealth extends HealthStats {
  @Field(() => LastDiscovery, { nullable: true })
  lastDiscovery!: LastDiscovery | null;

  @Field(() => SignInState, { nullable: true, description: 'OAuth connections only.' })
  signIn!: SignInState | null;
}

@ObjectType()
export class OperationHealth extends HealthStats {
  @Field(() => Int, {
    description:
      'Assistants whose turns declare it now: both gates on (its switch, and the connection on the assistant).',
  })
  declaredBy!: number;
}

type Stats = Omit<HealthStats, 'window' | 'from' | 'to'>;

interface Row {
  grp: string;
  status: string | null;
  bucket: Date | null;
  calls: number;
  errors: number;
  histogram: string;
}

function emptyStats(): Stats {
  return {
    calls: 0,
    errors: 0,
    errorRate: 0,
    byStatus: [],
    p50DurationMs: null,
    p95DurationMs: null,
    points: [],
  };
}

/** The statement's rows per group (pure). */
export function healthStats(rows: readonly Row[]): Map<string, Stats> {
  const out = new Map<string, Stats & { histogram: number[] }>();
  for (const row of rows) {
    let s = out.get(row.grp);
    if (!s) {
      s = { ...emptyStats(), histogram: new Array<number>(HISTOGRAM_BUCKETS).fill(0) };
      out.set(row.grp, s);
    }
    if (row.bucket === null && row.status !== null) {
      s.calls += row.calls;
      s.errors += row.errors;
      s.byStatus.push({ status: row.status as CallStatus, calls: row.calls });
      addInto(s.histogram, parseSparseHistogram(row.histogram));
    } else if (row.bucket !== null) {
      s.points.push({ start: new Date(row.bucket), calls: row.calls, errors: row.errors });
    }
  }
  for (const s of out.values()) {
    s.errorRate = s.calls === 0 ? 0 : s.errors / s.calls;
    s.p50DurationMs = percentile(s.histogram, 0.5);
    s.p95DurationMs = percentile(s.histogram, 0.95);
  }
  return out;
}

async function usageOf(
  ctx: Context,
  subject: HealthSubject,
  workspaceIds: string[],
  range: { from: number; to: number },
): Promise<Map<string, Stats>> {
  const marks = await rollupMarks(ctx.services.orm, ctx.em);
  const { sql, params } = healthStatement(subject, workspaceIds, range, marks);
  if (params.length === 0) return new Map();
  return healthStats(await ctx.em.getConnection().execute<Row[]>(sql, params));
}

interface LoaderSet {
  connection: DataLoader<Connection, ConnectionHealth, string>;
  operation: DataLoader<Operation, OperationHealth, string>;
}

const perRequest = new WeakMap<Context, Map<string, LoaderSet>>();

function loaders(ctx: Context, args: HealthArgs): { set: LoaderSet; range: { from: number; to: number } } {
  const until = args.until ? args.until.getTime() : Date.now();
  const range = healthRange(args.window, until);
  const key = `${args.window}:${range.from}:${range.to}`;
  let sets = perRequest.get(ctx);
  if (!sets) {
    sets = new Map();
    perRequest.set(ctx, sets);
  }
  let set = sets.get(key);
  if (!set) {
    const window = { window: args.window, from: new Date(range.from), to: new Date(range.to) };
    set = {
      connection: new DataLoader<Connection, ConnectionHealth, string>(
        async (connections) => {
          const ids = connections.map((c) => c.id);
          const workspaces = [...new Set(connections.map((c) => c.workspace.id))];
          const [usage, runs, signIns] = [
            await usageOf(ctx, { kind: 'connection', ids }, workspaces, range),
            await lastRuns(ctx.em, ids),
            await signInStates(
              ctx.em,
              connections.filter((c) => c.credentialKind === CredentialKind.OAUTH).map((c) => c.id),
            ),
          ];
          return connections.map((c) => ({
            ...window,
            ...(usage.get(c.id) ?? emptyStats()),
            lastDiscovery: runs.get(c.id) ?? null,
            signIn:
              c.credentialKind === CredentialKind.OAUTH
                ? (signIns.get(c.id) ?? SignInState.NEEDS_SIGN_IN)
                : null,
          }));
        },
        { cacheKeyFn: (c) => c.id },
      ),
      operation: new DataLoader<Operation, OperationHealth, string>(
        async (operations) => {
          const keys = operations.map((o) => ({ workspaceId: o.workspace.id, key: o.key }));
          const workspaces = [...new Set(keys.map((k) => k.workspaceId))];
          const usage = await usageOf(ctx, { kind: 'operation', keys }, workspaces, range);
          const declared = await declaredBy(
            ctx.em,
            operations.map((o) => o.id),
          );
          return operations.map((o) => ({
            ...window,
            ...(usage.get(operationGroup(o.workspace.id, o.key)) ?? emptyStats()),
            declaredBy: declared.get(o.id) ?? 0,
          }));
        },
        { cacheKeyFn: (o) => o.id },
      ),
    };
    sets.set(key, set);
  }
  return { set, range };
}

/** The newest run of each connection, in one statement. */
async function lastRuns(em: EntityManager, ids: string[]): Promise<Map<string, LastDiscovery>> {
  if (ids.length === 0) return new Map();
  const rows = await em
    .getConnection()
    .execute<
      {
        connection_id: string;
        started_at: Date;
        finished_at: Date | null;
        outcome: DiscoveryOutcome;
        error_code: string | null;
        skipped: number;
      }[]
    >(
      `select distinct on (connection_id) connection_id, started_at, finished_at, outcome, error_code,
            jsonb_array_length(skipped) as skipped
       from discovery_run where connection_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[]) order by connection_id, id desc`,
      [JSON.stringify(ids)],
    );
  return new Map(
    rows.map((r) => [
      r.connection_id,
      {
        startedAt: new Date(r.started_at),
        finishedAt: r.finished_at ? new Date(r.finished_at) : null,
        outcome: r.outcome,
        errorCode: r.error_code,
        partial: Number(r.skipped) > 0,
        skipped: Number(r.skipped),
      },
    ]),
  );
}

/** Whether each OAuth connection holds a usable sign-in, in one statement. */
async function signInStates(em: EntityManager, ids: string[]): Promise<Map<string, SignInState>> {
  if (ids.length === 0) return new Map();
  const rows = await em.getConnection().execute<{ connection_id: string; usable: boolean }[]>(
    `select c.id as connection_id, (c.status <> 'NEEDS_SIGN_IN' and exists (
           select 1 from oauth_credential o where o.connection_id = c.id and o.access_token is not null)) as usable
         from connection c where c.id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])`,
    [JSON.stringify(ids)],
  );
  return new Map(
    rows.map((r) => [r.connection_id, r.usable ? SignInState.SIGNED_IN : SignInState.NEEDS_SIGN_IN]),
  );
}

/** How many assistants declare each operation now, in one statement (the tool cache's two gates). */
async function declaredBy(em: EntityManager, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await em.getConnection().execute<{ id: string; n: string }[]>(
    `select o.id, case when o.enabled then count(ac.assistant_id) else 0 end as n
       from operation o left join assistant_connection ac on ac.connection_id = o.connection_id
      where o.id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[]) group by o.id, o.enabled`,
    [JSON.stringify(ids)],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

@Resolver(() => Connection)
export class ConnectionHealthResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @FieldResolver(() => ConnectionHealth, {
    description:
      'Calls, errors by status, p50 and p95 over the window (usage roll-up), the last discovery, and the sign-in state of an OAuth connection.',
  })
  async health(
    @Root() connection: Connection,
    @Args(() => HealthArgs) args: HealthArgs,
    @Ctx() ctx: Context,
  ): Promise<ConnectionHealth> {
    return loaders(ctx, args).set.connection.load(connection);
  }
}

@Resolver(() => Operation)
export class OperationHealthResolver {
  @Authorized(Role.ADMIN, Role.OPERATOR, Role.CUSTOMER)
  @FieldResolver(() => OperationHealth, {
    description:
      'Calls, errors by status, p50 and p95 over the window (usage roll-up), and how many assistants declare it now.',
  })
  async health(
    @Root() operation: Operation,
    @Args(() => HealthArgs) args: HealthArgs,
    @Ctx() ctx: Context,
  ): Promise<OperationHealth> {
    return loaders(ctx, args).set.operation.load(operation);
  }
}
