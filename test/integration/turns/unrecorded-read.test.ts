/**
 * A READ whose result cannot be recorded (issue 11 leftovers): its CALL_STARTED was stored, but every
 * try of its finish statement failed (here a trigger refuses the TurnCall, as a database outage
 * would). The runtime gets the tool's result with `recorded: false`; once the call is older than
 * LEDGER_SWEEP_AFTER_MS, the sweep gives it an OUTCOME_UNKNOWN TurnCall and the CALL_FINISHED that
 * closes its CALL_STARTED, once, and leaves recorded calls and recent ones alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { CALL_OUTCOME_UNKNOWN_MESSAGE, LedgerSweep } from '../../../src/turns/ledger-sweep.js';
import { TurnCallsDocument } from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { CRM_TOOLS, begin, buildWorld, call, connectTools } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;

beforeAll(async () => {
  t = await startTestApp({ databaseUrl: await createEmptyDatabase() });
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  // The outage, made exact: a READ's record with this email cannot be written, however often tried.
  await t.app.services.orm.em.getConnection().execute(`
    create function test_refuse_call() returns trigger language plpgsql as $$
    begin raise exception 'the database is down (test)'; end; $$;
    create trigger test_refuse_call before insert on turn_call for each row
      when (new.status <> 'OUTCOME_UNKNOWN' and new.arguments->>'email' = 'lost@example.com')
      execute function test_refuse_call();`);
});

afterAll(async () => {
  await t?.stop();
  await peer?.close();
});

describe('a READ whose result is never recorded', () => {
  it(
    'should be closed by the sweep as OUTCOME_UNKNOWN with the CALL_FINISHED its CALL_STARTED lacks',
    { timeout: 90_000 },
    async () => {
      const w = await buildWorld(t, peer.url);
      await connectTools(t, w);
      const turn = await begin(t, w);
      const kept = await call(t, w, turn.turnId, 'crm__lookup', { email: 'kept@example.com' });
      expect(kept).toMatchObject({ ok: true, recorded: true });
      const lost = await call(t, w, turn.turnId, 'crm__lookup', { email: 'lost@example.com' });
      expect(lost).toMatchObject({ ok: true, status: 'SUCCEEDED', recorded: false });
      expect(lost.callId).not.toBeNull();

      const events = async () =>
        t.app.services.orm.em
          .getConnection()
          .execute<{ type: string; status: string | null }[]>(
            `select type, payload->>'status' as status from turn_event where call_id = ? order by seq`,
            [rawId(lost.callId!)],
          );
      expect(await events()).toEqual([{ type: 'CALL_STARTED', status: null }]);

      const logger = createLogger('silent');
      // Not due yet: a call that may still be recording is never closed.
      const early = new LedgerSweep(t.app.services.orm, logger, { afterMs: 600_000, everyMs: 60_000 });
      expect(await early.closeUnrecordedCalls()).toBe(0);

      // A minute passes, on the database's clock (which the sweep reads): this test owns the database.
      // The service's own sweep (due after 10 minutes) still leaves it alone.
      await t.app.services.orm.em
        .getConnection()
        .execute(`update turn_event set created_at = created_at - interval '1 minute'`);
      const sweep = new LedgerSweep(t.app.services.orm, logger, { afterMs: 30_000, everyMs: 60_000 });
      expect(await sweep.closeUnrecordedCalls()).toBe(1);
      expect(await sweep.closeUnrecordedCalls()).toBe(0);
      // Another instance (its mark starts at zero) finds nothing left either.
      const other = new LedgerSweep(t.app.services.orm, logger, { afterMs: 30_000, everyMs: 60_000 });
      expect(await other.closeUnrecordedCalls()).toBe(0);

      expect(await events()).toEqual([
        { type: 'CALL_STARTED', status: null },
        { type: 'CALL_FINISHED', status: 'OUTCOME_UNKNOWN' },
      ]);
      const calls = await t.ok(TurnCallsDocument, { id: turn.turnId }, w.admin);
      expect(calls.turn!.calls.nodes).toEqual([
        expect.objectContaining({ seq: 1, status: 'SUCCEEDED', arguments: { email: 'kept@example.com' } }),
        expect.objectContaining({
          seq: 2,
          declaredName: 'crm__lookup',
          status: 'OUTCOME_UNKNOWN',
          risk: 'READ',
          attempts: 0,
          message: CALL_OUTCOME_UNKNOWN_MESSAGE,
          arguments: { email: 'lost@example.com' },
        }),
      ]);
    },
  );
});
