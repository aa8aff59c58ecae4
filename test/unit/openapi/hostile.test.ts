/**
 * Hostile descriptions give a clear error or a bounded result; they never crash, hang or pollute.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import {
  convertDescription,
  DEFAULT_MAX_SCHEMA_NODES,
  DEFAULT_MAX_TOTAL_SCHEMA_NODES,
} from '../../../src/openapi/convert.js';
import { loadDescription, parseDescription } from '../../../src/openapi/load.js';
import { buildRequest } from '../../../src/openapi/request.js';
import { aliasedDescription } from '../../support/aliased-description.js';
import { aliasBombYaml, wideSelfReference, withBody } from '../../support/hostile-descriptions.js';
import { checkInputSchema, containerDepth, newAjv } from './schema-check.js';

type Json = Record<string, unknown>;

const noFetch = { fetchText: () => Promise.reject(new Error('no fetch expected')) };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : `not an AppError: ${String(error)}`;
  }
  return undefined;
}

const ajv = newAjv();

describe('hostile YAML', () => {
  // How fast it is refused: `npm run bench -- openapi` ("hostile: alias bomb", against petstore).
  it('should refuse a billion-laughs alias bomb with DESCRIPTION_INVALID', () => {
    const yaml = aliasBombYaml();
    expect(codeOf(() => parseDescription(yaml))).toBe('DESCRIPTION_INVALID');
    try {
      parseDescription(yaml);
    } catch (error) {
      expect((error as Error).message).toContain('alias');
    }
  });

  it('should refuse an alias bomb written in flow style without spaces', () => {
    const parts = ['&a0[lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]'];
    for (let i = 1; i <= 9; i++)
      parts.push(
        `&a${i}[${Array(10)
          .fill(`*a${i - 1}`)
          .join(',')}]`,
      );
    const text = `{openapi: 3.0.0, paths: {}, x-bomb: [${parts.join(',')}]}`;
    expect(codeOf(() => parseDescription(text))).toBe('DESCRIPTION_INVALID');
    expect(() => parseDescription(text)).toThrow(/alias bomb/);
  });

  it('should accept a description whose aliases expand modestly', () => {
    const yaml = 'openapi: 3.0.0\npaths: {}\nx-shared: &s {type: string}\nx-use: [*s, *s, *s]\n';
    expect(parseDescription(yaml).version).toBe('openapi-3.0');
  });

  it('should refuse an alias inside its own anchor', async () => {
    const error = await loadDescription(
      { text: 'openapi: 3.0.0\npaths: {}\nx-loop: &a [*a]\n' },
      noFetch,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('DESCRIPTION_INVALID');
    expect((error as AppError).message).toContain('refers to itself');
  });

  it.each([
    [
      'YAML',
      (depth: number) => `openapi: 3.0.0\npaths: {}\nx-deep: ${'['.repeat(depth)}${']'.repeat(depth)}\n`,
    ],
    [
      'JSON',
      (depth: number) => `{"openapi":"3.0.0","paths":{},"x-deep":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    ],
  ])('should refuse %s nested 10,000 levels with a clear error', (_format, text) => {
    expect(codeOf(() => parseDescription(text(10_000)))).toBe('DESCRIPTION_INVALID');
    expect(() => parseDescription(text(10_000))).toThrow(/nest/);
    expect(parseDescription(text(50)).version).toBe('openapi-3.0');
  });
});

describe('hostile schemas', () => {
  /** Builds a 10,000-level chain without recursion, `wrap` giving each level around the previous one. */
  function chain(wrap: (inner: Json, i: number) => Json, depth = 10_000): Json {
    let node: Json = { type: 'string' };
    for (let i = 0; i < depth; i++) node = wrap(node, i);
    return node;
  }

  it.each<[string, () => Json]>([
    ['properties', () => withBody(chain((inner) => ({ type: 'object', properties: { a: inner } })))],
    [
      'items',
      () =>
        withBody({ type: 'object', properties: { a: chain((inner) => ({ type: 'array', items: inner })) } }),
    ],
    ['allOf', () => withBody({ type: 'object', properties: { a: chain((inner) => ({ allOf: [inner] })) } })],
    [
      'anyOf',
      () =>
        withBody({
          type: 'object',
          properties: { a: chain((inner) => ({ anyOf: [inner, { type: 'null' }] })) },
        }),
    ],
    [
      'a $ref chain',
      () => {
        const schemas: Json = { s0: { type: 'string' } };
        for (let i = 1; i < 10_000; i++) schemas[`s${i}`] = { $ref: `#/components/schemas/s${i - 1}` };
        return withBody(
          { type: 'object', properties: { a: { $ref: '#/components/schemas/s9999' } } },
          schemas,
        );
      },
    ],
  ])(
    'should convert a schema nested 10,000 levels through %s without overflowing the stack',
    (_what, build) => {
      const doc = build();
      const result = convertDescription(doc, null, null);
      const schema = result.operations[0]?.inputSchema;
      expect(checkInputSchema(ajv, schema)).toEqual([]);
      expect(containerDepth(schema)).toBeLessThanOrEqual(5);
    },
  );

  it('should also survive such a document when it comes through JSON.parse', () => {
    let text = '{"type":"string"}';
    for (let i = 0; i < 10_000; i++) text = `{"type":"object","properties":{"a":${text}}}`;
    const doc = withBody(JSON.parse(text));
    expect(containerDepth(convertDescription(doc, null, null).operations[0]?.inputSchema)).toBe(5);
  });

  it.each([
    [
      'allOf',
      {
        A: { allOf: [{ $ref: '#/components/schemas/B' }, { properties: { a: { type: 'string' } } }] },
        B: { allOf: [{ $ref: '#/components/schemas/A' }, { properties: { b: { type: 'integer' } } }] },
      },
    ],
    ['a bare $ref loop', { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } }],
    [
      'a self allOf',
      {
        A: {
          type: 'object',
          allOf: [{ $ref: '#/components/schemas/A' }],
          properties: { a: { type: 'string' } },
        },
      },
    ],
  ])('should end a $ref cycle through %s with a diagnostic', (_what, schemas) => {
    const result = convertDescription(withBody({ $ref: '#/components/schemas/A' }, schemas), null, null);
    expect(checkInputSchema(ajv, result.operations[0]?.inputSchema)).toEqual([]);
    expect(result.diagnostics.join('\n')).toMatch(/cycle|itself|too long/);
  });

  it('should keep the merged properties of an allOf cycle', () => {
    const result = convertDescription(
      withBody(
        { $ref: '#/components/schemas/A' },
        {
          A: { allOf: [{ $ref: '#/components/schemas/B' }, { properties: { a: { type: 'string' } } }] },
          B: { allOf: [{ $ref: '#/components/schemas/A' }, { properties: { b: { type: 'integer' } } }] },
        },
      ),
      null,
      null,
    );
    expect(result.operations[0]?.inputSchema.properties).toEqual({
      b: { type: 'integer' },
      a: { type: 'string' },
    });
  });

  // How long it takes: `npm run bench -- openapi` ("hostile: 64 properties referring back", against petstore).
  it('should bound a schema whose 64 properties each refer back to it', () => {
    const result = convertDescription(wideSelfReference(), null, null);
    const schema = result.operations[0]?.inputSchema;
    // 64^5 nodes unbounded; the budget keeps the schema small enough to hand to a model.
    expect(JSON.stringify(schema).length).toBeLessThan(DEFAULT_MAX_SCHEMA_NODES * 100);
    expect(checkInputSchema(ajv, schema)).toEqual([]);
    expect(result.diagnostics.join('\n')).toContain('free-form');
  });
});

describe('hostile names', () => {
  // An object literal's `__proto__:` sets the prototype, so write a placeholder and swap it in the text.
  const text = JSON.stringify({
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      '/x': {
        post: {
          operationId: 'constructor',
          parameters: [{ name: 'toString', in: 'query', schema: { type: 'string' } }],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['PROTO'],
                  properties: {
                    PROTO: {
                      type: 'object',
                      properties: { polluted: { type: 'string' }, PROTO: { type: 'string' } },
                    },
                    constructor: { type: 'string' },
                    hasOwnProperty: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
    },
  }).replaceAll('"PROTO"', '"__proto__"');

  it('should keep __proto__ and constructor as ordinary property names without polluting prototypes', () => {
    // JSON.parse makes "__proto__" an own key, as a description from the network would have.
    const { document } = parseDescription(text);
    const result = convertDescription(document, null, null);
    const op = result.operations[0];
    expect(op?.name).toBe('constructor');
    const properties = op?.inputSchema.properties as Json;
    expect(Object.keys(properties)).toEqual(['__proto__', 'toString', 'constructor', 'hasOwnProperty']);
    expect(Object.hasOwn(properties, '__proto__')).toBe(true);
    expect(Object.keys((properties.__proto__ as Json).properties as Json)).toEqual(['polluted', '__proto__']);
    expect(op?.inputSchema.required).toEqual(['__proto__']);
    expect(checkInputSchema(ajv, op?.inputSchema)).toEqual([]);
    expect(({} as Json).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');

    const built = buildRequest(
      op!.binding,
      JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":"c","toString":"t"}'),
    );
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.request.url).toBe('https://api.example.com/x?toString=t');
    expect(built.request.body).toBe('{"__proto__":{"polluted":"yes"},"constructor":"c"}');
    expect(({} as Json).polluted).toBeUndefined();
  });

  it('should not take inherited names for document keys', () => {
    // A description without "paths" must not find Object.prototype's members as path items or refs.
    const result = convertDescription(
      withBody({ type: 'object', properties: { a: { $ref: '#/components/schemas/constructor' } } }),
      null,
      null,
    );
    expect((result.operations[0]?.inputSchema.properties as Json).a).toEqual({});
    expect(result.diagnostics.join('\n')).toContain('points to nothing');
  });
});

describe('hostile structure', () => {
  it.each([
    ['an array root', '[1, 2, 3]', 'found an array'],
    ['a string root', '"openapi"', 'found a string'],
    ['a null root', 'null', 'found null'],
  ])('should refuse %s with DESCRIPTION_INVALID', (_what, text, message) => {
    expect(() => parseDescription(text)).toThrow(message);
    expect(codeOf(() => convertDescription(JSON.parse(text), null, null))).toBe('DESCRIPTION_INVALID');
  });

  it.each([
    ['an array', []],
    ['a string', '/pets'],
    ['a number', 7],
    ['null', null],
  ])('should refuse paths that are %s with DESCRIPTION_INVALID', (_what, paths) => {
    let error: unknown;
    try {
      convertDescription(
        { openapi: '3.0.0', servers: [{ url: 'https://a.example.com' }], paths },
        null,
        null,
      );
    } catch (e) {
      error = e;
    }
    expect((error as AppError).code).toBe('DESCRIPTION_INVALID');
    expect((error as AppError).message).toContain('"paths" must be an object');
  });

  it.each([
    ['a string', '/other'],
    ['an array', [{ get: {} }]],
    ['null', null],
  ])('should ignore a path item that is %s, with a diagnostic', (_what, item) => {
    const result = convertDescription(
      {
        openapi: '3.0.0',
        servers: [{ url: 'https://a.example.com' }],
        paths: { '/bad': item, '/good': { get: {} } },
      },
      null,
      null,
    );
    expect(result.operations.map((o) => o.binding.path)).toEqual(['/good']);
    expect(result.diagnostics.join('\n')).toContain('"/bad"');
  });

  it.each([
    ['parameters that are not an array', { parameters: { name: 'x' } }],
    ['a parameter that is not an object', { parameters: ['x', null, 3] }],
    ['a requestBody without content', { requestBody: { required: true } }],
    ['a schema that is an array', { requestBody: { content: { 'application/json': { schema: [1, 2] } } } }],
    [
      'a type that is not a type',
      { requestBody: { content: { 'application/json': { schema: { type: 'banana', properties: 'x' } } } } },
    ],
    [
      'a required list of objects',
      {
        requestBody: {
          content: {
            'application/json': { schema: { type: 'object', required: [{}], properties: { a: {} } } },
          },
        },
      },
    ],
  ])('should convert an operation with %s', (_what, op) => {
    const result = convertDescription(
      { openapi: '3.0.0', servers: [{ url: 'https://a.example.com' }], paths: { '/x': { post: op } } },
      null,
      null,
    );
    expect(result.operations).toHaveLength(1);
    expect(checkInputSchema(ajv, result.operations[0]?.inputSchema)).toEqual([]);
  });
});

/** Nodes of an input schema as the converter counts them: every schema object once per place. */
function schemaNodes(schema: unknown): number {
  if (typeof schema !== 'object' || schema === null) return 0;
  const s = schema as Json;
  let n = 1;
  if (typeof s.properties === 'object' && s.properties !== null)
    for (const child of Object.values(s.properties as Json)) n += schemaNodes(child);
  if (typeof s.items === 'object') n += schemaNodes(s.items);
  if (typeof s.additionalProperties === 'object') n += schemaNodes(s.additionalProperties);
  return n;
}

describe('operations that share one large schema', () => {
  it('should keep all input schemas together within the total budget, every operation converted', () => {
    // 300 operations, one request body through a YAML alias: 576,000 nodes if each kept its copy.
    const result = convertDescription(parseDescription(aliasedDescription()).document, null, null);
    expect(result.operations).toHaveLength(300);
    const sizes = result.operations.map((o) => schemaNodes(o.inputSchema));
    const total = sizes.reduce((a, b) => a + b, 0);
    // Each later operation keeps at least its top-level fields (64 at most, plus the object itself).
    expect(total).toBeLessThanOrEqual(DEFAULT_MAX_TOTAL_SCHEMA_NODES + 300 * 65);
    expect(sizes[0]).toBeGreaterThan(DEFAULT_MAX_SCHEMA_NODES / 2);
    expect(sizes[0]).toBeLessThanOrEqual(DEFAULT_MAX_SCHEMA_NODES);
    expect(sizes[299]).toBeLessThanOrEqual(65);
    // The free-form fields of the last operation still name every field of the body.
    const last = result.operations[299]!;
    expect(Object.keys(last.inputSchema.properties as Json)).toHaveLength(18);
    expect(result.diagnostics).toContain(
      `the input schemas together were larger than ${DEFAULT_MAX_TOTAL_SCHEMA_NODES} nodes; the largest parts of later ones became free-form`,
    );
    for (const op of [result.operations[0], last]) expect(checkInputSchema(ajv, op?.inputSchema)).toEqual([]);
  }, 30_000);

  it('should leave descriptions under the budget as they were', () => {
    const small = parseDescription(aliasedDescription({ operations: 3 })).document;
    const unbounded = convertDescription(small, null, null, { maxTotalSchemaNodes: Number.MAX_SAFE_INTEGER });
    expect(convertDescription(small, null, null)).toEqual(unbounded);
  });
});
