/**
 * CallGuard against a database that the test plays (a SqlRunner that answers the loads and fails
 * or grants the rest): what a call pays with nothing configured, and what happens when the database
 * cannot be reached. The real statements run in test/integration/turns/guards.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Notifier, SqlRunner } from '../../../src/db/notifier.js';
import { CallGuard } from '../../../src/guards/call-guard.js';
import { DEFAULT_BREAKER_RULE } from '../../../src/guards/breaker.js';
import { createLogger } from '../../../src/logger.js';
import { systemClock } from '../../../src/clock.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { CallStatus } from '../../../src/turns/call-status.js';
import type { CachedOperation } from '../../../src/turns/tool-cache.js';

const CONNECTION = '00000000-0000-4000-8000-00000000000c';
const WORKSPACE = '00000000-0000-4000-8000-00000000000w';

function op(risk: 'READ' | 'WRITE', id = '00000000-0000-4000-8000-0000000000o1'): CachedOperation {
  return {
    id,
    key: 'connector.crm.update',
    name: 'update',
    description: null,
    inputSchema: {},
    checkSchema: null,
    risk,
    idempotent: false,
    binding: null,
    connection: { id: CONNECTION, slug: 'crm', timeoutMs: null } as CachedOperation['connection'],
  };
}

const notifier = { onGuards: () => () => undefined, onReset: () => () => undefined } as unknown as Notifier;

/** A database with `limits` stored, where every other statement fails as an unreachable one does. */
function database(limits: object[]): { sql: SqlRunner; statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    sql: {
      execute: async (text: string) => {
        statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
        if (/^select .* from call_limit$/s.test(text.trim())) return limits;
        if (/^select .* from call_(breaker|cap)$/s.test(text.trim())) return [];
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    },
  };
}

async function guardOn(limits: object[], clock: { t: number }) {
  const db = database(limits);
  const guard = new CallGuard(() => db.sql, notifier, createLogger('silent'), new Metrics(), {
    clock: { ...systemClock, now: () => clock.t },
  });
  await guard.start();
  return { guard, db };
}

const LIMIT = {
  id: '00000000-0000-4000-8000-0000000000l1',
  scope: 'CONNECTION',
  workspace_id: WORKSPACE,
  connection_id: CONNECTION,
  operation_id: null,
  for_workspace_id: null,
  calls: 100,
  period_ms: 60_000,
  burst: 5,
};

describe('CallGuard', () => {
  it('should let a call with no limit or breaker through at once, with no promise and no statement', async () => {
    const clock = { t: 1_800_000_000_000 };
    const { guard, db } = await guardOn([], clock);
    const before = db.statements.length;
    const admitted = guard.admit(op('WRITE'), WORKSPACE, 'crm__update');
    expect(admitted).not.toBeInstanceOf(Promise);
    expect(admitted).toEqual({ ok: true, probes: null });
    guard.report(op('WRITE'), { ok: true, probes: null }, CallStatus.SUCCEEDED);
    expect(db.statements.length).toBe(before);
  });

  it('should fail closed for a WRITE and open for a READ when the database is unreachable', async () => {
    const clock = { t: 1_800_000_000_000 };
    const { guard } = await guardOn([LIMIT], clock);
    const write = await guard.admit(op('WRITE'), WORKSPACE, 'crm__update');
    expect(write.ok).toBe(false);
    if (write.ok) return;
    expect(write.result.status).toBe(CallStatus.UNAVAILABLE);
    expect(write.result.message).toBe(
      'The platform could not check the limits of crm__update, so it was not called. Nothing was done; it may work if tried again later.',
    );
    expect(await guard.admit(op('READ'), WORKSPACE, 'crm__lookup')).toEqual({ ok: true, probes: null });
  });

  it('should keep a breaker open on this instance when its opening cannot be stored', async () => {
    const clock = { t: 1_800_000_000_000 };
    const { guard } = await guardOn([], clock);
    for (let i = 0; i < DEFAULT_BREAKER_RULE.consecutiveFailures; i++) {
      clock.t += 10;
      guard.report(op('READ'), { ok: true, probes: null }, CallStatus.TIMEOUT);
    }
    await new Promise((r) => setImmediate(r));
    expect(guard.breaker(CONNECTION)?.state).toBe('OPEN');
    const refused = await guard.admit(op('READ'), WORKSPACE, 'crm__lookup');
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.result.status).toBe(CallStatus.UNAVAILABLE);
    expect(refused.result.retryAfterMs).toBe(DEFAULT_BREAKER_RULE.cooldownMs);
    // Its cool-down over, the probe cannot be claimed without the database: still refused.
    clock.t += DEFAULT_BREAKER_RULE.cooldownMs;
    expect((await guard.admit(op('READ'), WORKSPACE, 'crm__lookup')).ok).toBe(false);
  });
});
