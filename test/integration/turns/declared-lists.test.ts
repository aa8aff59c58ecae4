/**
 * A turn's declared-tools record is stored once per workspace and tool list (`declared_tool_list`,
 * issue 15), and the turn refers to it by digest: another instance still resolves a turn's names,
 * the same list is not stored twice, a changed list is stored anew, the GraphQL field still lists
 * the names, a list gone while an instance remembers it is stored again, and the migration moves
 * existing turns' records over.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../../src/db/ids.js';
import { openOrm } from '../../../src/db/orm.js';
import { toGlobalId } from '../../../src/graphql/node.js';
import { DisableDocument, EnableDocument, TurnCallsDocument } from '../../generated/graphql.js';
import { createEmptyDatabase } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import {
  begin,
  buildWorld,
  call,
  connectTools,
  startTwoInstances,
  type TwoInstances,
  type World,
} from '../../support/turns.js';

let two: TwoInstances;

beforeAll(async () => {
  two = await startTwoInstances();
});

afterAll(() => two.stop());

/** Each test owns its workspace: lists are counted per workspace. */
async function ownWorld(name: string): Promise<World> {
  const w = await buildWorld(two.A, two.peer.url, name);
  await connectTools(two.A, w);
  return w;
}

async function sql<T>(text: string, params: unknown[]): Promise<T[]> {
  return two.A.app.services.orm.em.getConnection().execute<T[]>(text, params);
}

async function lists(w: World): Promise<{ digest: string; names: string[] }[]> {
  const rows = await sql<{ digest: string; tools: { name: string }[] }>(
    'select digest, tools from declared_tool_list where workspace_id = ? order by created_at',
    [rawId(w.workspaceId)],
  );
  return rows.map((r) => ({ digest: r.digest, names: r.tools.map((t) => t.name) }));
}

async function digestOf(turnId: string): Promise<string> {
  const rows = await sql<{ d: string }>('select declared_tools_digest as d from turn where id = ?', [
    rawId(turnId),
  ]);
  return rows[0]!.d;
}

const storesList = (q: string) => q.includes('insert into declared_tool_list');

/** The declared name of the CRM `lookup` tool in a turn's answer. */
function lookupOf(turn: { tools: { name: string }[] }): string {
  return turn.tools.map((t) => t.name).find((n) => n.endsWith('__lookup'))!;
}

describe('declared-tools lists', () => {
  it('should resolve the names on another instance, which loads the turn and its list from the database', async () => {
    const w = await ownWorld('Lists B');
    const turn = await begin(two.A, w, 'on-a');
    const answer = await call(two.B, w, turn.turnId, lookupOf(turn), { email: 'x@example.com' });
    expect(answer).toMatchObject({ status: 'SUCCEEDED', recorded: true });
    const unknown = await call(two.B, w, turn.turnId, `${lookupOf(turn)}_nope`, {});
    expect(unknown.ok).toBe(false);
  });

  it('should store a tool list once: a second turn of the same list sends only its digest', async () => {
    const w = await ownWorld('Lists Once');
    two.A.resetQueries();
    const first = await begin(two.A, w, 'once-1');
    const second = await begin(two.A, w, 'once-2');
    const third = await begin(two.B, w, 'once-3');
    expect((await lists(w)).map((l) => l.names)).toEqual([first.tools.map((t) => t.name)]);
    const digest = (await lists(w))[0]!.digest;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(await digestOf(first.turnId)).toBe(digest);
    expect(await digestOf(second.turnId)).toBe(digest);
    expect(await digestOf(third.turnId)).toBe(digest);
    const begins = two.A.queries.filter((q) => q.includes('insert into turn '));
    expect(begins).toHaveLength(2);
    expect(begins.map(storesList)).toEqual([true, false]);
  });

  it('should store a new list when the tool list changes, and keep the old turns on theirs', async () => {
    const w = await ownWorld('Lists Change');
    const before = await begin(two.A, w, 'change-1');
    await two.A.ok(
      DisableDocument,
      { input: { operationId: w.ops.lookup!.id, reason: 'incident' } },
      w.operator,
    );
    const after = await begin(two.A, w, 'change-2');
    expect(after.tools.map((t) => t.name)).not.toContain(lookupOf(before));
    const stored = await lists(w);
    expect(stored.map((l) => l.names)).toEqual([
      before.tools.map((t) => t.name),
      after.tools.map((t) => t.name),
    ]);
    expect(await digestOf(before.turnId)).toBe(stored[0]!.digest);
    expect(await digestOf(after.turnId)).toBe(stored[1]!.digest);

    // Read back through GraphQL, on the instance that did not begin them too.
    const old = await two.B.ok(TurnCallsDocument, { id: before.turnId }, w.admin);
    expect(old.turn!.declaredToolNames).toEqual(before.tools.map((t) => t.name));
    const fresh = await two.A.ok(TurnCallsDocument, { id: after.turnId }, w.customer);
    expect(fresh.turn!.declaredToolNames).toEqual(after.tools.map((t) => t.name));
    // And in a page of turns: both lists in one statement.
    two.A.resetQueries();
    const page = await two.A.gql<
      { assistant: { turns: { nodes: { id: string; declaredToolNames: string[] }[] } } },
      { a: string }
    >(
      'query($a: ID!) { assistant(id: $a) { turns(first: 10) { nodes { id declaredToolNames } } } }',
      { a: w.assistantId },
      w.customer,
    );
    expect(page.errors).toBeUndefined();
    expect(page.data!.assistant.turns.nodes).toEqual([
      { id: after.turnId, declaredToolNames: after.tools.map((t) => t.name) },
      { id: before.turnId, declaredToolNames: before.tools.map((t) => t.name) },
    ]);
    expect(two.A.queries.filter((q) => q.includes('from declared_tool_list'))).toHaveLength(1);
    await two.A.ok(EnableDocument, { input: { operationId: w.ops.lookup!.id } }, w.operator);
  });

  it('should store the list again when it is gone while the instance remembers it as stored', async () => {
    const w = await ownWorld('Lists Lost');
    await begin(two.A, w, 'lost-1');
    // As a crash that loses the tail of unflushed WAL would: the list is no longer there.
    await sql('delete from declared_tool_list where workspace_id = ?', [rawId(w.workspaceId)]);
    two.A.resetQueries();
    const turn = await begin(two.A, w, 'lost-2');
    const begins = two.A.queries.filter((q) => q.includes('insert into turn '));
    expect(begins.map(storesList)).toEqual([false, true]);
    expect((await lists(w)).map((l) => l.digest)).toEqual([await digestOf(turn.turnId)]);
    const answer = await call(two.B, w, turn.turnId, lookupOf(turn), { email: 'x@example.com' });
    expect(answer).toMatchObject({ status: 'SUCCEEDED', recorded: true });
    // The earlier turn of the same list has it back too (same workspace, same digest).
    const earlier = await sql<{ id: string }>(
      `select id from turn where conversation_id = 'lost-1' and workspace_id = ?`,
      [rawId(w.workspaceId)],
    );
    const again = await call(two.B, w, toGlobalId('Turn', earlier[0]!.id), lookupOf(turn), {
      email: 'y@example.com',
    });
    expect(again).toMatchObject({ status: 'SUCCEEDED', recorded: true });
  });
});

describe('the declared-tools lists migration', () => {
  it("should move existing turns' records into one list per workspace and content, readable as before", async () => {
    const url = await createEmptyDatabase();
    const orm = await openOrm({ databaseUrl: url });
    try {
      await orm.getMigrator().up({ to: 'Migration20261201130000UnchangedDiscovery' });
      const ws = uuidv7();
      const asst = uuidv7();
      const turns = [uuidv7(), uuidv7(), uuidv7()];
      const one = [{ name: 'crm__lookup', operationId: uuidv7(), operationKey: 'crm.lookup' }];
      const two = [...one, { name: 'finish_turn', operationId: null, operationKey: null }];
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`insert into workspace (id, name, created_at) values ($1, 'w', now())`, [ws]);
        await c.query(
          `insert into assistant (id, workspace_id, name, created_at) values ($1, $2, 'a', now())`,
          [asst, ws],
        );
        for (const [i, declared] of [one, one, two].entries()) {
          await c.query(
            `insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools, call_seq)
             values ($1, $2, $3, 'c', now(), $4, 0)`,
            [turns[i], ws, asst, JSON.stringify(declared)],
          );
        }
        await orm.getMigrator().up();
        const stored = await c.query<{ digest: string; tools: unknown }>(
          'select digest, tools from declared_tool_list where workspace_id = $1',
          [ws],
        );
        expect(
          stored.rows.map((r) => r.tools).sort((a, b) => JSON.stringify(a).length - JSON.stringify(b).length),
        ).toEqual([one, two]);
        const columns = await c.query<{ name: string }>(
          `select column_name as name from information_schema.columns where table_name = 'turn' and column_name like 'declared%'`,
        );
        expect(columns.rows.map((r) => r.name)).toEqual(['declared_tools_digest']);
        const read = await c.query<{ id: string; tools: unknown }>(
          `select t.id, l.tools from turn t join declared_tool_list l
             on l.workspace_id = t.workspace_id and l.digest = t.declared_tools_digest where t.workspace_id = $1`,
          [ws],
        );
        expect(Object.fromEntries(read.rows.map((r) => [r.id, r.tools]))).toEqual({
          [turns[0]!]: one,
          [turns[1]!]: one,
          [turns[2]!]: two,
        });
      } finally {
        await c.end();
      }
    } finally {
      await orm.close();
    }
  });
});
