/**
 * A WRITE goes out only once its record (CALL_STARTED and the ledger intent) has committed
 * (DESIGN.md rule 14, docs/ledger.md). The record is stalled by a second connection holding the
 * turn's row lock; the test waits for the event (the service's statement blocked on that lock, seen
 * in `pg_blocking_pids`, support/locks.ts), not for time. Then:
 * - the stalled record fails (its statement is cancelled): the call must answer UNAVAILABLE having
 *   sent nothing. The answer comes after any dispatch would have finished, so a WRITE sent
 *   alongside its record would show up in the tool server's count: no timing is involved;
 * - the stalled record is released: the call succeeds, and the tool server, when the request
 *   reaches it, already sees the committed intent from a third connection.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { holdLock } from '../../support/locks.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, CRM_TOOLS, type World } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;
let w: World;
/** The ledger intents of this test's turns that the tool server saw committed when each request arrived. */
const seenAtArrival: number[] = [];
let observer: pg.Client;

beforeAll(async () => {
  t = await startTestApp();
  observer = new pg.Client({ connectionString: t.config.databaseUrl! });
  await observer.connect();
  peer = await startSdkServer({
    stateful: false,
    json: true,
    tools: CRM_TOOLS.map((tool) =>
      tool.name === 'update'
        ? {
            ...tool,
            handler: async (args) => {
              const { rows } = await observer.query<{ n: string }>(
                `select count(*) as n from ledger_entry where workspace_id = $1 and arguments->>'email' = $2`,
                [rawId(w.workspaceId), args.email],
              );
              seenAtArrival.push(Number(rows[0]!.n));
              return { content: [{ type: 'text', text: 'updated' }] };
            },
          }
        : tool,
    ),
  });
  w = await buildWorld(t, peer.url, 'CRM');
  await connectTools(t, w);
});

afterAll(async () => {
  await observer.end();
  await t.stop();
  await peer.close();
});

/** Holds the turn's row lock: the call's record (CALL_STARTED, the intent) waits behind it. */
const holdTurn = (turnId: string) =>
  holdLock(t.config.databaseUrl!, 'select 1 from turn where id = $1 for update', [rawId(turnId)]);

describe('a WRITE and its record', () => {
  it('should send nothing when its record cannot be written', async () => {
    const turn = await begin(t, w, 'record stalled then refused');
    const lock = await holdTurn(turn.turnId);
    try {
      const pending = call(t, w, turn.turnId, 'crm__update', { email: 'refused@b.c', plan: 'pro' });
      const [recording] = await lock.waiters(1);
      expect(peer.count('tools/call')).toBe(0);
      await observer.query('select pg_cancel_backend($1)', [recording]);
      const result = await pending;
      expect(result).toMatchObject({ ok: false, status: 'UNAVAILABLE', recorded: false, callId: null });
      expect(JSON.stringify(result.content)).toMatch(
        /could not record the call to crm__update, so it was not made/,
      );
    } finally {
      await lock.release();
    }
    // The answer came after any request the call could have sent: none reached the tool server.
    expect(peer.count('tools/call')).toBe(0);
    expect(seenAtArrival).toEqual([]);
  });

  it('should send the request only once its intent is committed', async () => {
    const turn = await begin(t, w, 'record stalled then released');
    const lock = await holdTurn(turn.turnId);
    const pending = call(t, w, turn.turnId, 'crm__update', { email: 'released@b.c', plan: 'pro' });
    try {
      await lock.waiters(1);
      expect(peer.count('tools/call')).toBe(0);
    } finally {
      await lock.release();
    }
    expect(await pending).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: true });
    expect(peer.count('tools/call')).toBe(1);
    // When the request arrived, its intent was already visible to another connection.
    expect(seenAtArrival).toEqual([1]);
  });
});
