import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import {
  convertDescription,
  type ConvertedOperation,
  type ConversionResult,
  type ConvertOptions,
  fitName,
  toOneLine,
} from '../../../src/openapi/convert.js';
import type { FieldBinding } from '../../../src/operations/types.js';
import { checkInputSchema, containerDepth, newAjv } from './schema-check.js';

type Json = Record<string, unknown>;

/** A minimal OpenAPI 3.0 description around `paths`. */
function oas(paths: Json, extra: Json = {}): Json {
  return {
    openapi: '3.0.3',
    info: { title: 'test', version: '1' },
    servers: [{ url: 'https://api.example.com/v1' }],
    paths,
    ...extra,
  };
}

/** A minimal Swagger 2.0 description around `paths`. */
function swagger(paths: Json, extra: Json = {}): Json {
  return {
    swagger: '2.0',
    info: { title: 'test', version: '1' },
    host: 'api.example.com',
    basePath: '/v2',
    schemes: ['https'],
    paths,
    ...extra,
  };
}

function convert(doc: unknown, options: ConvertOptions = {}, url: string | null = null): ConversionResult {
  return convertDescription(doc, url, null, options);
}

function only(doc: unknown, options: ConvertOptions = {}): ConvertedOperation {
  const result = convert(doc, options);
  expect(result.operations).toHaveLength(1);
  return result.operations[0] as ConvertedOperation;
}

/** The input schema of the single `POST /x` whose JSON body schema is `schema`. */
function bodySchema(schema: unknown, components: Json = {}, options: ConvertOptions = {}): Json {
  const op = only(
    oas(
      { '/x': { post: { operationId: 'x', requestBody: { content: { 'application/json': { schema } } } } } },
      { components: { schemas: components } },
    ),
    options,
  );
  return op.inputSchema;
}

function props(schema: Json): Record<string, Json> {
  return schema.properties as Record<string, Json>;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : `not an AppError: ${String(error)}`;
  }
  return undefined;
}

describe('convertDescription: operations', () => {
  it('should make one operation per get, post, put, patch and delete, in document order', () => {
    const result = convert(
      oas({
        '/a': { get: {}, head: {}, options: {}, trace: {}, post: {}, parameters: [] },
        '/b': { delete: {}, patch: {}, put: {} },
      }),
    );
    expect(result.operations.map((o) => `${o.binding.method} ${o.binding.path}`)).toEqual([
      'GET /a',
      'POST /a',
      'DELETE /b',
      'PATCH /b',
      'PUT /b',
    ]);
  });

  it.each([
    ['operationId', '/pets/{id}', 'get', { operationId: 'showPetById' }, 'showPetById'],
    ['method and path', '/pets/{id}', 'get', {}, 'get_pets_id'],
    ['method and a nested path', '/users/{user_id}/Repos', 'post', {}, 'post_users_user_id_repos'],
    ['the method alone for "/"', '/', 'delete', {}, 'delete'],
    ['method and an odd path', "/docs('{key}')", 'get', {}, 'get_docs_key'],
    ['a trimmed operationId', '/x', 'get', { operationId: '  spaced  ' }, 'spaced'],
    ['method and path for an empty operationId', '/x', 'get', { operationId: '' }, 'get_x'],
  ])('should name an operation from %s', (_what, path, method, op, expected) => {
    expect(only(oas({ [path]: { [method]: op } })).name).toBe(expected);
  });

  it('should number operation names that clash, counting skipped operations', () => {
    const result = convert(
      oas({
        '/a': { get: { operationId: 'dup' }, post: { operationId: 'dup', deprecated: true } },
        '/b': { get: { operationId: 'dup' }, post: { operationId: 'get_c' } },
        '/c': { get: {} },
      }),
    );
    expect(result.operations.map((o) => o.name)).toEqual(['dup', 'dup_3', 'get_c', 'get_c_2']);
    expect(result.skipped).toEqual([{ name: 'dup_2', method: 'POST', path: '/a', reason: 'DEPRECATED' }]);
  });

  it.each([
    [
      'summary and description',
      { summary: 'List pets', description: 'All of them.' },
      'List pets. All of them.',
    ],
    ['a summary ending in a stop', { summary: 'List pets.', description: 'All.' }, 'List pets. All.'],
    ['a description that repeats the summary', { summary: 'List', description: 'List pets.' }, 'List pets.'],
    [
      'HTML tags',
      { description: '<p>Returns <b>all</b> pets.</p><p>Paged.</p>' },
      'Returns all pets. Paged.',
    ],
    ['line breaks', { description: 'Line one\nline two\r\n\n  line three' }, 'Line one line two line three'],
    ['entities', { description: 'a &amp; b &lt;c&gt; &#233;' }, 'a & b <c> é'],
    ['nothing: method and path', {}, 'GET /pets'],
  ])('should describe an operation with %s as one line', (_what, op, expected) => {
    expect(only(oas({ '/pets': { get: op } })).description).toBe(expected);
  });

  it('should cut descriptions to 400 characters', () => {
    const op = only(oas({ '/pets': { get: { description: 'word '.repeat(200) } } }));
    expect(op.description.length).toBeLessThanOrEqual(400);
    expect(op.description.length).toBeGreaterThan(390);
    expect(op.description.endsWith('…')).toBe(true);
  });

  it.each([
    [{ summary: 'List pets' }, 'List pets'],
    [{ summary: '<b>List</b>\npets' }, 'List pets'],
    [{ description: 'no summary' }, null],
  ])('should take the title from the summary (%o)', (op, expected) => {
    expect(only(oas({ '/pets': { get: op } })).title).toBe(expected);
  });

  it.each([
    ['get', 'READ'],
    ['post', 'WRITE'],
    ['put', 'WRITE'],
    ['patch', 'WRITE'],
    ['delete', 'WRITE'],
  ])('should give %s operations the risk %s', (method, risk) => {
    expect(only(oas({ '/x': { [method]: {} } })).risk).toBe(risk);
  });

  it.each([
    ['deprecated: true', { deprecated: true }, 'DEPRECATED'],
    [
      'a multipart body',
      { requestBody: { content: { 'multipart/form-data': { schema: { type: 'object' } } } } },
      'UNSUPPORTED_BODY',
    ],
    [
      'an octet-stream body',
      { requestBody: { content: { 'application/octet-stream': {} } } },
      'UNSUPPORTED_BODY',
    ],
    [
      'an XML body',
      { requestBody: { content: { 'application/xml': { schema: { type: 'object' } } } } },
      'UNSUPPORTED_BODY',
    ],
  ])('should skip an operation with %s', (_what, op, reason) => {
    const result = convert(oas({ '/x': { post: { operationId: 'op', ...op } } }));
    expect(result.operations).toEqual([]);
    expect(result.skipped).toEqual([{ name: 'op', method: 'POST', path: '/x', reason }]);
  });

  it('should skip an operation that is not an object as INVALID', () => {
    const result = convert(oas({ '/x': { get: 'nope' } }));
    expect(result.skipped).toEqual([{ name: 'get_x', method: 'GET', path: '/x', reason: 'INVALID' }]);
  });

  it('should convert the first 300 operations and skip the rest as LIMIT', () => {
    const paths: Json = {};
    for (let i = 0; i < 305; i++) paths[`/r${i}`] = { get: { operationId: `op${i}` } };
    const result = convert(oas(paths));
    expect(result.operations).toHaveLength(300);
    expect(result.operations.at(-1)?.name).toBe('op299');
    expect(result.skipped.map((s) => [s.name, s.reason])).toEqual([
      ['op300', 'LIMIT'],
      ['op301', 'LIMIT'],
      ['op302', 'LIMIT'],
      ['op303', 'LIMIT'],
      ['op304', 'LIMIT'],
    ]);
  });

  it('should keep deprecated operations past the limit as DEPRECATED, not LIMIT', () => {
    const result = convert(
      oas({ '/a': { get: {} }, '/b': { get: {} }, '/c': { get: { deprecated: true } }, '/d': { get: {} } }),
      { maxOperations: 2 },
    );
    expect(result.skipped.map((s) => s.reason)).toEqual(['DEPRECATED', 'LIMIT']);
  });
});

describe('convertDescription: parameters', () => {
  it('should take path, query and header parameters as fields with their places', () => {
    const op = only(
      oas({
        '/pets/{petId}': {
          get: {
            parameters: [
              { name: 'petId', in: 'path', schema: { type: 'string' } },
              { name: 'limit', in: 'query', required: true, schema: { type: 'integer', maximum: 100 } },
              { name: 'X-Request-Id', in: 'header', description: 'Trace id.', schema: { type: 'string' } },
            ],
          },
        },
      }),
    );
    expect(op.inputSchema).toEqual({
      type: 'object',
      properties: {
        petId: { type: 'string' },
        limit: { type: 'integer', maximum: 100 },
        'X-Request-Id': { type: 'string', description: 'Trace id.' },
      },
      required: ['petId', 'limit'],
      additionalProperties: false,
    });
    expect(op.binding.fields).toEqual([
      { name: 'petId', in: 'path', wireName: 'petId', required: true },
      { name: 'limit', in: 'query', wireName: 'limit', required: true },
      { name: 'X-Request-Id', in: 'header', wireName: 'X-Request-Id' },
    ]);
  });

  it('should let operation-level parameters override path-level ones by name and place', () => {
    const op = only(
      oas({
        '/pets/{id}': {
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'fields', in: 'query', schema: { type: 'string' } },
            { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
          ],
          get: {
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
              { name: 'id', in: 'query', schema: { type: 'boolean' } },
              {
                name: 'fields',
                in: 'query',
                required: true,
                schema: { type: 'array', items: { type: 'string' } },
              },
            ],
          },
        },
      }),
    );
    expect(props(op.inputSchema)).toEqual({
      id: { type: 'integer' },
      fields: { type: 'array', items: { type: 'string' } },
      verbose: { type: 'boolean' },
      id_2: { type: 'boolean' },
    });
    expect(op.inputSchema.required).toEqual(['id', 'fields']);
    expect(op.binding.fields.map((f) => [f.name, f.in, f.wireName])).toEqual([
      ['id', 'path', 'id'],
      ['fields', 'query', 'fields'],
      ['verbose', 'query', 'verbose'],
      ['id_2', 'query', 'id'],
    ]);
  });

  it.each([
    'authorization',
    'Authorization',
    'proxy-authorization',
    'cookie',
    'HOST',
    'content-length',
    'Content-Type',
    'transfer-encoding',
    'connection',
    'Accept',
    'user-agent',
  ])('should leave out the header parameter %s', (name) => {
    const op = only(
      oas({
        '/x': {
          get: {
            parameters: [
              { name, in: 'header', required: true, schema: { type: 'string' } },
              { name: 'keep', in: 'header', schema: { type: 'string' } },
            ],
          },
        },
      }),
    );
    expect(Object.keys(props(op.inputSchema))).toEqual(['keep']);
    expect(op.inputSchema.required).toBeUndefined();
  });

  it('should leave out cookie parameters', () => {
    const op = only(
      oas({
        '/x': {
          get: {
            parameters: [{ name: 'session', in: 'cookie', required: true, schema: { type: 'string' } }],
          },
        },
      }),
    );
    expect(op.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(op.binding.fields).toEqual([]);
  });

  it('should follow $ref parameters (OpenAPI 3 and Swagger 2)', () => {
    const v3 = only(
      oas(
        { '/x': { get: { parameters: [{ $ref: '#/components/parameters/Limit' }] } } },
        {
          components: { parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer' } } } },
        },
      ),
    );
    expect(props(v3.inputSchema)).toEqual({ limit: { type: 'integer' } });
    const v2 = only(
      swagger(
        { '/x': { get: { parameters: [{ $ref: '#/parameters/Limit' }] } } },
        { parameters: { Limit: { name: 'limit', in: 'query', type: 'integer', minimum: 1 } } },
      ),
    );
    expect(props(v2.inputSchema)).toEqual({ limit: { type: 'integer', minimum: 1 } });
  });

  it('should add a path placeholder that no parameter declares as a required string', () => {
    const result = convert(oas({ '/orgs/{org}': { get: {} } }));
    expect(result.operations[0]?.inputSchema).toEqual({
      type: 'object',
      properties: { org: { type: 'string' } },
      required: ['org'],
      additionalProperties: false,
    });
    expect(result.diagnostics.join('\n')).toContain('{org}');
  });

  it.each([
    [
      'OpenAPI 3 style form, explode false',
      { style: 'form', explode: false },
      { style: 'form', explode: false },
    ],
    ['OpenAPI 3 deepObject', { style: 'deepObject', explode: true }, { style: 'deepObject', explode: true }],
    ['OpenAPI 3 default (form, explode)', {}, {}],
  ])('should record the query style of %s', (_what, declared, expected) => {
    const op = only(
      oas({
        '/x': {
          get: {
            parameters: [
              { name: 'q', in: 'query', ...declared, schema: { type: 'array', items: { type: 'string' } } },
            ],
          },
        },
      }),
    );
    const { name: _n, in: _i, wireName: _w, ...rest } = op.binding.fields[0] as FieldBinding;
    expect(rest).toEqual(expected);
  });

  it.each([
    ['csv (the Swagger 2 default)', undefined, { style: 'form', explode: false }],
    ['multi', 'multi', {}],
    ['pipes', 'pipes', { style: 'pipeDelimited', explode: false }],
    ['ssv', 'ssv', { style: 'spaceDelimited', explode: false }],
  ])('should map the Swagger 2 collectionFormat %s', (_what, collectionFormat, expected) => {
    const op = only(
      swagger({
        '/x': {
          get: {
            parameters: [
              { name: 'q', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat },
            ],
          },
        },
      }),
    );
    const { name: _n, in: _i, wireName: _w, ...rest } = op.binding.fields[0] as FieldBinding;
    expect(rest).toEqual(expected);
  });
});

describe('convertDescription: request bodies', () => {
  const objectSchema = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, tag: { type: 'string' } },
  };

  it.each([
    ['JSON', { 'application/json': { schema: objectSchema } }, 'json'],
    ['JSON with a charset', { 'application/json; charset=utf-8': { schema: objectSchema } }, 'json'],
    ['a form', { 'application/x-www-form-urlencoded': { schema: objectSchema } }, 'form'],
    [
      'a form and JSON (JSON wins)',
      {
        'application/x-www-form-urlencoded': { schema: objectSchema },
        'application/json': { schema: objectSchema },
      },
      'json',
    ],
    [
      'multipart and JSON (JSON wins)',
      { 'multipart/form-data': { schema: objectSchema }, 'application/json': { schema: objectSchema } },
      'json',
    ],
    [
      'XML and a form',
      { 'application/xml': {}, 'application/x-www-form-urlencoded': { schema: objectSchema } },
      'form',
    ],
  ])('should take the properties of %s body as fields', (_what, content, encoding) => {
    const op = only(oas({ '/pets': { post: { requestBody: { required: true, content } } } }));
    expect(op.inputSchema).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, tag: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    });
    expect(op.binding).toMatchObject({ bodyEncoding: encoding, wholeBody: false });
    expect(op.binding.fields).toEqual([
      { name: 'name', in: 'body', wireName: 'name', required: true },
      { name: 'tag', in: 'body', wireName: 'tag' },
    ]);
  });

  it.each([
    ['an array', { type: 'array', items: { type: 'string' } }, true],
    ['a string', { type: 'string' }, false],
    ['a free-form object', { type: 'object' }, true],
  ])('should make a body that is %s one field named body', (_what, schema, required) => {
    const op = only(
      oas({ '/x': { post: { requestBody: { required, content: { 'application/json': { schema } } } } } }),
    );
    expect(op.inputSchema).toEqual({
      type: 'object',
      properties: { body: schema },
      ...(required ? { required: ['body'] } : {}),
      additionalProperties: false,
    });
    expect(op.binding).toMatchObject({ bodyEncoding: 'json', wholeBody: true });
    expect(op.binding.fields).toEqual([
      { name: 'body', in: 'body', wireName: 'body', ...(required ? { required } : {}) },
    ]);
  });

  it('should send a JSON media type other than application/json as the content type', () => {
    const op = only(
      oas({
        '/x': {
          patch: { requestBody: { content: { 'application/merge-patch+json': { schema: objectSchema } } } },
        },
      }),
    );
    expect(op.binding).toMatchObject({ bodyEncoding: 'json', contentType: 'application/merge-patch+json' });
  });

  it('should treat a closed object without properties as no body', () => {
    const op = only(
      oas({
        '/x': {
          get: {
            requestBody: {
              content: {
                'application/x-www-form-urlencoded': {
                  schema: { type: 'object', properties: {}, additionalProperties: false },
                },
              },
            },
          },
        },
      }),
    );
    expect(op.binding).toMatchObject({ bodyEncoding: null, wholeBody: false, fields: [] });
  });

  it('should follow a $ref request body and record form encodings', () => {
    const op = only(
      oas(
        { '/x': { post: { requestBody: { $ref: '#/components/requestBodies/Create' } } } },
        {
          components: {
            requestBodies: {
              Create: {
                content: {
                  'application/x-www-form-urlencoded': {
                    schema: {
                      type: 'object',
                      properties: { expand: { type: 'array', items: { type: 'string' } } },
                    },
                    encoding: { expand: { style: 'deepObject', explode: true } },
                  },
                },
              },
            },
          },
        },
      ),
    );
    expect(op.binding.fields).toEqual([
      { name: 'expand', in: 'body', wireName: 'expand', style: 'deepObject', explode: true },
    ]);
  });

  it('should map a Swagger 2 body parameter to fields, or to one body field when not an object', () => {
    const result = convert(
      swagger({
        '/pets': {
          post: {
            parameters: [{ name: 'pet', in: 'body', required: true, schema: objectSchema }],
          },
          put: {
            parameters: [
              {
                name: 'pets',
                in: 'body',
                required: true,
                schema: { type: 'array', items: { type: 'string' } },
              },
            ],
          },
        },
      }),
    );
    const [post, put] = result.operations;
    expect(post?.binding).toMatchObject({
      bodyEncoding: 'json',
      wholeBody: false,
      baseUrl: 'https://api.example.com/v2',
    });
    expect(post?.inputSchema.required).toEqual(['name']);
    expect(put?.binding).toMatchObject({ bodyEncoding: 'json', wholeBody: true });
    expect(put?.inputSchema.properties).toEqual({ body: { type: 'array', items: { type: 'string' } } });
  });

  it('should map Swagger 2 formData parameters to form fields', () => {
    const op = only(
      swagger({
        '/pets/{id}': {
          post: {
            consumes: ['application/x-www-form-urlencoded', 'application/json'],
            parameters: [
              { name: 'id', in: 'path', required: true, type: 'string' },
              { name: 'name', in: 'formData', required: true, type: 'string', description: 'New name.' },
              {
                name: 'tags',
                in: 'formData',
                type: 'array',
                items: { type: 'string' },
                collectionFormat: 'multi',
              },
            ],
          },
        },
      }),
    );
    expect(op.inputSchema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string' },
        name: { type: 'string', description: 'New name.' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['id', 'name'],
      additionalProperties: false,
    });
    expect(op.binding).toMatchObject({ bodyEncoding: 'form', wholeBody: false });
    expect(op.binding.fields.map((f) => [f.name, f.in])).toEqual([
      ['id', 'path'],
      ['name', 'body'],
      ['tags', 'body'],
    ]);
  });

  it.each([
    ['a file parameter', ['multipart/form-data'], [{ name: 'file', in: 'formData', type: 'file' }]],
    ['multipart only', ['multipart/form-data'], [{ name: 'note', in: 'formData', type: 'string' }]],
    ['an XML body', ['application/xml'], [{ name: 'b', in: 'body', schema: { type: 'object' } }]],
  ])('should skip a Swagger 2 operation with %s as UNSUPPORTED_BODY', (_what, consumes, parameters) => {
    const result = convert(swagger({ '/x': { post: { operationId: 'up', consumes, parameters } } }));
    expect(result.skipped).toEqual([{ name: 'up', method: 'POST', path: '/x', reason: 'UNSUPPORTED_BODY' }]);
  });

  it('should take the Swagger 2 document-level consumes when the operation has none', () => {
    const result = convert(
      swagger(
        { '/x': { post: { parameters: [{ name: 'b', in: 'body', schema: { type: 'object' } }] } } },
        { consumes: ['application/octet-stream'] },
      ),
    );
    expect(result.skipped.map((s) => s.reason)).toEqual(['UNSUPPORTED_BODY']);
  });
});

describe('convertDescription: input schemas', () => {
  it.each([
    ['a plain reference', { $ref: '#/components/schemas/Pet' }, { Pet: { type: 'string', format: 'uuid' } }],
    ['an escaped "/"', { $ref: '#/components/schemas/a~1b' }, { 'a/b': { type: 'string', format: 'uuid' } }],
    ['an escaped "~"', { $ref: '#/components/schemas/a~0b' }, { 'a~b': { type: 'string', format: 'uuid' } }],
    [
      'a percent-encoded name',
      { $ref: '#/components/schemas/a%20b' },
      { 'a b': { type: 'string', format: 'uuid' } },
    ],
    [
      'a chain',
      { $ref: '#/components/schemas/A' },
      { A: { $ref: '#/components/schemas/B' }, B: { type: 'string', format: 'uuid' } },
    ],
  ])('should follow %s', (_what, schema, components) => {
    expect(props(bodySchema({ type: 'object', properties: { id: schema } }, components)).id).toEqual({
      type: 'string',
      format: 'uuid',
    });
  });

  it.each([
    ['an external file', 'other.yaml#/Pet', 'not local'],
    ['an absolute URL', 'https://example.com/schemas.json#/Pet', 'not local'],
    ['a missing target', '#/components/schemas/Nope', 'points to nothing'],
    ['a bad escape', '#/components/schemas/%E0%A4%A', 'not a valid URI fragment'],
  ])('should replace a reference to %s by {} with a diagnostic', (_what, ref, message) => {
    const result = convert(
      oas({
        '/x': {
          post: {
            requestBody: {
              content: {
                'application/json': { schema: { type: 'object', properties: { a: { $ref: ref } } } },
              },
            },
          },
        },
      }),
    );
    expect(props(result.operations[0]?.inputSchema as Json).a).toEqual({});
    expect(result.diagnostics.some((d) => d.includes(ref) && d.includes(message))).toBe(true);
  });

  it('should end a self-referencing schema at the depth limit', () => {
    const schema = bodySchema(
      { $ref: '#/components/schemas/Node' },
      {
        Node: {
          type: 'object',
          properties: { name: { type: 'string' }, child: { $ref: '#/components/schemas/Node' } },
        },
      },
    );
    expect(containerDepth(schema)).toBe(5);
    let node = schema;
    for (let level = 1; level < 5; level++) node = props(node).child as Json;
    expect(props(node)).toEqual({ name: { type: 'string' }, child: { type: 'object' } });
  });

  it('should merge allOf: properties, required and types, recursively', () => {
    const schema = bodySchema(
      {
        allOf: [
          { $ref: '#/components/schemas/Base' },
          { type: 'object', required: ['b'], properties: { b: { type: 'integer' }, a: { maxLength: 5 } } },
        ],
      },
      {
        Base: {
          allOf: [{ $ref: '#/components/schemas/Root' }],
          type: 'object',
          required: ['a'],
          properties: { a: { type: ['string', 'null'] } },
        },
        Root: {
          properties: { id: { type: 'string', readOnly: true }, r: { type: 'boolean' } },
          required: ['r'],
        },
      },
    );
    expect(schema).toEqual({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], maxLength: 5 },
        r: { type: 'boolean' },
        b: { type: 'integer' },
      },
      required: ['a', 'r', 'b'],
      additionalProperties: false,
    });
  });

  it('should intersect types when allOf members both give one', () => {
    const schema = bodySchema({
      type: 'object',
      properties: {
        v: { allOf: [{ type: ['string', 'integer', 'null'] }, { type: ['integer', 'boolean'] }] },
      },
    });
    expect(props(schema).v).toEqual({ type: 'integer' });
  });

  it.each(['oneOf', 'anyOf'])('should take the first option of %s', (keyword) => {
    const schema = bodySchema({
      type: 'object',
      properties: {
        v: {
          description: 'Either.',
          [keyword]: [{ type: 'object', properties: { x: { type: 'string' } } }, { type: 'string' }],
        },
      },
    });
    expect(props(schema).v).toEqual({
      type: 'object',
      description: 'Either.',
      properties: { x: { type: 'string' } },
      additionalProperties: false,
    });
  });

  it('should keep 64 properties, required ones first, then document order', () => {
    const properties: Json = {};
    for (let i = 0; i < 70; i++) properties[`p${i}`] = { type: 'string' };
    const result = convert(
      oas({
        '/x': {
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { nested: { type: 'object', properties, required: ['p68', 'p69'] } },
                  },
                },
              },
            },
          },
        },
      }),
    );
    const nested = props(result.operations[0]?.inputSchema as Json).nested as Json;
    const names = Object.keys(props(nested));
    expect(names).toHaveLength(64);
    expect(names.slice(0, 3)).toEqual(['p68', 'p69', 'p0']);
    expect(names.at(-1)).toBe('p61');
    expect(nested.required).toEqual(['p68', 'p69']);
    expect(result.diagnostics.some((d) => d.includes('70 properties'))).toBe(true);
  });

  it('should keep 64 top-level fields, required ones (path parameters) first', () => {
    const parameters = [];
    for (let i = 0; i < 66; i++) parameters.push({ name: `q${i}`, in: 'query', schema: { type: 'string' } });
    parameters.push({ name: 'id', in: 'path', schema: { type: 'string' } });
    const op = only(oas({ '/x/{id}': { get: { parameters } } }));
    const names = Object.keys(props(op.inputSchema));
    expect(names).toHaveLength(64);
    expect(names[0]).toBe('id');
    expect(op.binding.fields).toHaveLength(64);
  });

  it('should nest objects five levels deep and cut the sixth to a free-form object', () => {
    let deep: Json = { type: 'object', properties: { leaf: { type: 'string' } } };
    for (let i = 0; i < 8; i++) deep = { type: 'object', properties: { [`l${8 - i}`]: deep } };
    const schema = bodySchema(deep);
    expect(containerDepth(schema)).toBe(5);
    const l4 = props(props(props(schema).l1 as Json).l2 as Json).l3 as Json;
    expect(l4).toEqual({
      type: 'object',
      properties: {
        l4: { type: 'object', properties: { l5: { type: 'object' } }, additionalProperties: false },
      },
      additionalProperties: false,
    });
  });

  it('should count arrays as levels too', () => {
    let deep: Json = { type: 'string' };
    for (let i = 0; i < 8; i++) deep = { type: 'array', items: deep };
    const schema = bodySchema({ type: 'object', properties: { a: deep } });
    expect(containerDepth(schema)).toBe(5);
  });

  it('should give every object that lists properties additionalProperties: false', () => {
    const schema = bodySchema({
      type: 'object',
      properties: {
        a: { properties: { b: { type: 'array', items: { properties: { c: { type: 'string' } } } } } },
        m: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        a: {
          type: 'object',
          properties: {
            b: {
              type: 'array',
              items: { type: 'object', properties: { c: { type: 'string' } }, additionalProperties: false },
            },
          },
          additionalProperties: false,
        },
        m: { type: 'object', additionalProperties: { type: 'integer' } },
      },
      additionalProperties: false,
    });
  });

  it('should leave out readOnly properties, also from required', () => {
    const schema = bodySchema(
      {
        type: 'object',
        required: ['id', 'name'],
        properties: {
          id: { $ref: '#/components/schemas/Id' },
          created: { type: 'string', readOnly: true },
          name: { type: 'string' },
        },
      },
      { Id: { type: 'string', readOnly: true } },
    );
    expect(schema).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    });
  });

  it('should keep the first 200 enum values', () => {
    const values = Array.from({ length: 250 }, (_, i) => `v${i}`);
    const result = convert(
      oas({
        '/x': { get: { parameters: [{ name: 'e', in: 'query', schema: { type: 'string', enum: values } }] } },
      }),
    );
    expect(props(result.operations[0]?.inputSchema as Json).e?.enum).toEqual(values.slice(0, 200));
    expect(result.diagnostics.some((d) => d.includes('250'))).toBe(true);
  });

  it.each([
    ['nullable', { type: 'string', nullable: true }, { type: ['string', 'null'] }],
    [
      'exclusive bounds as booleans',
      { type: 'number', minimum: 1, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false },
      { type: 'number', exclusiveMinimum: 1, maximum: 9 },
    ],
    ['an invalid pattern', { type: 'string', pattern: '(?<!x' }, { type: 'string' }],
    ['a valid pattern', { type: 'string', pattern: '^[a-z]+$' }, { type: 'string', pattern: '^[a-z]+$' }],
    ['Swagger file type', { type: 'file' }, { type: 'string' }],
    [
      'unknown keywords',
      { type: 'string', example: 'x', 'x-vendor': 1, title: 'T', discriminator: {} },
      { type: 'string' },
    ],
  ])('should write %s as plain JSON Schema', (_what, input, expected) => {
    expect(props(bodySchema({ type: 'object', properties: { v: input } })).v).toEqual(expected);
  });

  it('should write property descriptions as one line of at most 400 characters', () => {
    const schema = props(
      bodySchema({
        type: 'object',
        properties: { v: { type: 'string', description: '<p>a</p>\n'.repeat(300) } },
      }),
    );
    const description = schema.v?.description as string;
    expect(description.length).toBeLessThanOrEqual(400);
    expect(description.startsWith('a a a')).toBe(true);
    expect(description).not.toMatch(/[\n<]/);
  });
});

describe('convertDescription: names', () => {
  it.each([
    ['a name that fits', 'user_id', 'user_id'],
    ['dots and dashes', 'a.b-c', 'a.b-c'],
    ['spaces', 'first name', 'first_name'],
    ['a $ prefix', '$filter', 'filter'],
    ['brackets', 'tags[]', 'tags'],
    ['an @ prefix', '@odata.count', 'odata.count'],
    ['a slash', 'twilio/card', 'twilio_card'],
    ['only symbols', '$$$', 'field'],
    ['a long name', 'x'.repeat(80), 'x'.repeat(64)],
  ])('should make %s fit', (_what, name, expected) => {
    expect(fitName(name)).toBe(expected);
    const schema = bodySchema({ type: 'object', properties: { [name]: { type: 'string' } } });
    expect(Object.keys(props(schema))).toEqual([expected]);
  });

  it('should number a clash, keeping the name that already fits, and bind the real names', () => {
    const op = only(
      oas({
        '/x': {
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      'a b': { type: 'string' },
                      a_b: { type: 'integer' },
                      a$b: { type: 'boolean' },
                    },
                  },
                },
              },
            },
          },
        },
      }),
    );
    expect(props(op.inputSchema)).toEqual({
      a_b_2: { type: 'string' },
      a_b: { type: 'integer' },
      a_b_3: { type: 'boolean' },
    });
    expect(op.binding.fields.map((f) => [f.name, f.wireName])).toEqual([
      ['a_b_2', 'a b'],
      ['a_b', 'a_b'],
      ['a_b_3', 'a$b'],
    ]);
  });

  it('should number a body field that clashes with a parameter', () => {
    const op = only(
      oas({
        '/x/{name}': {
          put: {
            parameters: [{ name: 'name', in: 'path', schema: { type: 'string' } }],
            requestBody: {
              content: {
                'application/json': {
                  schema: { type: 'object', required: ['name'], properties: { name: { type: 'integer' } } },
                },
              },
            },
          },
        },
      }),
    );
    expect(op.binding.fields).toEqual([
      { name: 'name', in: 'path', wireName: 'name', required: true },
      { name: 'name_2', in: 'body', wireName: 'name', required: true },
    ]);
    expect(op.inputSchema.required).toEqual(['name', 'name_2']);
  });

  it('should keep the real names at every nesting level', () => {
    const op = only(
      oas({
        '/x': {
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      outer: {
                        type: 'object',
                        properties: {
                          'inner key': {
                            type: 'array',
                            items: {
                              type: 'object',
                              properties: { '@id': { type: 'string' }, ok: { type: 'string' } },
                            },
                          },
                          map: {
                            type: 'object',
                            additionalProperties: {
                              type: 'object',
                              properties: { 'v/1': { type: 'string' } },
                            },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      }),
    );
    const outer = props(op.inputSchema).outer as Json;
    expect(Object.keys(props(outer))).toEqual(['inner_key', 'map']);
    expect(op.binding.fields[0]).toEqual({
      name: 'outer',
      in: 'body',
      wireName: 'outer',
      nested: {
        properties: {
          inner_key: {
            wireName: 'inner key',
            nested: { items: { properties: { id: { wireName: '@id' } } } },
          },
          map: {
            wireName: 'map',
            nested: { additionalProperties: { properties: { v_1: { wireName: 'v/1' } } } },
          },
        },
      },
    });
  });
});

describe('convertDescription: base address', () => {
  it.each([
    [
      'servers[0] with variable defaults',
      oas(
        { '/x': { get: {} } },
        {
          servers: [
            {
              url: 'https://{region}.example.com/{v}',
              variables: { region: { default: 'eu' }, v: { default: 'v2' } },
            },
            { url: 'https://other.example.com' },
          ],
        },
      ),
      null,
      'https://eu.example.com/v2',
    ],
    [
      'a relative server resolved against the description address',
      oas({ '/x': { get: {} } }, { servers: [{ url: '/api/v3' }] }),
      'https://docs.example.com/specs/openapi.json',
      'https://docs.example.com/api/v3',
    ],
    [
      'no servers: the description address',
      oas({ '/x': { get: {} } }, { servers: undefined }),
      'https://docs.example.com/specs/openapi.json',
      'https://docs.example.com',
    ],
    [
      'path-level servers',
      oas({ '/x': { servers: [{ url: 'https://path.example.com/' }], get: {} } }),
      null,
      'https://path.example.com',
    ],
    [
      'operation-level servers',
      oas({
        '/x': {
          servers: [{ url: 'https://path.example.com' }],
          get: { servers: [{ url: 'https://files.example.com/v1' }] },
        },
      }),
      null,
      'https://files.example.com/v1',
    ],
    [
      'Swagger 2 host, basePath, https',
      swagger({ '/x': { get: {} } }, { schemes: ['http', 'https'] }),
      null,
      'https://api.example.com/v2',
    ],
    [
      'Swagger 2 http only',
      swagger({ '/x': { get: {} } }, { schemes: ['http'] }),
      null,
      'http://api.example.com/v2',
    ],
    [
      'Swagger 2 without host: the description host',
      swagger({ '/x': { get: {} } }, { host: undefined, schemes: undefined }),
      'https://k8s.example.com:6443/openapi/v2',
      'https://k8s.example.com:6443/v2',
    ],
  ])('should take the base address from %s', (_what, doc, url, expected) => {
    expect(convertDescription(doc, url, null).operations[0]?.binding.baseUrl).toBe(expected);
  });

  it('should let an https override replace every server', () => {
    const doc = oas({
      '/x': { get: { servers: [{ url: 'https://files.example.com' }] } },
      '/y': { get: {} },
    });
    const result = convertDescription(doc, null, 'https://proxy.example.com/base/');
    expect(result.operations.map((o) => o.binding.baseUrl)).toEqual([
      'https://proxy.example.com/base',
      'https://proxy.example.com/base',
    ]);
  });

  it.each([
    ['http://api.example.com', 'BASE_URL_INVALID'],
    ['api.example.com', 'BASE_URL_INVALID'],
    ['https://user:pw@api.example.com', 'BASE_URL_INVALID'],
  ])('should refuse the override %s', (override, code) => {
    expect(codeOf(() => convertDescription(oas({ '/x': { get: {} } }), null, override))).toBe(code);
  });

  it.each([
    ['no servers and no address', oas({ '/x': { get: {} } }, { servers: undefined })],
    ['a relative server and no address', oas({ '/x': { get: {} } }, { servers: [{ url: '/v1' }] })],
    [
      'a Swagger 2 description without host and no address',
      swagger({ '/x': { get: {} } }, { host: undefined }),
    ],
  ])('should refuse %s with BASE_URL_MISSING', (_what, doc) => {
    let error: unknown;
    try {
      convertDescription(doc, null, null);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('BASE_URL_MISSING');
    expect((error as AppError).message).toContain('baseUrl');
  });
});

describe('convertDescription: documents', () => {
  it.each([
    ['an array', [], 'found an array'],
    ['a string', 'openapi: 3.0.0', 'found a string'],
    ['null', null, 'found null'],
    ['OpenAPI 4', { openapi: '4.0.0', paths: {} }, '"openapi": "4.0.0"'],
    ['OpenAPI 2.0', { openapi: '2.0', paths: {} }, '"openapi": "2.0"'],
    ['Swagger 1.2', { swagger: '1.2', paths: {} }, '"swagger": "1.2"'],
    ['no version', { info: {}, paths: {} }, 'top-level keys: info, paths'],
  ])('should refuse %s with DESCRIPTION_INVALID saying what it found', (_what, doc, found) => {
    let error: unknown;
    try {
      convertDescription(doc, null, null);
    } catch (e) {
      error = e;
    }
    expect((error as AppError).code).toBe('DESCRIPTION_INVALID');
    expect((error as AppError).message).toContain(found);
  });

  it.each([
    ['openapi 3.0.x', '3.0.3', 'openapi-3.0'],
    ['openapi 3.1.x', '3.1.0', 'openapi-3.1'],
  ])('should recognise %s', (_what, openapi, version) => {
    expect(convert(oas({}, { openapi })).version).toBe(version);
  });

  it('should give no operations for a description without paths', () => {
    expect(convert({ openapi: '3.1.0', info: {}, webhooks: {} })).toMatchObject({
      operations: [],
      skipped: [],
    });
  });

  it('should produce schemas that pass the independent checker', () => {
    const ajv = newAjv();
    const schema = bodySchema({
      type: 'object',
      properties: {
        a: { type: 'string', enum: ['x', 'x', 'y'] },
        'b c': { type: 'array', items: { type: 'integer' } },
      },
    });
    expect(checkInputSchema(ajv, schema)).toEqual([]);
    expect(props(schema).a?.enum).toEqual(['x', 'y']);
  });

  it('should not read the clock or change the document', () => {
    const doc = oas(
      {
        '/x': {
          post: {
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } },
          },
        },
      },
      {
        components: {
          schemas: { A: { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }] } },
        },
      },
    );
    const before = JSON.stringify(doc);
    const first = convert(doc);
    expect(JSON.stringify(doc)).toBe(before);
    expect(JSON.stringify(convert(doc))).toBe(JSON.stringify(first));
  });
});

describe('toOneLine', () => {
  it('should never split a surrogate pair when it cuts', () => {
    const line = toOneLine(`${'a'.repeat(8)}😀😀`, 10);
    expect(line).toBe('aaaaaaaa…');
  });
});
