import { describe, expect, it } from 'vitest';
import { nextCallMark } from '../../../src/turns/ledger-sweep.js';

describe('nextCallMark', () => {
  it('should move to the last event of a chunk when every event in it is old enough', () => {
    expect(nextCallMark(10n, { due: 3, lastSeq: '500', firstRecent: null })).toBe(500n);
  });
  it('should stop just before the first event that is not due yet', () => {
    expect(nextCallMark(10n, { due: 0, lastSeq: '500', firstRecent: '42' })).toBe(41n);
    expect(nextCallMark(10n, { due: 0, lastSeq: '500', firstRecent: '11' })).toBe(10n);
  });
  it('should stay while a batch was full, and on an empty chunk', () => {
    expect(nextCallMark(10n, { due: 500, lastSeq: '900', firstRecent: null })).toBe(10n);
    expect(nextCallMark(10n, { due: 0, lastSeq: null, firstRecent: null })).toBe(10n);
  });
  it('should never move backwards, and handle sequence numbers past 2^53', () => {
    expect(nextCallMark(900n, { due: 0, lastSeq: '800', firstRecent: null })).toBe(900n);
    expect(nextCallMark(2n ** 60n, { due: 0, lastSeq: (2n ** 60n + 5n).toString(), firstRecent: null })).toBe(
      2n ** 60n + 5n,
    );
  });
});
