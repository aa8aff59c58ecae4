/**
 * The ledger invariant under a database outage (DESIGN.md rule 14): PostgreSQL is killed while a
 * WRITE is at the tool server. The runtime gets the tool's real result and `recorded: false`; the
 * tool ran exactly once; after PostgreSQL and the service restart, the WRITE's ledger intent is
 * there and closed as OUTCOME_UNKNOWN, with a TurnCall and the event that closes its CALL_STARTED.
 *
 * The service's record retries run on a FakeClock (test/support/fake-clock.ts): the test moves
 * through their whole schedule while PostgreSQL is down, without waiting it out. Two waits stay
 * on real time, because they wait for something outside the service: the restart of PostgreSQL
 * (its old backends must exit first), and the age of the intent on the DATABASE's clock, which
 * the sweep at start reads (`now()` in PostgreSQL, not the service's clock).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgDriver from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../src/db/embedded.js';
import { LedgerDocument, TurnCallsDocument } from '../../generated/graphql.js';
import { DEFAULT_RECORD_RETRY_DELAYS_MS } from '../../../src/turns/call-record.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';
import { FakeClock } from '../../support/fake-clock.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { begin, buildWorld, call, connectTools, sleep } from '../../support/turns.js';
import { waitUntil } from '../../support/wait.js';

let dir = '';
let pg: EmbeddedPostgres | null = null;
let peer: SdkServerHandle | null = null;
const apps: TestApp[] = [];

afterAll(async () => {
  releaseTransfer();
  for (const app of apps) await app.stop().catch(() => undefined);
  await peer?.close();
  await pg?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function killPostmaster(dataDir: string): Promise<void> {
  const state = JSON.parse(await readFile(join(dataDir, 'embedded-postgres.json'), 'utf8')) as {
    pgdata: string;
  };
  const pid = Number((await readFile(join(state.pgdata, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  process.kill(pid, 'SIGKILL');
}

/** The old backends exit once they see their postmaster gone; until then a new one may refuse to start. */
async function restartPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres(dataDir);
    } catch (err) {
      if (attempt >= 10) throw err;
      await sleep(500);
    }
  }
}

/** Waits until every open ledger intent is older than `ms` by the database's own clock. */
async function intentsOlderThan(url: string, ms: number): Promise<void> {
  const client = new pgDriver.Client({ connectionString: url });
  await client.connect();
  try {
    await waitUntil(async () => {
      const { rows } = await client.query<{ young: number }>(
        `select count(*)::int as young from ledger_entry
          where status = 'RUNNING' and created_at >= now() - make_interval(secs => $1::double precision / 1000)`,
        [ms + 100],
      );
      return rows[0]!.young === 0;
    });
  } finally {
    await client.end();
  }
}

let releaseTransfer: () => void = () => undefined;
/** The transfer answers once the database is dead: it is at the tool server throughout the kill. */
const transferGate = new Promise<void>((resolve) => {
  releaseTransfer = resolve;
});

describe('a WRITE while PostgreSQL dies', () => {
  it(
    'should give the runtime the real result with recorded: false, run the tool once, and close the intent as OUTCOME_UNKNOWN after restart',
    { timeout: 180_000 },
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'ct-ledger-outage-'));
      pg = await startEmbeddedPostgres(dir);
      let ran = 0;
      peer = await startSdkServer({
        stateful: false,
        json: true,
        tools: [
          {
            name: 'transfer',
            description: 'Moves money (a WRITE that answers when released)',
            handler: async () => {
              ran++;
              await transferGate;
              return { content: [{ type: 'text', text: 'transferred 100 EUR' }] };
            },
          },
        ],
      });
      const env = { LEDGER_SWEEP_AFTER_MS: '1000' };
      const clock = new FakeClock();
      const first = await startTestApp({ databaseUrl: pg.url, env, clock, captureLogs: true });
      apps.push(first);
      const w = await buildWorld(first, peer.url, 'Bank', 10_000);
      await connectTools(first, w);
      const turn = await begin(first, w, 'outage');

      const pending = call(first, w, turn.turnId, 'bank__transfer', { amount: 100, to: 'DE00' });
      // The request is at the tool server, so its intent is stored (a WRITE goes out only then, and
      // no pause here may hide it otherwise): the database dies now, then the tool answers.
      await waitUntil(() => ran === 1);
      await killPostmaster(dir);
      // Dead means the service's own queries fail (its backends exit once they notice).
      await waitUntil(() =>
        first.app.services.orm.em
          .fork()
          .getConnection()
          .execute('select 1')
          .then(
            () => false,
            () => true,
          ),
      );
      releaseTransfer();
      const result = await pending;

      expect(result).toMatchObject({
        ok: true,
        status: 'SUCCEEDED',
        recorded: false,
        content: [{ type: 'text', text: 'transferred 100 EUR' }],
      });
      expect(result.callId).not.toBeNull();

      // The record is retried in the background, each retry at its time on the service's clock
      // and none before it, until the schedule is spent; the intent stays for the sweep.
      const said = (msg: string) => first.logs.filter((line) => line.includes(msg)).length;
      await waitUntil(() => said('retrying in the background') === 1 && clock.pending > 0);
      const timers = clock.pending;
      for (const [retry, delay] of DEFAULT_RECORD_RETRY_DELAYS_MS.entries()) {
        const tries = said('recording a tool call failed');
        await clock.advance(delay - 1);
        expect(said('recording a tool call failed')).toBe(tries);
        await clock.advance(1);
        // Failed again: the next retry is set, except after the last.
        const next = retry < DEFAULT_RECORD_RETRY_DELAYS_MS.length - 1 ? timers : timers - 1;
        await waitUntil(() => said('recording a tool call failed') === tries + 1 && clock.pending === next);
      }
      await waitUntil(() => said('gave up recording a tool call') === 1);
      expect(said('a tool call was recorded late')).toBe(0);

      await first.stop();
      apps.length = 0;
      await pg.stop();
      pg = await restartPostgres(dir);
      // The sweep at start closes intents older than LEDGER_SWEEP_AFTER_MS on the database's clock: a
      // restart quicker than that would leave it open. Wait for the age there, not by a local sleep.
      await intentsOlderThan(pg.url, Number(env.LEDGER_SWEEP_AFTER_MS));
      const second = await startTestApp({ databaseUrl: pg.url, env });
      apps.push(second);
      const admin = await second.token(Role.ADMIN);

      // The sweep ran at start: the intent has its OUTCOME_UNKNOWN outcome.
      const ledger = await second.ok(LedgerDocument, { id: w.workspaceId }, admin);
      expect(ledger.workspace!.ledger.nodes).toEqual([
        {
          turnCallId: result.callId,
          operationKey: 'connector.bank.transfer',
          arguments: { amount: 100, to: 'DE00' },
          status: 'OUTCOME_UNKNOWN',
          attempts: 0,
          message: expect.stringMatching(/never recorded/),
          outcomeBy: 'SWEEP',
        },
      ]);
      const calls = await second.ok(TurnCallsDocument, { id: turn.turnId }, admin);
      expect(calls.turn!.calls.nodes).toEqual([
        expect.objectContaining({
          seq: 1,
          declaredName: 'bank__transfer',
          status: 'OUTCOME_UNKNOWN',
          risk: 'WRITE',
          arguments: { amount: 100, to: 'DE00' },
        }),
      ]);
      const events = await second.app.services.orm.em
        .getConnection()
        .execute<{ type: string; status: string | null }[]>(
          `select type, payload->>'status' as status from turn_event where call_id = ? order by seq`,
          [rawId(result.callId!)],
        );
      expect(events).toEqual([
        { type: 'CALL_STARTED', status: null },
        { type: 'CALL_FINISHED', status: 'OUTCOME_UNKNOWN' },
      ]);
      // A second sweep finds nothing more to close.
      const again = await second.app.services.orm.em
        .getConnection()
        .execute<{ n: string }[]>(`select count(*) as n from ledger_outcome`);
      expect(Number(again[0]!.n)).toBe(1);
      // The tool ran exactly once: no retry of a WRITE, no replay after the restart.
      expect(ran).toBe(1);
      expect(peer.count('tools/call')).toBe(1);
    },
  );
});
