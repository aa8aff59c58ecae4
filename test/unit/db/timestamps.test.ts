import { describe, expect, it } from 'vitest';
import { fromSqlTimestamp, fromSqlTimestampOrNull } from '../../../src/db/timestamps.js';

describe('timestamps read through raw SQL', () => {
  it.each([
    ['2026-11-30 20:20:45.184735+00', '2026-11-30T20:20:45.184Z'],
    ['2026-11-30 20:20:45+00', '2026-11-30T20:20:45.000Z'],
    ['2026-11-30 22:20:45.5+02', '2026-11-30T20:20:45.500Z'],
    ['2026-11-30 15:50:45.1-04:30', '2026-11-30T20:20:45.100Z'],
    ['2026-11-30 20:20:45.184735', '2026-11-30T20:20:45.184Z'],
    ['2026-11-30T20:20:45.184Z', '2026-11-30T20:20:45.184Z'],
    ['2026-01-01 00:00:00+00:00:00', '2026-01-01T00:00:00.000Z'],
  ])('should read %s as %s', (text, iso) => {
    expect(fromSqlTimestamp(text).toISOString()).toBe(iso);
  });

  it('should pass a Date through and keep null as null', () => {
    const d = new Date('2026-11-30T20:20:45.184Z');
    expect(fromSqlTimestamp(d)).toBe(d);
    expect(fromSqlTimestampOrNull(null)).toBeNull();
    expect(fromSqlTimestampOrNull('2026-11-30 20:20:45+00')?.toISOString()).toBe('2026-11-30T20:20:45.000Z');
  });

  it.each(['', 'yesterday', '2026-11-30', '2026-13-45 99:99:99+00x'])('should refuse %j', (text) => {
    expect(() => fromSqlTimestamp(text)).toThrow(TypeError);
  });
});
