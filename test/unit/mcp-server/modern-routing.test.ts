/**
 * Which POSTs the endpoint hands to its 2026-07-28 leg (src/mcp-server/protocol.ts
 * isModernRequest), and the version header refusal naming every revision served (issue 27).
 */
import { describe, expect, it } from 'vitest';
import { isModernRequest, versionHeaderProblem } from '../../../src/mcp-server/protocol.js';

const claim = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };

describe('isModernRequest', () => {
  it("a request whose _meta claims a version is modern, whatever the version (its error is that revision's)", () => {
    expect(
      isModernRequest(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: claim } }),
    ).toBe(true);
    const other = { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    expect(isModernRequest('2099-01-01', { method: 'tools/list', params: { _meta: other } })).toBe(true);
  });

  it('the modern header without the claim is modern (the missing _meta version is its error)', () => {
    expect(isModernRequest('2026-07-28', { method: 'tools/list', params: {} })).toBe(true);
    expect(isModernRequest('2026-07-28', { method: 'tools/list' })).toBe(true);
  });

  it('initialize, legacy headers, batches, bodies that are not objects and inherited keys are legacy', () => {
    expect(
      isModernRequest(undefined, { method: 'initialize', params: { protocolVersion: '2025-06-18' } }),
    ).toBe(false);
    expect(isModernRequest('2025-11-25', { method: 'tools/list', params: { _meta: {} } })).toBe(false);
    expect(isModernRequest('2026-07-28', [{ method: 'tools/list', params: { _meta: claim } }])).toBe(false);
    expect(isModernRequest(undefined, null)).toBe(false);
    expect(isModernRequest(undefined, 'tools/list')).toBe(false);
    expect(
      isModernRequest(undefined, { method: 'tools/list', params: { _meta: Object.create(claim) as object } }),
    ).toBe(false);
    expect(isModernRequest(undefined, { method: 'tools/list', params: { _meta: null } })).toBe(false);
  });
});

describe('versionHeaderProblem', () => {
  it('accepts every served revision and names them all when refusing', () => {
    for (const v of [undefined, '2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'])
      expect(versionHeaderProblem(v)).toBeNull();
    const problem = versionHeaderProblem('1999-01-01')!;
    expect(problem).toContain('2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26');
    expect(versionHeaderProblem('x'.repeat(10_000))!.length).toBeLessThan(200);
  });
});
