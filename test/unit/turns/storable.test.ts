import { describe, expect, it } from 'vitest';
import {
  checkArguments,
  fitText,
  refusedArgumentsNote,
  storableJson,
  storableJsonText,
  storableRecordJson,
  storableText,
} from '../../../src/turns/storable.js';

const F = '\ufffd';

describe('storableText', () => {
  it.each([
    ['plain text', 'pay 100 EUR', 'pay 100 EUR'],
    ['NUL', 'pay 100\u0000EUR', `pay 100${F}EUR`],
    ['several NULs', '\u0000\u0000x\u0000', `${F}${F}x${F}`],
    ['a lone high surrogate', 'a\ud800b', `a${F}b`],
    ['a lone low surrogate', 'a\udc00b', `a${F}b`],
    ['a high surrogate at the end', 'ab\ud83d', `ab${F}`],
    ['a low surrogate at the start', '\ude00ab', `${F}ab`],
    ['a pair (emoji) is kept', 'ok \ud83d\ude00', 'ok \ud83d\ude00'],
    ['two highs then a low: the first is lone', '\ud83d\ud83d\ude00', `${F}\ud83d\ude00`],
    ['a reversed pair: both lone', '\ude00\ud83d', `${F}${F}`],
    ['other control characters are kept', 'a\u0001\u001fb\n', 'a\u0001\u001fb\n'],
    ['the text "\\u0000" is kept', '\\u0000', '\\u0000'],
    ['empty', '', ''],
  ])('%s', (_, input, expected) => {
    expect(storableText(input)).toBe(expected);
  });

  it('should keep null', () => {
    expect(storableText(null)).toBeNull();
  });
});

describe('storableJson', () => {
  it.each<[string, unknown, unknown]>([
    ['plain', { a: 1, b: ['x', null, true] }, { a: 1, b: ['x', null, true] }],
    ['NUL in a value', { v: 'pay 100\u0000EUR' }, { v: `pay 100${F}EUR` }],
    ['NUL in a key', { 'k\u0000': 1 }, { [`k${F}`]: 1 }],
    ['deep in arrays', [[[{ x: ['\u0000', '\ud800'] }]]], [[[{ x: [F, F] }]]]],
    ['a lone low surrogate in a key', { '\udfff': 'v' }, { [F]: 'v' }],
    ['a pair is kept', { e: '\ud83d\ude00' }, { e: '\ud83d\ude00' }],
    ['a backslash before u0000 is text', { v: '\\u0000' }, { v: '\\u0000' }],
    ['two backslashes then NUL', { v: '\\\\\u0000' }, { v: `\\\\${F}` }],
    ['a backslash then NUL', { v: '\\\u0000' }, { v: `\\${F}` }],
    ['a backslash and the text ud800', { v: '\\ud800' }, { v: '\\ud800' }],
    ['other control characters are kept', { v: '\u0001\t' }, { v: '\u0001\t' }],
    ['a bare string', 'a\u0000', `a${F}`],
    ['null', null, null],
  ])('%s', (_, input, expected) => {
    const text = storableJson(input);
    expect(text).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/);
    expect(JSON.parse(text)).toEqual(expected);
  });

  it('should return the very same text when there is nothing to replace', () => {
    const json = JSON.stringify({ a: 'x'.repeat(1000), b: 'é \ud83d\ude00 \\u0001' });
    expect(storableJsonText(json)).toBe(json);
  });

  it('should be linear on a large, dirty value', () => {
    const value = { v: Array.from({ length: 50_000 }, (_, i) => (i % 2 ? '\u0000' : '\ud800')) };
    const parsed = JSON.parse(storableJson(value)) as { v: string[] };
    expect(parsed.v.every((s) => s === F)).toBe(true);
  });
});

function nested(depth: number): unknown {
  let v: unknown = { leaf: true };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

function nestedArray(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

describe('checkArguments', () => {
  const limits = { maxDepth: 64, maxBytes: 1024 };

  it.each<[string, unknown, 'ok' | 'DEPTH' | 'SIZE']>([
    ['empty', {}, 'ok'],
    ['exactly 64 deep', nested(64), 'ok'],
    ['65 deep', nested(65), 'DEPTH'],
    ['64 deep in arrays', { a: nestedArray(63) }, 'ok'],
    ['65 deep in arrays', { a: nestedArray(64) }, 'DEPTH'],
    ['100,000 deep', nested(100_000), 'DEPTH'],
    ['deep in a later sibling', { a: 1, b: [1, 2, { c: nested(70) }] }, 'DEPTH'],
    ['wide but shallow', { a: Array.from({ length: 50 }, (_, i) => ({ i })) }, 'ok'],
    ['exactly at the size limit', { v: 'x'.repeat(1024 - 8) }, 'ok'],
    ['one byte over', { v: 'x'.repeat(1024 - 7) }, 'SIZE'],
    ['over in UTF-8 bytes, not in characters', { v: 'é'.repeat(600) }, 'SIZE'],
  ])('%s', (_, args, expected) => {
    const checked = checkArguments(args, limits, 'crm__pay');
    if (expected === 'ok') {
      expect(checked).toEqual({ ok: true, json: JSON.stringify(args) });
    } else {
      expect(checked).toMatchObject({ ok: false, reason: expected });
      if (!checked.ok) {
        expect(checked.message).toMatch(/^The arguments for crm__pay /);
        expect(checked.message).toMatch(/Nothing was done/);
        expect(JSON.stringify(refusedArgumentsNote(checked)).length).toBeLessThan(100);
      }
    }
  });
});

describe('fitText', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['eleven char', 10, 'eleven ch…'],
    [`abcdefgh\u{1F600}z`, 10, 'abcdefgh…'], // the pair would be split at the cut: it goes whole
    [`abcdefg\u{1F600}zz`, 10, `abcdefg\u{1F600}…`],
  ])('should fit %j into %i units as %j', (text, max, fitted) => {
    expect(fitText(text, max)).toBe(fitted);
    expect(fitText(text, max).length).toBeLessThanOrEqual(max);
  });
});

describe('storableRecordJson', () => {
  it('should cut every bounded column to its limit and leave other fields and raw JSON alone', () => {
    const long = 'n'.repeat(300);
    const json = storableRecordJson(
      { declared_name: long, message: long, operation_key: 'k', seq: 3 },
      { payload: `{"name":"${long}"}` },
    );
    expect(JSON.parse(json)).toEqual({
      declared_name: `${'n'.repeat(199)}…`,
      message: long,
      operation_key: 'k',
      seq: 3,
      payload: { name: long },
    });
  });

  it('should make a record of raw JSON only', () => {
    expect(JSON.parse(storableRecordJson({}, { a: '1' }))).toEqual({ a: 1 });
  });
});
