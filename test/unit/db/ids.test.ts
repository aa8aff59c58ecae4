import { describe, expect, it } from 'vitest';
import { uuidv7, uuidv7Time } from '../../../src/db/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('should be a version 7, variant 1 UUID whose first 48 bits are the time', () => {
    const now = Date.UTC(2026, 11, 1, 4, 30);
    const id = uuidv7(now);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('should never repeat, across many refills of its random pool', () => {
    const now = Date.now();
    const ids = Array.from({ length: 5_000 }, () => uuidv7(now));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    // Every random byte varies, not only a counter's low bits.
    const oneRandomByte = new Set(ids.map((id) => id.slice(24, 26)));
    expect(oneRandomByte.size).toBeGreaterThan(200);
  });
});

describe('uuidv7Time', () => {
  it('should read back the time a UUIDv7 was made, and refuse other versions', () => {
    const at = Date.UTC(2026, 11, 1, 23, 59, 59, 999);
    expect(uuidv7Time(uuidv7(at))).toBe(at);
    expect(uuidv7Time('6f9619ff-8b86-4d11-b42d-00c04fc964ff')).toBeNull();
    expect(uuidv7Time('not a uuid')).toBeNull();
  });
});
