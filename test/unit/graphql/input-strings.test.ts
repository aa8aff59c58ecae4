import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { checkInputStrings, isStorableString } from '../../../src/graphql/input-strings.js';

const schema = buildSchema(`
  scalar JSONObject
  input Credential { kind: String!, key: String, headers: [String!] }
  input CreateInput { name: String!, tags: [String!], credential: Credential, id: ID }
  input CallInput { name: String!, arguments: JSONObject }
  type Query { find(name: String, ids: [ID!]): Boolean }
  type Mutation { create(input: CreateInput!): Boolean, call(input: CallInput!): Boolean }
`);

const check = (source: string, variables?: Record<string, unknown>) =>
  checkInputStrings(schema, parse(source), variables)?.message ?? null;

describe('isStorableString', () => {
  it.each([
    ['plain text', 'pay 100 EUR', true],
    ['a paired surrogate (emoji)', 'ok \uD83D\uDE00', true],
    ['NUL', 'pay 100\u0000EUR', false],
    ['a lone high surrogate', 'a\uD800b', false],
    ['a lone high surrogate at the end', 'a\uD800', false],
    ['a lone low surrogate', '\uDC00a', false],
    ['reversed surrogates', '\uDE00\uD83D', false],
  ])('%s → %s', (_name, value, ok) => {
    expect(isStorableString(value)).toBe(ok);
  });
});

describe('checkInputStrings', () => {
  it('should name the field and argument of a literal', () => {
    expect(check('mutation { create(input: { name: "a\\u0000b" }) }')).toBe(
      'create(input.name) must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(check('{ find(name: "x\\u0000") }')).toMatch(/^find\(name\) /);
  });

  it.each([
    ['a top-level variable', 'query($n: String) { find(name: $n) }', { n: 'x\u0000' }, 'find(name)'],
    ['a list item', 'query($ids: [ID!]) { find(ids: $ids) }', { ids: ['ok', 'b\uD800'] }, 'find(ids[1])'],
    [
      'a nested input object',
      'mutation($i: CreateInput!) { create(input: $i) }',
      { i: { name: 'ok', credential: { kind: 'BEARER', key: 'k\u0000' } } },
      'create(input.credential.key)',
    ],
    [
      'a list in a nested object',
      'mutation($i: CreateInput!) { create(input: $i) }',
      { i: { name: 'ok', credential: { kind: 'H', headers: ['a', '\uDC00'] } } },
      'create(input.credential.headers[1])',
    ],
    [
      'a variable inside a literal object',
      'mutation($n: String!) { create(input: { name: $n }) }',
      { n: '\uD800' },
      'create(input.name)',
    ],
    [
      'an ID',
      'mutation($i: CreateInput!) { create(input: $i) }',
      { i: { name: 'x', id: 'a\u0000' } },
      'create(input.id)',
    ],
    ['a single value for a list', 'query($ids: [ID!]) { find(ids: $ids) }', { ids: 'b\u0000' }, 'find(ids)'],
  ])('should find a bad string in %s', (_name, source, variables, where) => {
    expect(check(source, variables)).toBe(
      `${where} must not contain NUL characters or unpaired UTF-16 surrogates`,
    );
  });

  it('should check variable defaults', () => {
    expect(check('query($n: String = "a\\u0000") { find(name: $n) }')).toMatch(/^\$n /);
  });

  it('should check fields inside fragments', () => {
    expect(check('{ ...F } fragment F on Query { find(name: "\\u0000") }')).toMatch(/^find\(name\)/);
  });

  it('should leave JSON scalars alone, as literals and as variables', () => {
    expect(check('mutation { call(input: { name: "t", arguments: { v: "pay\\u0000" } }) }')).toBeNull();
    expect(
      check('mutation($i: CallInput!) { call(input: $i) }', {
        i: { name: 't', arguments: { v: 'a\u0000\uD800' } },
      }),
    ).toBeNull();
    // …but not the string fields beside them.
    expect(
      check('mutation($i: CallInput!) { call(input: $i) }', { i: { name: 't\u0000', arguments: {} } }),
    ).toMatch(/^call\(input\.name\)/);
  });

  it('should accept ordinary strings and nulls', () => {
    expect(
      check('mutation($i: CreateInput!) { create(input: $i) }', {
        i: { name: 'Café \uD83D\uDE00', tags: ['a', 'b'], credential: null },
      }),
    ).toBeNull();
  });

  it('should judge each request by its own variables when one parsed document is used again', () => {
    const document = parse(
      'mutation($i: CreateInput!, $n: String = "ok") { create(input: $i) other: create(input: { name: $n }) }',
    );
    const run = (variables: Record<string, unknown>) =>
      checkInputStrings(schema, document, variables)?.message ?? null;
    expect(run({ i: { name: 'fine' } })).toBeNull();
    expect(run({ i: { name: 'bad\u0000' } })).toMatch(/^create\(input\.name\) /);
    expect(run({ i: { name: 'fine' }, n: 'x\uD800' })).toMatch(/^create\(input\.name\) /);
    expect(run({ i: { name: 'fine again' } })).toBeNull();
    // The same document against another schema is walked again with that schema's types.
    const other = buildSchema(
      'input CreateInput { name: JSONObject } scalar JSONObject type Query { x: Int } type Mutation { create(input: CreateInput!): Boolean }',
    );
    expect(checkInputStrings(other, document, { i: { name: 'bad\u0000' } })).toBeNull();
  });
});
