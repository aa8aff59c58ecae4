/**
 * The platform's call budget, written out as numbers (issue 25, item 8): "Calls time out in
 * **10 seconds** by default, with one retry" (DESIGN.md rule 7). Every place a default budget is
 * taken from is held to 10,000 ms here, and the retry rule to two sends at most, so that changing
 * either (to 60 s, say, or to two retries) fails this test rather than passing the suite.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTBOUND_TIMEOUT_MS, loadConfig } from '../../../src/config.js';
import { OutboundClient } from '../../../src/http/outbound.js';
import { CALL_TIMEOUT_MS } from '../../../src/limits.js';
import {
  DEFAULT_MCP_TIMEOUT_MS,
  timeoutOf,
  type McpEndpoint,
  type McpSettings,
} from '../../../src/mcp/types.js';
import { MAX_ATTEMPTS, mayRetry, type FailureKind } from '../../../src/operations/retry.js';
import type { Risk } from '../../../src/operations/types.js';

const TEN_SECONDS = 10_000;

describe('the default call budget', () => {
  it('should be 10 s per attempt wherever a default is taken', async () => {
    expect(CALL_TIMEOUT_MS).toBe(TEN_SECONDS);
    expect(DEFAULT_OUTBOUND_TIMEOUT_MS).toBe(TEN_SECONDS);
    expect(DEFAULT_MCP_TIMEOUT_MS).toBe(TEN_SECONDS);
    // The configuration without OUTBOUND_TIMEOUT_MS, as the service starts with it.
    expect(loadConfig({}).outbound.timeoutMs).toBe(TEN_SECONDS);
    expect(loadConfig({ NODE_ENV: 'test' }).outbound.timeoutMs).toBe(TEN_SECONDS);
    const outbound = new OutboundClient();
    try {
      expect(outbound.timeoutMs).toBe(TEN_SECONDS);
    } finally {
      await outbound.close();
    }
    // A connection without its own timeoutMs gets the configured budget.
    const settings = { timeoutMs: loadConfig({}).outbound.timeoutMs } as McpSettings;
    expect(timeoutOf(settings, { timeoutMs: undefined } as unknown as McpEndpoint)).toBe(TEN_SECONDS);
  });
});

describe('the one-retry rule', () => {
  /** Sends made for a call whose every attempt fails with `failure`, asking mayRetry each time. */
  function sends(failure: FailureKind, risk: Risk, idempotent = false): number {
    let attempts = 1;
    while (
      mayRetry({
        attempts,
        resends: 0,
        failure,
        reachedServer: failure !== 'connect_failed',
        risk,
        idempotent,
      }).retry
    )
      attempts++;
    return attempts;
  }

  it('should send a READ twice at most, a WRITE that may have acted once, one never reached twice', () => {
    expect(MAX_ATTEMPTS).toBe(2);
    expect(sends('timeout', 'READ')).toBe(2);
    expect(sends('connection_broken', 'READ')).toBe(2);
    expect(sends('timeout', 'WRITE', true)).toBe(2);
    expect(sends('timeout', 'WRITE')).toBe(1);
    expect(sends('connect_failed', 'WRITE')).toBe(2);
  });
});
