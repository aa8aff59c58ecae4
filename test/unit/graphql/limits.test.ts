import 'reflect-metadata';
import { buildSchema, GraphQLError, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costLimitRule } from '../../../src/graphql/cost.js';
import {
  BOUNDED_DOCUMENTS_MAX_CHARS,
  BoundedDocuments,
  countFields,
  parseBounded,
} from '../../../src/graphql/document-limits.js';

const schema = buildSchema(`
  type Query { viewer: Viewer, items(first: Int): ItemPage, node: Node }
  interface Node { id: ID! }
  type Viewer { label: String, role: String, items(first: Int): ItemPage }
  type ItemPage { nodes: [Item!]! }
  type Item implements Node { id: ID!, name: String }
`);

const rep = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join(' ');

/** `query{...F0}` where each fragment spreads the next `spreads` times: spreads^levels expansions. */
function explosion(levels: number, spreads: number, on = 'Query', field = '__typename'): string {
  const fragments = Array.from(
    { length: levels },
    (_, i) => `fragment F${i} on ${on} { ${field} ${rep(spreads, () => `...F${i + 1}`)} }`,
  );
  const root = on === 'Query' ? '{ ...F0 }' : '{ viewer { ...F0 } }';
  return `query ${root} ${fragments.join(' ')} fragment F${levels} on ${on} { ${field} }`;
}

function costOf(source: string, maxCost: number, visits?: Map<string, number>): readonly GraphQLError[] {
  return validate(schema, parse(source), [
    costLimitRule(maxCost, {
      onFragmentCost: (name) => visits?.set(name, (visits.get(name) ?? 0) + 1),
    }),
  ]);
}

describe('cost rule', () => {
  it.each([
    ['two spreads per level, 22 levels', explosion(22, 2)],
    ['three spreads per level, 14 levels', explosion(14, 3)],
    ['on another type with another field', explosion(20, 2, 'Viewer', 'label')],
  ])('should compute each fragment once whatever the number of spreads (%s)', (_name, source) => {
    const visits = new Map<string, number>();
    const errors = costOf(source, 250_000, visits);
    const fragments = (source.match(/fragment /g) ?? []).length;
    expect(visits.size).toBe(fragments);
    expect([...visits.values()].every((n) => n === 1)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/cost limit of 250000 exceeded/);
    expect(errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('should give __typename a cost, so a fragment explosion of __typename alone is refused', () => {
    expect(costOf('{ __typename }', 1)).toEqual([]);
    expect(costOf('{ a: __typename b: __typename }', 1)).toHaveLength(1);
    // 2^20 __typename selections once expanded.
    expect(costOf(explosion(20, 2), 1_000_000)).toHaveLength(1);
    expect(costOf(explosion(18, 2), 1_000_000)).toEqual([]);
  });

  it('should count a fragment spread as its expansion, times the pages it sits in', () => {
    const source =
      '{ items(first: 10) { nodes { ...I } } viewer { items(first: 5) { nodes { ...I } } } } fragment I on Item { id name }';
    // items: 1 + 10 × (nodes 1 + 2) = 31; viewer: 1 + (items 1 + 5 × (1 + 2)) = 17. Total 48.
    expect(costOf(source, 48)).toEqual([]);
    expect(costOf(source, 47)[0]!.message).toMatch(/cost limit of 47 exceeded, found more than 48/);
  });

  it('should count inline fragments and fields under directives', () => {
    const source = `{ viewer { ${rep(10, () => '... on Viewer { label @include(if: true) }')} } }`;
    expect(costOf(source, 11)).toEqual([]);
    expect(costOf(source, 10)).toHaveLength(1);
  });

  it('should tolerate fragment cycles (reported by their own rule)', () => {
    const source =
      '{ viewer { ...A } } fragment A on Viewer { label ...B } fragment B on Viewer { role ...A }';
    expect(costOf(source, 100)).toEqual([]);
    expect(validate(schema, parse(source), specifiedRules).map((e) => e.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/Cannot spread fragment "A" within itself/)]),
    );
  });
});

describe('parseBounded', () => {
  const limits = { maxDocumentBytes: 4096, maxTokens: 300, maxFields: 50 };
  const refused = (source: string): string => {
    const result = parseBounded(source, limits);
    if (!(result instanceof GraphQLError)) throw new Error('expected a refusal');
    expect(result.extensions.code).toBe('BAD_USER_INPUT');
    return result.message;
  };

  it('should parse a document within every bound', () => {
    const result = parseBounded('{ viewer { label role } }', limits);
    expect(result).not.toBeInstanceOf(GraphQLError);
  });

  it.each([
    ['repeated fields', `{ viewer { ${rep(60, () => 'label')} } }`],
    ['another repeated field', `{ viewer { ${rep(60, () => 'role')} } }`],
    [
      'repeated fields in inline fragments',
      `{ viewer { ${rep(30, () => '... on Viewer { label role }')} } }`,
    ],
    ['aliased fields', `{ ${rep(60, (i) => `a${i}: viewer { label }`).slice(0, 1200)} }`],
    ['fields under directives', `{ viewer { ${rep(60, () => 'label @skip(if: false)')} } }`.slice(0, 4000)],
  ])('should refuse %s over the field limit', (_name, source) => {
    const result = parseBounded(source, { ...limits, maxTokens: 10_000, maxDocumentBytes: 1 << 20 });
    expect(result).toBeInstanceOf(GraphQLError);
    expect((result as GraphQLError).message).toBe(
      'the document has more than 50 field selections; the limit is 50',
    );
  });

  it('should count a fragment’s fields once, however often it is spread', () => {
    const source = `{ viewer { ${rep(40, () => '...V')} } } fragment V on Viewer { label role }`;
    expect(countFields(parse(source))).toBe(3);
    expect(parseBounded(source, limits)).not.toBeInstanceOf(GraphQLError);
  });

  it('should refuse a document over the token limit before parsing all of it', () => {
    expect(refused(`{ viewer { ${rep(400, () => 'label')} } }`)).toBe(
      'the document has more than 300 tokens; the limit is 300',
    );
  });

  it('should refuse a document over the size limit without parsing it', () => {
    expect(refused(`{ viewer { label } } # ${'x'.repeat(5000)}`)).toMatch(
      /^the document is 5\d\d\d bytes; the limit is 4096$/,
    );
    // Bytes, not characters: 1,500 three-byte characters are 4,500 bytes.
    expect(refused(`# ${'€'.repeat(1500)}\n{ viewer { label } }`)).toMatch(/the limit is 4096/);
  });

  it('should report a syntax error as a parse failure with its location', () => {
    const result = parseBounded('{ viewer { ', limits) as GraphQLError;
    expect(result.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(result.locations).toEqual([{ line: 1, column: 12 }]);
  });
});

describe('BoundedDocuments', () => {
  const limits = { maxDocumentBytes: 100_000, maxTokens: 1_000, maxFields: 50 };

  it('should give back the same parsed document for the same text, and refuse what parseBounded refuses, every time', () => {
    const documents = new BoundedDocuments(limits);
    const first = documents.parse('{ viewer { label } }');
    expect(first).not.toBeInstanceOf(GraphQLError);
    expect(documents.parse('{ viewer { label } }')).toBe(first);
    expect(documents.parse('{ viewer { role } }')).not.toBe(first);
    const wide = `{ viewer { ${rep(60, () => 'label')} } }`;
    for (let i = 0; i < 2; i++) {
      const refused = documents.parse(wide) as GraphQLError;
      expect(refused).toBeInstanceOf(GraphQLError);
      expect(refused.message).toMatch(/more than 50 field selections/);
    }
    expect((documents.parse('{ viewer { ') as GraphQLError).extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(documents.size).toBe(2);
  });

  it('should hold a bounded number of short texts, the oldest dropped first', () => {
    const documents = new BoundedDocuments(limits, 3);
    const texts = Array.from({ length: 5 }, (_, i) => `{ a${i}: viewer { label } }`);
    const parsed = texts.map((t) => documents.parse(t));
    expect(documents.size).toBe(3);
    expect(documents.parse(texts[4]!)).toBe(parsed[4]);
    expect(documents.parse(texts[0]!)).not.toBe(parsed[0]); // dropped, parsed again
    const long = `{ viewer { label } }${' '.repeat(BOUNDED_DOCUMENTS_MAX_CHARS)}`;
    const once = documents.parse(long);
    expect(once).not.toBeInstanceOf(GraphQLError);
    expect(documents.parse(long)).not.toBe(once); // too long to keep
  });
});
