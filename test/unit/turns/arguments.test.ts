import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/operations/types.js';
import {
  compileArguments,
  MAX_FORMAT_CHARS,
  MAX_SCHEMA_CHARS,
  rejectionMessage,
  type ArgumentCheck,
} from '../../../src/turns/arguments.js';

function compiled(schema: JsonObject): Extract<ArgumentCheck, { ok: true }> {
  const check = compileArguments(schema);
  if (!check.ok) throw new Error(`did not compile: ${check.reason}`);
  return check;
}

function problems(schema: JsonObject, args: unknown): string[] {
  const verdict = compiled(schema).validate(args);
  return verdict.ok ? [] : verdict.problems;
}

const order: JsonObject = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 1 },
    status: { type: 'string', enum: ['open', 'closed'] },
    note: { type: 'string', maxLength: 5 },
    email: { type: 'string', format: 'email' },
    address: {
      type: 'object',
      properties: { city: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$' } },
      required: ['city'],
      additionalProperties: false,
    },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
        required: ['sku', 'qty'],
      },
    },
  },
  required: ['id'],
  additionalProperties: false,
};

describe('arguments checked against the input schema', () => {
  it.each<[string, unknown, string[]]>([
    ['required field missing', {}, ['"id" is required']],
    ['integer given as a string', { id: 'abc' }, ['"id" must be integer, got string']],
    ['integer given as a fraction', { id: 1.5 }, ['"id" must be integer, got number']],
    [
      'null for a non-nullable field',
      { id: null },
      ['"id" must be integer, got null; leave it out when there is no value'],
    ],
    ['below the minimum', { id: 0 }, ['"id" must be >= 1']],
    ['not in the enum', { id: 1, status: 'pending' }, ['"status" must be one of "open", "closed"']],
    ['string too long', { id: 1, note: 'abcdefg' }, ['"note" must NOT have more than 5 characters']],
    ['unknown argument', { id: 1, colour: 'red' }, ['"colour" is not an argument of this tool']],
    ['nested required missing', { id: 1, address: {} }, ['"address.city" is required']],
    ['nested type wrong', { id: 1, address: { city: 7 } }, ['"address.city" must be string, got integer']],
    [
      'nested pattern',
      { id: 1, address: { city: 'x', zip: '12' } },
      ['"address.zip" must match pattern "^[0-9]{5}$"'],
    ],
    ['array item type', { id: 1, tags: ['a', 3] }, ['"tags[1]" must be string, got integer']],
    ['array too long', { id: 1, tags: ['a', 'b', 'c'] }, ['"tags" must NOT have more than 2 items']],
    [
      'array of objects',
      { id: 1, lines: [{ sku: 'a', qty: 1 }, { sku: 'b' }] },
      ['"lines[1].qty" is required'],
    ],
    ['not an array', { id: 1, tags: 'a' }, ['"tags" must be array, got string']],
    ['arguments not an object', 'id=1', ['the arguments must be object, got string']],
    [
      'several problems at once',
      { id: 'x', status: 'pending', extra: 1 },
      [
        '"extra" is not an argument of this tool',
        '"id" must be integer, got string',
        '"status" must be one of "open", "closed"',
      ],
    ],
  ])('should refuse: %s', (_name, args, expected) => {
    expect(problems(order, args).sort()).toEqual([...expected].sort());
  });

  it.each<[string, unknown]>([
    ['only the required field', { id: 1 }],
    [
      'every field',
      {
        id: 2,
        status: 'open',
        note: 'hi',
        address: { city: 'Oslo', zip: '01234' },
        tags: ['a'],
        lines: [{ sku: 'a', qty: 2 }],
      },
    ],
    ['a well-formed email', { id: 1, email: 'ada@example.com' }],
  ])('should accept: %s', (_name, args) => {
    expect(compiled(order).validate(args)).toEqual({ ok: true });
  });

  it('should refuse a malformed email, naming the field and the format', () => {
    expect(problems(order, { id: 1, email: 'not an email' })).toEqual(['"email" must match format: email']);
  });

  // What a dialect only describes (issue 26: format, pattern, bounds, multipleOf, uniqueItems,
  // const, enum) is enforced here, on the canonical schema.
  const formats: [string, string, string][] = [
    ['email', 'ada@example.com', 'ada@@example'],
    ['uri', 'https://example.com/a?b=c#d', 'no scheme here'],
    ['uri-reference', '/a/b?c', 'a b'],
    ['date-time', '2026-12-02T20:15:44Z', '2026-13-02T20:15:44Z'],
    ['date', '2026-02-28', '2026-02-30'],
    ['time', '20:15:44Z', '25:00:00Z'],
    ['duration', 'P1DT2H', 'P1H'],
    ['uuid', '0190a6c2-7d3e-7c1a-9f00-0123456789ab', '0190a6c2-7d3e-7c1a-9f00'],
    ['ipv4', '192.168.0.1', '256.1.1.1'],
    ['ipv6', '2001:db8::1', '2001:db8:::1'],
    ['hostname', 'api.example.com', '-bad-.example.com'],
  ];
  it.each(formats)('should check format %s: %s passes, %s is refused', (format, good, bad) => {
    const schema: JsonObject = { type: 'object', properties: { v: { type: 'string', format } } };
    expect(compiled(schema).validate({ v: good })).toEqual({ ok: true });
    expect(problems(schema, { v: bad })).toEqual([`"v" must match format: ${format}`]);
  });

  it('should leave a format it does not know unchecked, and apply a format to strings only', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { a: { type: 'string', format: 'x-colour' }, n: { format: 'email' } },
    };
    expect(compiled(schema).validate({ a: 'anything', n: 7 })).toEqual({ ok: true });
  });

  it('should bound the string a format looks at: longer fails, except a URI, then not checked', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { e: { type: 'string', format: 'email' }, u: { type: 'string', format: 'uri' } },
    };
    const long = 'a'.repeat(MAX_FORMAT_CHARS);
    expect(problems(schema, { e: `${long}@example.com` })).toEqual(['"e" must match format: email']);
    expect(compiled(schema).validate({ u: `https://example.com/${long} not a uri` })).toEqual({ ok: true });
    expect(problems(schema, { u: 'https://example.com/ not a uri' })).toEqual(['"u" must match format: uri']);
  });

  it.each<[string, JsonObject, unknown, string]>([
    ['multipleOf', { type: 'number', multipleOf: 5 }, 12, '"v" must be multiple of 5'],
    [
      'uniqueItems',
      { type: 'array', uniqueItems: true },
      [1, 1],
      '"v" must NOT have duplicate items (items ## 0 and 1 are identical)',
    ],
    ['const', { const: 'EUR' }, 'USD', '"v" must be "EUR"'],
    ['integer enum', { enum: [1, 2] }, 3, '"v" must be one of 1, 2'],
    ['exclusiveMinimum', { type: 'number', exclusiveMinimum: 0 }, 0, '"v" must be > 0'],
    ['maximum', { type: 'integer', maximum: 10 }, 11, '"v" must be <= 10'],
    ['minLength', { type: 'string', minLength: 2 }, 'a', '"v" must NOT have fewer than 2 characters'],
    ['pattern', { type: 'string', pattern: '^[A-Z]{3}$' }, 'abc', '"v" must match pattern "^[A-Z]{3}$"'],
  ])('should enforce %s', (_k, v, value, message) => {
    const schema: JsonObject = { type: 'object', properties: { v } };
    expect(problems(schema, { v: value })).toEqual([message]);
  });

  it('should never change the arguments: no coercion, no defaults, no removal', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        n: { type: 'number', default: 5 },
        flag: { type: 'boolean', default: true },
        nested: { type: 'object', properties: { a: { type: 'string', default: 'x' } } },
      },
    };
    const args = { nested: {}, extra: 'kept' };
    const before = JSON.stringify(args);
    expect(compiled(schema).validate(args)).toEqual({ ok: true });
    expect(JSON.stringify(args)).toBe(before);
    // A string that a coercing validator would turn into a number is refused, and left alone.
    const strings = { n: '5' };
    expect(compiled(schema).validate(strings)).toEqual({
      ok: false,
      problems: ['"n" must be number, got string'],
    });
    expect(strings).toEqual({ n: '5' });
  });

  it.each<[string, JsonObject, unknown, boolean]>([
    [
      'draft-07 tuple items',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { p: { type: 'array', items: [{ type: 'number' }, { type: 'string' }] } },
      },
      { p: [1, 2] },
      false,
    ],
    [
      'draft-07 definitions $ref',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        definitions: { s: { type: 'string' } },
        properties: { a: { $ref: '#/definitions/s' } },
      },
      { a: 1 },
      false,
    ],
    [
      '2020-12 $defs $ref',
      { type: 'object', $defs: { s: { type: 'string' } }, properties: { a: { $ref: '#/$defs/s' } } },
      { a: 'x' },
      true,
    ],
    [
      '2020-12 prefixItems',
      { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'number' }] } } },
      { p: ['x'] },
      false,
    ],
    [
      'recursive $ref',
      {
        type: 'object',
        $defs: { n: { type: 'object', properties: { c: { $ref: '#/$defs/n' }, v: { type: 'integer' } } } },
        properties: { tree: { $ref: '#/$defs/n' } },
      },
      { tree: { c: { c: { v: 'x' } } } },
      false,
    ],
    [
      'nullable through a type list',
      { type: 'object', properties: { a: { type: ['integer', 'null'] } } },
      { a: null },
      true,
    ],
  ])('should read the schema dialects: %s', (_name, schema, args, valid) => {
    expect(compiled(schema).validate(args).ok).toBe(valid);
  });

  it.each<[string, JsonObject, RegExp]>([
    [
      'an unknown draft',
      { $schema: 'https://example.com/my-draft', type: 'object' },
      /unknown JSON Schema draft/,
    ],
    [
      'a keyword with a wrong value',
      { type: 'object', properties: { a: { type: 'strnig' } } },
      /input schema is invalid/,
    ],
    [
      'a remote $ref',
      { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } },
      /input schema is invalid/,
    ],
    [
      'a dangling $ref',
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      /input schema is invalid/,
    ],
  ])('should refuse a schema it cannot check: %s', (_name, schema, reason) => {
    const check = compileArguments(schema);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it('should refuse to compile a schema over the size bound', () => {
    const properties: JsonObject = {};
    for (let i = 0; properties && JSON.stringify(properties).length <= MAX_SCHEMA_CHARS; i++)
      properties[`p${i}`] = { type: 'string', description: 'x'.repeat(1000) };
    const check = compileArguments({ type: 'object', properties });
    expect(check).toMatchObject({ ok: false });
    if (!check.ok) expect(check.reason).toContain(`over the ${MAX_SCHEMA_CHARS}`);
  });

  it('should keep compiled code linear when $refs fan out', () => {
    // Each level refers to the one below twice: inlined, the code would double at every level.
    const defs: JsonObject = { l0: { type: 'object', properties: { v: { type: 'string' } } } };
    for (let i = 1; i <= 40; i++)
      defs[`l${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/$defs/l${i - 1}` }, b: { $ref: `#/$defs/l${i - 1}` } },
      };
    const check = compiled({ type: 'object', $defs: defs, properties: { top: { $ref: '#/$defs/l40' } } });
    expect(check.validate({ top: { a: { b: {} } } })).toEqual({ ok: true });
    expect(check.validate({ top: { a: { b: 1 } } })).toEqual({
      ok: false,
      problems: ['"top.a.b" must be object, got integer'],
    });
  });

  it('should run patterns on a linear-time engine', () => {
    const check = compiled({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    // Catastrophic on a backtracking engine; RE2 answers at once.
    expect(check.validate({ s: `${'a'.repeat(5000)}!` }).ok).toBe(false);
    expect(check.validate({ s: 'aaaa' })).toEqual({ ok: true });
  });

  it('should leave a pattern RE2 cannot run unchecked rather than refuse the operation', () => {
    const check = compiled({ type: 'object', properties: { s: { type: 'string', pattern: '^(?=a)b$' } } });
    expect(check.validate({ s: 'anything' })).toEqual({ ok: true });
  });

  it('should keep ids of two schemas apart', () => {
    const a = compiled({
      $id: 'https://example.com/s',
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    const b = compiled({
      $id: 'https://example.com/s',
      type: 'object',
      properties: { a: { type: 'integer' } },
    });
    expect(a.validate({ a: 'x' }).ok).toBe(true);
    expect(b.validate({ a: 'x' }).ok).toBe(false);
  });

  it('should name each field in the message and cap the list', () => {
    const many = Array.from({ length: 14 }, (_, i) => `"f${i}" is required`);
    const message = rejectionMessage('shop__order', many);
    expect(message).toContain('The call to shop__order was not made');
    expect(message).toContain('"f0" is required; "f1" is required');
    expect(message).toContain('"f9" is required; and 4 more problems.');
    expect(message).not.toContain('"f10"');
  });
});
