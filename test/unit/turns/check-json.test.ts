/**
 * The validator's plain-JSON check of a whole declaration (src/turns/dialects/rules/common.ts,
 * `checkJson`): what it refuses, where it points, and where its bounds are.
 */
import { describe, expect, it } from 'vitest';
import { checkJson, Report } from '../../../src/turns/dialects/rules/common.js';
import { MAX_WALK_DEPTH } from '../../../src/turns/dialects/rules/table.js';

function judge(value: unknown): { ok: boolean; found: { path: string; message: string }[] } {
  const report = new Report('t');
  const ok = checkJson(value, '/d', report);
  return { ok, found: report.violations.map(({ path, message }) => ({ path, message })) };
}

/** `levels` objects, each the only value of the one above it. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('checkJson', () => {
  it('takes plain JSON, a value shared by two parents, and objects without a prototype', () => {
    const shared = { x: [1, 'two', null, true, { y: -0.5 }] };
    const bare = Object.assign(Object.create(null) as object, { k: 'v' });
    for (const value of [null, 'x', 1, false, [], {}, { a: shared, b: shared, c: [shared, shared] }, bare])
      expect(judge(value)).toEqual({ ok: true, found: [] });
  });

  it('refuses what JSON cannot carry as it is, pointing at it', () => {
    class Point {
      x = 1;
    }
    const cases: [unknown, string, string][] = [
      [{ a: [1, Number.NaN] }, '/d/a/1', 'NaN is not a JSON number'],
      [{ a: { b: Number.POSITIVE_INFINITY } }, '/d/a/b', 'Infinity is not a JSON number'],
      [{ a: undefined }, '/d/a', 'a undefined is not a JSON value'],
      [{ 'a/b~c': () => 1 }, '/d/a~1b~0c', 'a function is not a JSON value'],
      [[1n], '/d/0', 'a bigint is not a JSON value'],
      [{ s: Symbol('s') }, '/d/s', 'a symbol is not a JSON value'],
      [{ p: new Point() }, '/d/p', 'the value is not a plain object'],
      [{ when: new Date(0) }, '/d/when', 'the value is not a plain object'],
      [Number.NaN, '/d', 'NaN is not a JSON number'],
    ];
    for (const [value, path, message] of cases)
      expect(judge(value)).toEqual({ ok: false, found: [{ path, message }] });
  });

  it('refuses a value that contains itself, in an object or an array, and reports it once', () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = { again: loop };
    expect(judge(loop)).toEqual({
      ok: false,
      found: [{ path: '/d/self/again', message: 'the value contains itself' }],
    });
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(judge({ list })).toEqual({
      ok: false,
      found: [{ path: '/d/list/1/back', message: 'the value contains itself' }],
    });
  });

  it(`takes ${MAX_WALK_DEPTH * 4 + 1} levels of objects and refuses one more`, () => {
    expect(judge(nested(MAX_WALK_DEPTH * 4 + 1)).ok).toBe(true);
    const deep = judge(nested(MAX_WALK_DEPTH * 4 + 2));
    expect(deep.ok).toBe(false);
    expect(deep.found).toEqual([
      {
        path: '/d' + '/a'.repeat(MAX_WALK_DEPTH * 4 + 1),
        message: `the value nests deeper than ${MAX_WALK_DEPTH * 4} levels`,
      },
    ]);
  });

  it('stops at the first value it refuses', () => {
    expect(judge({ a: Number.NaN, b: undefined, c: [Number.NaN] }).found).toHaveLength(1);
  });
});
