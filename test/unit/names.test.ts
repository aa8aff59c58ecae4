import { describe, expect, it } from 'vitest';
import { firstFree, MAX_NAME_CHARS, nameLengthProblem, withoutMarks } from '../../src/names.js';
import { assignKey, snakePart } from '../../src/operations/keys.js';
import { numbered } from '../../src/openapi/naming.js';
import { declaredName, declareTools } from '../../src/turns/declare.js';
import { makeScrubber } from '../../src/connections/scrub.js';

describe('withoutMarks', () => {
  it('should decompose compatibility characters and drop combining marks', () => {
    expect(withoutMarks('Café ﬁ ①')).toBe('Cafe fi 1');
    expect(withoutMarks('日本')).toBe('日本');
  });

  it('should be the normalisation of keys and of declared names', () => {
    expect(snakePart('Crème Brûlée')).toBe('creme_brulee');
    expect(declaredName('café', 'ﬁnd')).toBe('cafe__find');
  });
});

describe('firstFree', () => {
  it('should keep a free name and number a taken one from _2', () => {
    const taken = new Set(['a', 'a_2']);
    expect(firstFree('b', (n) => taken.has(n))).toBe('b');
    expect(firstFree('a', (n) => taken.has(n))).toBe('a_3');
  });

  it('should cut the base so that the numbered name fits, and never cut a free base', () => {
    const long = 'x'.repeat(10);
    expect(firstFree(long, () => false, 8)).toBe(long);
    expect(firstFree(long, (n) => n === long, 8)).toBe('xxxxxx_2');
  });

  it('should be the clash numbering of keys, schema names, declared names and scrubbed keys', () => {
    expect(assignKey('connector.a.b', new Set(['connector.a.b']))).toBe('connector.a.b_2');
    expect(numbered('n'.repeat(64), new Set(['n'.repeat(64)]))).toBe(`${'n'.repeat(62)}_2`);
    const list = declareTools({
      builtIns: [],
      operations: [
        { operationId: '1', connectionSlug: 'a', name: 'x', description: null, inputSchema: {} },
        { operationId: '2', connectionSlug: 'a', name: 'x', description: null, inputSchema: {} },
      ],
    });
    expect(list.tools.map((t) => t.name)).toEqual(['a__x', 'a__x_2', 'finish_turn']);
    const scrubbed = makeScrubber(['secret-value-123']).json({ 'secret-value-123': 1, '[redacted]': 2 });
    expect(scrubbed).toEqual({ '[redacted]_2': 1, '[redacted]': 2 });
  });
});

describe('nameLengthProblem', () => {
  it('should take 1 to 200 characters once trimmed', () => {
    expect(MAX_NAME_CHARS).toBe(200);
    expect(nameLengthProblem('  a  ')).toBeNull();
    expect(nameLengthProblem(` ${'a'.repeat(200)} `)).toBeNull();
    expect(nameLengthProblem('   ')).toBe('EMPTY');
    expect(nameLengthProblem('')).toBe('EMPTY');
    expect(nameLengthProblem('a'.repeat(201))).toBe('TOO_LONG');
  });
});
