/**
 * beginTurn commits its Turn without waiting for the disk (synchronous_commit off for that one
 * transaction, issue 15): the setting must never outlive it, or every record that a pooled
 * connection commits afterwards (a call's TurnCall, a WRITE's ledger intent) would be answered
 * before it is durable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { begin, call, startCrmWorld, type CrmFixture, type World } from '../../support/turns.js';

interface PgClient {
  query(text: string): Promise<{ rows: Record<string, unknown>[] }>;
}
interface KnexClient {
  pool: { max: number };
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
}

let t: TestApp;
let w: World;

let fixture: CrmFixture;

beforeAll(async () => {
  fixture = await startCrmWorld('CRM');
  ({ t, w } = fixture);
});

afterAll(() => fixture.stop());

describe("beginTurn's commit", () => {
  it('should leave every pooled connection committing synchronously, and its turns usable at once', async () => {
    t.resetQueries();
    const turns = await Promise.all(Array.from({ length: 24 }, (_, i) => begin(t, w, `commit-${i}`)));
    // The statement asks for the asynchronous commit of its own transaction only (is_local).
    const beginStatements = t.queries.filter((q) => q.includes('insert into turn '));
    expect(beginStatements).toHaveLength(turns.length);
    for (const q of beginStatements) expect(q).toContain("set_config('synchronous_commit', 'off', true)");

    // Every connection of the pool at once: none kept the setting.
    const knex = t.app.services.orm.em.getConnection().getKnex().client as unknown as KnexClient;
    const held = await Promise.all(Array.from({ length: knex.pool.max }, () => knex.acquireConnection()));
    try {
      const settings = await Promise.all(
        held.map(async (c) => (await c.query('show synchronous_commit')).rows[0]!.synchronous_commit),
      );
      expect(settings).toEqual(held.map(() => 'on'));
    } finally {
      await Promise.all(held.map((c) => knex.releaseConnection(c)));
    }

    // The turns are there for everyone (another connection reads them), and calls on them record.
    const rows = await t.app.services.orm.em
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from turn where id in (?)', [
        turns.map((x) => rawId(x.turnId)),
      ]);
    expect(Number(rows[0]!.n)).toBe(turns.length);
    const answer = await call(t, w, turns[0]!.turnId, 'crm__update', { email: 'a@example.com', plan: 'pro' });
    expect(answer).toMatchObject({ ok: true, recorded: true });
  });
});
