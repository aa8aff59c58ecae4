import { describe, expect, it } from 'vitest';
import { isAppError } from '../../../src/errors.js';
import {
  builtInProblems,
  type DeclarableOperation,
  DECLARED_NAME_PATTERN,
  declaredName,
  declareTools,
  type DeclaredTool,
  FINISH_TURN,
  fnv1a32,
  resolveDeclaredName,
} from '../../../src/turns/declare.js';

const LONG_OP = 'a'.repeat(80);

function op(
  connectionSlug: string,
  name: string,
  operationId = `${connectionSlug}/${name}`,
): DeclarableOperation {
  return {
    operationId,
    connectionSlug,
    name,
    description: `Does ${name}.`,
    inputSchema: { type: 'object', properties: {} },
  };
}

function builtIn(name: string): DeclaredTool {
  return { name, description: `Built-in ${name}.`, inputSchema: { type: 'object' } };
}

describe('fnv1a32', () => {
  it.each([
    ['', '811c9dc5'],
    ['a', 'e40c292c'],
    ['foobar', 'bf9cf968'],
  ])('should hash %j as the FNV-1a reference value %s', (text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });

  it('should hash UTF-8 bytes, so a non-ASCII character is not folded', () => {
    expect(fnv1a32('é')).not.toBe(fnv1a32('e'));
    expect(fnv1a32('é')).toMatch(/^[0-9a-f]{8}$/);
  });
});

describe('declaredName', () => {
  it.each([
    ['petstore', 'listPets', 'petstore__listPets'],
    ['acme_crm', 'contacts-search', 'acme_crm__contacts-search'],
    ['acme_crm', 'contacts.search', 'acme_crm__contacts_search'],
    ['acme_crm', 'get user', 'acme_crm__get_user'],
    ['café', 'créer', 'cafe__creer'],
    ['s', 'emoji🎉', 's__emoji_'],
    ['s', '数据', 's____'],
    ['s', 'a/b:c', 's__a_b_c'],
    ['s', '', 's__'],
  ])('should declare (%j, %j) as %j', (slug, name, expected) => {
    expect(declaredName(slug, name)).toBe(expected);
    expect(expected).toMatch(DECLARED_NAME_PATTERN);
  });

  it.each([
    ['exactly 64 characters', 's', 'x'.repeat(61), false],
    ['65 characters', 's', 'x'.repeat(62), true],
    ['a long operation name', 'petstore', LONG_OP, true],
    ['a long connection slug', 'c'.repeat(70), 'op', true],
    ['a long non-ASCII name', 's', 'é'.repeat(70), true],
    ['a name that grows when decomposed', 's', '\uFDFA'.repeat(4), true],
  ])('should fit %s into the pattern', (_label, slug, name, hashed) => {
    const declared = declaredName(slug, name);
    expect(declared).toMatch(DECLARED_NAME_PATTERN);
    if (hashed) {
      expect(declared).toHaveLength(64);
      expect(declared.slice(-9)).toBe(`_${fnv1a32(`${slug}__${name}`)}`);
    } else {
      expect(declared).toBe(`${slug}__${name}`);
    }
  });

  it('should tell apart two long names that share their first 64 characters', () => {
    const a = declaredName('petstore', `${LONG_OP}_one`);
    const b = declaredName('petstore', `${LONG_OP}_two`);
    expect(a).not.toBe(b);
    expect(a.slice(0, 55)).toBe(b.slice(0, 55));
  });

  it('should give the same name for the same input every time', () => {
    expect(declaredName('petstore', LONG_OP)).toBe(declaredName('petstore', LONG_OP));
  });
});

describe('declareTools', () => {
  it('should put built-ins first, connection tools next and finish_turn last', () => {
    const result = declareTools({
      builtIns: [builtIn('web_search'), builtIn('handoff')],
      operations: [op('petstore', 'listPets'), op('acme', 'search')],
    });
    expect(result.tools.map((t) => t.name)).toEqual([
      'web_search',
      'handoff',
      'acme__search',
      'petstore__listPets',
      'finish_turn',
    ]);
    expect(result.tools.at(-1)).toBe(FINISH_TURN);
    expect({ ...result.map }).toEqual({
      acme__search: 'acme/search',
      petstore__listPets: 'petstore/listPets',
    });
  });

  it('should declare finish_turn alone when there is nothing else', () => {
    const result = declareTools({ builtIns: [], operations: [] });
    expect(result.tools).toEqual([FINISH_TURN]);
    expect(FINISH_TURN.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(FINISH_TURN.description.length).toBeGreaterThan(0);
    expect({ ...result.map }).toEqual({});
  });

  it('should carry the description and schema, with an empty description for none', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
    const result = declareTools({
      builtIns: [],
      operations: [
        { operationId: 'o1', connectionSlug: 's', name: 'get', description: null, inputSchema: schema },
      ],
    });
    expect(result.tools[0]).toEqual({ name: 's__get', description: '', inputSchema: schema });
  });

  it.each<[string, DeclaredTool[], DeclarableOperation[], string[]]>([
    [
      'names that clash after sanitising',
      [],
      [op('s', 'a.b', '1'), op('s', 'a b', '2'), op('s', 'a_b', '3')],
      ['s__a_b', 's__a_b_2', 's__a_b_3'],
    ],
    ['a clash with a built-in', [builtIn('s__search')], [op('s', 'search')], ['s__search_2']],
    // `<connection>__<operation>` always holds `__` (or ends in a hash), so it cannot be `finish_turn`.
    [
      'a name close to finish_turn',
      [],
      [op('finish', 'turn'), op('finish_turn', '')],
      ['finish__turn', 'finish_turn__'],
    ],
    [
      'a suffix that meets a natural name, which keeps its own',
      [],
      [op('s', 'x', '1'), op('s', 'x', '2'), op('s', 'x_2', '3')],
      ['s__x', 's__x_3', 's__x_2'],
    ],
    [
      'one operation name in two connections',
      [],
      [op('b', 'search'), op('a', 'search')],
      ['a__search', 'b__search'],
    ],
    [
      'names differing only in case, which stay distinct',
      [],
      [op('s', 'getUser'), op('s', 'GetUser')],
      ['s__GetUser', 's__getUser'],
    ],
    [
      'unicode names that fold to one',
      [],
      [op('s', 'caf\u00e9', '1'), op('s', 'cafe\u0301', '2'), op('s', 'cafe', '3')],
      ['s__cafe', 's__cafe_2', 's__cafe_3'],
    ],
  ])('should keep names unique with %s', (_label, builtIns, operations, expected) => {
    const result = declareTools({ builtIns, operations });
    const names = result.tools.map((t) => t.name);
    expect(names.slice(builtIns.length, -1)).toEqual(expected);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(DECLARED_NAME_PATTERN);
  });

  it('should give clashing long names suffixes that still fit 64 characters', () => {
    // Same connection and name: the same hashed base, so only the suffix tells them apart.
    const operations = Array.from({ length: 12 }, (_, i) =>
      op('petstore', LONG_OP, `id-${String(i).padStart(2, '0')}`),
    );
    const result = declareTools({ builtIns: [], operations });
    const names = result.tools.slice(0, -1).map((t) => t.name);
    const base = declaredName('petstore', LONG_OP);
    expect(names[0]).toBe(base);
    expect(names[1]).toBe(`${base.slice(0, 62)}_2`);
    expect(names[11]).toBe(`${base.slice(0, 61)}_12`);
    expect(new Set(names).size).toBe(12);
    for (const name of names) {
      expect(name).toMatch(DECLARED_NAME_PATTERN);
      expect(name).toHaveLength(64);
    }
    expect(names.map((n) => result.map[n])).toEqual(operations.map((o) => o.operationId));
  });

  it('should give the same list whatever order the operations come in', () => {
    const operations = [
      op('b', 'x', '1'),
      op('a', 'y', '2'),
      op('a', 'y', '3'),
      op('a', 'a.y', '4'),
      op('c', LONG_OP, '5'),
    ];
    const forward = declareTools({ builtIns: [], operations });
    const backward = declareTools({ builtIns: [], operations: [...operations].reverse() });
    expect(backward.tools).toEqual(forward.tools);
    expect({ ...backward.map }).toEqual({ ...forward.map });
  });

  it('should map every connection tool back to its operation and nothing else', () => {
    const result = declareTools({
      builtIns: [builtIn('web_search')],
      operations: [op('s', 'constructor', 'op-1')],
    });
    expect(resolveDeclaredName(result.map, 's__constructor')).toBe('op-1');
    expect(resolveDeclaredName(result.map, 'web_search')).toBeUndefined();
    expect(resolveDeclaredName(result.map, 'finish_turn')).toBeUndefined();
    expect(resolveDeclaredName(result.map, 'constructor')).toBeUndefined();
    expect(resolveDeclaredName(result.map, '__proto__')).toBeUndefined();
    expect('toString' in result.map).toBe(false);
    // The Turn row stores the map as JSON; the look-up stays safe on the plain object that comes back.
    const reloaded = JSON.parse(JSON.stringify(result.map)) as Record<string, string>;
    expect(resolveDeclaredName(reloaded, 's__constructor')).toBe('op-1');
    expect(resolveDeclaredName(reloaded, 'hasOwnProperty')).toBeUndefined();
  });

  it('should map a declared name of __proto__ as an ordinary name', () => {
    const result = declareTools({ builtIns: [], operations: [op('', 'proto__', 'op-p')] });
    expect(result.tools[0]?.name).toBe('__proto__');
    expect(resolveDeclaredName(result.map, '__proto__')).toBe('op-p');
  });
});

describe('builtInProblems', () => {
  it.each<[string, string[], number]>([
    ['a valid list', ['web_search', 'handoff-1'], 0],
    ['an empty list', [], 0],
    ['a name with a space', ['web search'], 1],
    ['an empty name', [''], 1],
    ['a name of 65 characters', ['x'.repeat(65)], 1],
    ['finish_turn', ['finish_turn'], 1],
    ['a name listed twice', ['a', 'a'], 1],
  ])('should find problems in %s', (_label, names, count) => {
    expect(builtInProblems(names.map(builtIn))).toHaveLength(count);
  });

  it('should make declareTools refuse a bad built-in list', () => {
    let thrown: unknown;
    try {
      declareTools({ builtIns: [builtIn('finish_turn')], operations: [] });
    } catch (err) {
      thrown = err;
    }
    expect(isAppError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'INVALID_BUILT_IN_TOOLS' });
  });
});
