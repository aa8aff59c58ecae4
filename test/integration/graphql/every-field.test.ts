/**
 * Every field of every type reachable from Query and Subscription, selected as ADMIN on a database
 * that a realistic journey filled, must answer without an error. The documents are generated from
 * the schema (test/support/every-field.ts), so a new field is covered without editing this file.
 */
import {
  buildClientSchema,
  getIntrospectionQuery,
  type GraphQLObjectType,
  type IntrospectionQuery,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import {
  countAt,
  documentFor,
  harvestIds,
  MissingArgumentError,
  reachablePaths,
  type IdRegistry,
  type TypePlan,
} from '../../support/every-field.js';
import { runJourney, type Journey } from '../../support/journey.js';
import { PUBLIC_URL } from '../oauth/helpers.js';
import { wsClient } from '../../support/subscriptions.js';

let t: TestApp;
let journey: Journey;

beforeAll(async () => {
  t = await startTestApp({
    databaseUrl: await createEmptyDatabase(),
    env: {
      PUBLIC_URL,
      // A built-in whose schema is no object: left out of every compiled dialect (LeftOutTool).
      BUILTIN_TOOLS: JSON.stringify([
        { name: 'clock_text', description: 'Tells the time.', inputSchema: { type: 'string' } },
      ]),
    },
  });
  journey = await runJourney(t);
}, 60_000);

afterAll(async () => {
  await journey?.close();
  await t?.stop();
});

async function schemaOf(): Promise<ReturnType<typeof buildClientSchema>> {
  const intro = await t.ok<IntrospectionQuery, undefined>(
    getIntrospectionQuery(),
    undefined,
    journey.tokens.admin,
  );
  return buildClientSchema(intro);
}

interface Outcome {
  plan: TypePlan;
  document: string;
  reached: number;
  errors: unknown[];
}

/** Runs the plans in breadth-first order; a plan that lacks an ID waits until one is harvested. */
async function runPlans(
  plans: TypePlan[][],
  ids: IdRegistry,
  execute: (document: string) => Promise<{ data?: unknown; errors?: unknown[] }>,
  schema: ReturnType<typeof buildClientSchema>,
  operation: 'query' | 'subscription',
): Promise<{ outcomes: Outcome[]; unreached: string[] }> {
  const outcomes: Outcome[] = [];
  let pending = plans;
  for (let round = 0; round < 4 && pending.length > 0; round++) {
    const next: TypePlan[][] = [];
    for (const alternatives of pending) {
      let done = false;
      let missing = false;
      for (const plan of alternatives) {
        // Try a few of the registered IDs for the path's arguments: not every object has children.
        const tried = new Set<string>();
        for (let pick = 0; pick < 50 && !done; pick++) {
          let document: string;
          try {
            document = documentFor(schema, operation, plan, ids, pick);
          } catch (err) {
            if (err instanceof MissingArgumentError) {
              missing = true;
              break;
            }
            throw err;
          }
          if (tried.has(document)) break; // every registered ID was tried
          tried.add(document);
          const result = await execute(document);
          harvestIds(result.data, ids);
          const reached = countAt(result.data, plan);
          if (result.errors?.length || reached > 0) {
            outcomes.push({ plan, document, reached, errors: result.errors ?? [] });
            done = true;
          }
          if (plan.path.length === 0) break;
        }
        if (done) break;
      }
      if (!done && missing) next.push(alternatives);
      else if (!done) outcomes.push({ plan: alternatives[0]!, document: '', reached: 0, errors: [] });
    }
    pending = next;
  }
  const unreached = [
    ...pending.map((a) => a[0]!.type),
    ...outcomes.filter((o) => o.reached === 0 && o.errors.length === 0).map((o) => o.plan.type),
  ];
  return { outcomes, unreached };
}

describe('every field of the schema, on a realistic database', () => {
  it('should have produced every call status on the way', () => {
    expect([...journey.statuses].sort()).toEqual(
      ['REJECTED', 'SUCCEEDED', 'TIMEOUT', 'TOOL_ERROR', 'UNAVAILABLE', 'UPSTREAM_ERROR'].sort(),
    );
  });

  it('should answer every field of every type reachable from Query without an error', async () => {
    const schema = await schemaOf();
    const paths = reachablePaths(schema, schema.getQueryType()!);
    const plans = [...paths].map(([type, list]) => list.map((path) => ({ type, path })));
    const ids: IdRegistry = new Map(journey.ids);
    const { outcomes, unreached } = await runPlans(
      plans,
      ids,
      (document) => t.gql(document, undefined, journey.tokens.admin),
      schema,
      'query',
    );
    const failed = outcomes.filter((o) => o.errors.length > 0);
    expect(failed.map((o) => ({ type: o.plan.type, errors: o.errors, document: o.document }))).toEqual([]);
    expect(unreached).toEqual([]);
    // Sanity: the walk saw the whole schema, not a corner of it.
    const covered = new Set(outcomes.map((o) => o.plan.type));
    for (const name of [
      'Query',
      'Workspace',
      'Connection',
      'Operation',
      'ReviewReason',
      'DiscoveryRun',
      'SkippedItem',
      'Turn',
      'TurnCall',
      'LedgerEntry',
      'AuditEvent',
      'PageInfo',
      'Viewer',
    ])
      expect(covered).toContain(name);
  });

  it('should answer every field of every type reachable from Subscription, replayed and live', async () => {
    const schema = await schemaOf();
    const subscription = schema.getSubscriptionType() as GraphQLObjectType;
    const paths = reachablePaths(schema, subscription);
    const client = wsClient(t.wsUrl, journey.tokens.admin, { lazy: true });
    const stored = Number(
      (
        await t.app.services.orm.em
          .getConnection()
          .execute<{ n: string }[]>('select count(*) as n from turn_event')
      )[0]!.n,
    );
    expect(stored).toBeGreaterThan(10);
    try {
      // Each subscription field replays every stored event (afterSeq: 0), then we stop listening.
      const execute = (document: string) =>
        new Promise<{ data?: unknown; errors?: unknown[] }>((resolve) => {
          const items: unknown[] = [];
          const errors: unknown[] = [];
          let root = '';
          const timer = setTimeout(() => finish(), 5_000);
          const finish = () => {
            clearTimeout(timer);
            unsubscribe();
            resolve({ data: { [root]: items }, errors });
          };
          const unsubscribe = client.subscribe(
            { query: document },
            {
              next: (value) => {
                if (value.errors) errors.push(...value.errors);
                const data = value.data as Record<string, unknown> | undefined;
                if (data) {
                  root = Object.keys(data)[0]!;
                  items.push(data[root]);
                }
                if (items.length >= stored || errors.length > 0) finish();
              },
              error: (err) => {
                errors.push(err);
                finish();
              },
              complete: () => finish(),
            },
          );
        });
      const ids: IdRegistry = new Map(journey.ids);
      const plans = [...paths]
        .filter(([type]) => type !== subscription.name)
        .map(([type, list]) => list.map((path) => ({ type, path })));
      const outcomes: Outcome[] = [];
      for (const alternatives of plans) {
        const plan = alternatives[0]!;
        const document = documentFor(schema, 'subscription', plan, ids, 0, { afterSeq: '0' });
        const result = await execute(document);
        outcomes.push({ plan, document, reached: countAt(result.data, plan), errors: result.errors ?? [] });
      }
      expect(
        outcomes.filter((o) => o.errors.length > 0).map((o) => ({ type: o.plan.type, errors: o.errors })),
      ).toEqual([]);
      expect(outcomes.filter((o) => o.reached === 0).map((o) => o.plan.type)).toEqual([]);
      expect(outcomes.map((o) => o.plan.type)).toContain('TurnEvent');
    } finally {
      await client.dispose();
    }
  });
});
