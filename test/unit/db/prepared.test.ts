import { describe, expect, it } from 'vitest';
import { batchJson, rowsByOrd } from '../../../src/db/group-commit.js';
import { prepare } from '../../../src/db/prepared.js';

describe('prepare', () => {
  it('should number the placeholders, leaving a ? inside a quoted literal or identifier alone', () => {
    const p = prepare('insert into x', `select ?, '?', 'it''s ?', "a?b", ?::jsonb from x where y = ?`);
    expect(p.text).toBe(`select $1, '?', 'it''s ?', "a?b", $2::jsonb from x where y = $3`);
    expect(p.shape).toBe('insert into x');
  });

  it('should name statements by their text: the same text the same name, another text another', () => {
    expect(prepare('a', 'select ?').name).toBe(prepare('b', 'select ?').name);
    expect(prepare('a', 'select ?').name).not.toBe(prepare('a', 'select ?, ?').name);
    expect(prepare('a', 'select 1').name).toMatch(/^ct_[0-9a-f]{24}$/);
  });
});

describe('batchJson', () => {
  it('should add each item its place in the batch', () => {
    const json = batchJson(['{"a":1}', '{}', '{"b":{"c":[1,2]}}']);
    expect(JSON.parse(json)).toEqual([{ ord: 0, a: 1 }, { ord: 1 }, { ord: 2, b: { c: [1, 2] } }]);
    expect(batchJson([])).toBe('[]');
  });
});

describe('rowsByOrd', () => {
  it('should give each item the rows that carry its place, and every item the rows without one', () => {
    expect(
      rowsByOrd(
        [
          { ord: 1, v: 'b' },
          { ord: 0, v: 'a' },
          { ord: 1, v: 'c' },
        ],
        3,
      ),
    ).toEqual([
      [{ ord: 0, v: 'a' }],
      [
        { ord: 1, v: 'b' },
        { ord: 1, v: 'c' },
      ],
      [],
    ]);
    expect(rowsByOrd([{ n: '2' }], 2)).toEqual([[{ n: '2' }], [{ n: '2' }]]);
  });
});
