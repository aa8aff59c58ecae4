import { describe, expect, it } from 'vitest';
import { Memo } from '../../src/memo.js';

describe('Memo', () => {
  it('should compute each key once, keep null, empty itself when full, and keep nothing that threw', () => {
    const seen: string[] = [];
    const memo = new Memo(2, (key: string) => {
      seen.push(key);
      if (key === 'bad') throw new Error('refused');
      return key === 'none' ? null : key.toUpperCase();
    });
    expect([memo.get('a'), memo.get('none'), memo.get('a'), memo.get('none')]).toEqual([
      'A',
      null,
      'A',
      null,
    ]);
    expect(seen).toEqual(['a', 'none']);
    expect(() => memo.get('bad')).toThrow('refused');
    expect(() => memo.get('bad')).toThrow('refused');
    memo.get('b'); // full: emptied, then 'b' kept
    memo.get('a');
    expect(seen).toEqual(['a', 'none', 'bad', 'bad', 'b', 'a']);
  });
});
