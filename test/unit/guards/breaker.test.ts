import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BREAKER_RULE,
  FailureCounter,
  gate,
  nextCooldownMs,
  outcomeOf,
  type BreakerRecord,
} from '../../../src/guards/breaker.js';
import { CallStatus } from '../../../src/turns/call-status.js';

const T0 = 1_800_000_000_000;

function record(over: Partial<BreakerRecord>): BreakerRecord {
  return {
    scope: 'CONNECTION',
    scopeId: 'c1',
    enabled: true,
    forced: null,
    state: 'CLOSED',
    openedAt: null,
    reason: null,
    retryAtMs: null,
    cooldownMs: null,
    probeUntilMs: null,
    ...over,
  };
}

describe('what an outcome means to a breaker', () => {
  it.each([
    [CallStatus.TIMEOUT, 'failure'],
    [CallStatus.UPSTREAM_ERROR, 'failure'],
    [CallStatus.SUCCEEDED, 'answer'],
    [CallStatus.TOOL_ERROR, 'answer'],
    [CallStatus.REJECTED, 'ignored'],
    [CallStatus.UNAVAILABLE, 'ignored'],
    [CallStatus.RATE_LIMITED, 'ignored'],
  ])('should count %s as %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });
});

describe('FailureCounter', () => {
  it("should trip after the rule's failures in a row, and not one sooner", () => {
    const c = new FailureCounter(DEFAULT_BREAKER_RULE);
    for (let i = 1; i < DEFAULT_BREAKER_RULE.consecutiveFailures; i++)
      expect(c.record(T0 + i, true)).toBeNull();
    expect(c.record(T0 + 10, true)).toBe('5 calls in a row failed (timeout or upstream error)');
  });

  it('should start the run again after an answer', () => {
    const c = new FailureCounter(DEFAULT_BREAKER_RULE);
    for (let i = 0; i < 4; i++) c.record(T0 + i, true);
    c.record(T0 + 5, false);
    for (let i = 0; i < 4; i++) expect(c.record(T0 + 10 + i, true)).toBeNull();
  });

  it('should trip on the error rate over the window once it holds the minimum of calls', () => {
    const rule = { ...DEFAULT_BREAKER_RULE, consecutiveFailures: 1_000 };
    const c = new FailureCounter(rule);
    // Alternating answer and failure: never 5 in a row, but half of the calls fail.
    let reason: string | null = null;
    let n = 0;
    for (; n < 40 && reason === null; n++) reason = c.record(T0 + n * 100, n % 2 === 1);
    expect(n).toBe(rule.minCalls);
    expect(reason).toBe('10 of the last 20 calls in 60 s failed (timeout or upstream error)');
  });

  it('should forget failures older than the window (fake time, no sleep)', () => {
    const rule = { ...DEFAULT_BREAKER_RULE, consecutiveFailures: 1_000 };
    const c = new FailureCounter(rule);
    for (let i = 0; i < 19; i++) c.record(T0 + i, true);
    // Two windows later, the old failures are gone: one failure among few calls trips nothing.
    expect(c.record(T0 + 2 * rule.windowMs, true)).toBeNull();
    for (let i = 1; i < 10; i++) expect(c.record(T0 + 2 * rule.windowMs + i, false)).toBeNull();
  });
});

describe('gate', () => {
  it('should pass a breaker with no record, a closed one and a disabled one', () => {
    expect(gate(undefined, T0)).toEqual({ kind: 'pass' });
    expect(gate(record({}), T0)).toEqual({ kind: 'pass' });
    expect(gate(record({ enabled: false, state: 'OPEN', retryAtMs: T0 + 1 }), T0)).toEqual({ kind: 'pass' });
  });

  it('should refuse an open breaker until its cool-down ends, then ask for a probe', () => {
    const open = record({ state: 'OPEN', retryAtMs: T0 + 30_000 });
    expect(gate(open, T0)).toEqual({ kind: 'refuse', retryAfterMs: 30_000, byOperator: false });
    expect(gate(open, T0 + 30_000)).toEqual({ kind: 'probe' });
  });

  it('should refuse while a probe is out, and probe again once it is given up', () => {
    const half = record({ state: 'HALF_OPEN', retryAtMs: T0, probeUntilMs: T0 + 25_000 });
    expect(gate(half, T0 + 1)).toMatchObject({ kind: 'refuse' });
    expect(gate(half, T0 + 25_000)).toEqual({ kind: 'probe' });
  });

  it("should follow the operator's force over the state", () => {
    expect(gate(record({ forced: 'OPEN' }), T0)).toEqual({
      kind: 'refuse',
      retryAfterMs: null,
      byOperator: true,
    });
    expect(gate(record({ forced: 'CLOSED', state: 'OPEN', retryAtMs: T0 + 1 }), T0)).toEqual({
      kind: 'pass',
    });
  });

  it('should double the cool-down after a failed probe, up to the maximum', () => {
    expect(nextCooldownMs(30_000, DEFAULT_BREAKER_RULE)).toBe(60_000);
    expect(nextCooldownMs(200_000, DEFAULT_BREAKER_RULE)).toBe(300_000);
  });
});
