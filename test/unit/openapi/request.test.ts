import { describe, expect, it } from 'vitest';
import { convertDescription } from '../../../src/openapi/convert.js';
import { buildRequest, type BuildRequestResult, type HttpRequest } from '../../../src/openapi/request.js';
import type { FieldBinding, OpenApiBinding } from '../../../src/operations/types.js';

function binding(fields: FieldBinding[], extra: Partial<OpenApiBinding> = {}): OpenApiBinding {
  return {
    method: 'POST',
    path: '/items/{id}',
    baseUrl: 'https://api.example.com/v1',
    bodyEncoding: 'json',
    wholeBody: false,
    fields,
    ...extra,
  };
}

const idField: FieldBinding = { name: 'id', in: 'path', wireName: 'id', required: true };

function ok(result: BuildRequestResult): HttpRequest {
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  return result.request;
}

function refusal(result: BuildRequestResult): string {
  if (result.ok) throw new Error(`built: ${JSON.stringify(result.request)}`);
  return result.message;
}

describe('buildRequest: path', () => {
  it.each([
    ['a plain value', 'abc', '/items/abc'],
    ['a number', 42, '/items/42'],
    ['a slash', 'a/b', '/items/a%2Fb'],
    ['a question mark', 'a?x=1', '/items/a%3Fx%3D1'],
    ['a hash', 'a#frag', '/items/a%23frag'],
    ['a traversal inside a value', '../admin', '/items/..%2Fadmin'],
    ['an encoded traversal', '%2e%2e', '/items/%252e%252e'],
    ['a space and unicode', 'a b é', '/items/a%20b%20%C3%A9'],
    ['an array (simple style)', ['a', 'b/c'], '/items/a,b%2Fc'],
  ])('should encode %s as one segment', (_what, id, path) => {
    const request = ok(buildRequest(binding([idField], { bodyEncoding: null }), { id }));
    expect(request.url).toBe(`https://api.example.com/v1${path}`);
  });

  it.each([
    ['..', '"id" cannot be "." or ".."'],
    ['.', '"id" cannot be "." or ".."'],
    [{ a: 1 }, '"id" goes into the URL path and must be a string or a number'],
  ])('should refuse the path value %j', (id, message) => {
    expect(refusal(buildRequest(binding([idField]), { id }))).toContain(message);
  });

  it.each([
    ['missing', {}],
    ['null', { id: null }],
    ['empty', { id: '' }],
  ])('should refuse a %s path value, naming the field, before any request', (_what, args) => {
    const message = refusal(buildRequest(binding([idField]), args));
    expect(message).toBe(
      'The call was not made: missing required argument "id". Call the tool again with values for them.',
    );
  });

  it('should use the wire name in the template and append the query to a path that has one', () => {
    const request = ok(
      buildRequest(
        binding(
          [
            { name: 'response_id', in: 'path', wireName: 'response-id', required: true },
            { name: 'q', in: 'query', wireName: 'q' },
          ],
          { path: '/responses/{response-id}?beta=true', method: 'GET', bodyEncoding: null },
        ),
        { response_id: 'r1', q: 'x' },
      ),
    );
    expect(request.url).toBe('https://api.example.com/v1/responses/r1?beta=true&q=x');
  });
});

describe('buildRequest: required fields and declared fields', () => {
  const fields: FieldBinding[] = [
    idField,
    { name: 'name', in: 'body', wireName: 'name', required: true },
    { name: 'limit', in: 'query', wireName: 'limit', required: true },
    { name: 'note', in: 'body', wireName: 'note' },
  ];

  it('should name every missing required field in one refusal', () => {
    expect(refusal(buildRequest(binding(fields), { note: 'x' }))).toBe(
      'The call was not made: missing required arguments "id", "name", "limit". Call the tool again with values for them.',
    );
  });

  it('should send only the declared fields', () => {
    const request = ok(
      buildRequest(binding(fields), {
        id: '1',
        name: 'n',
        limit: 5,
        extra: 'dropped',
        __proto__x: 1,
        url: 'x',
      }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.example.com/v1/items/1?limit=5',
      headers: {},
      body: '{"name":"n"}',
      contentType: 'application/json',
    });
  });

  it.each([
    ['an array', []],
    ['a string', 'id=1'],
    ['a number', 3],
  ])('should refuse arguments that are %s', (_what, args) => {
    expect(refusal(buildRequest(binding([]), args))).toContain('must be a JSON object');
  });

  it('should accept no arguments for an operation without required fields', () => {
    expect(
      ok(buildRequest(binding([], { path: '/ping', method: 'GET', bodyEncoding: null }), undefined)).url,
    ).toBe('https://api.example.com/v1/ping');
  });
});

describe('buildRequest: query', () => {
  it.each<[string, Partial<FieldBinding>, unknown, string]>([
    ['a string', {}, 'a b&c', 'q=a%20b%26c'],
    ['a boolean', {}, false, 'q=false'],
    ['an array (form, explode: the default)', {}, ['a', 'b'], 'q=a&q=b'],
    ['an array (form, no explode)', { style: 'form', explode: false }, ['a', 'b,c'], 'q=a,b%2Cc'],
    ['an array (spaceDelimited)', { style: 'spaceDelimited', explode: false }, ['a', 'b'], 'q=a%20b'],
    ['an array (pipeDelimited)', { style: 'pipeDelimited', explode: false }, ['a', 'b'], 'q=a|b'],
    ['an object (deepObject)', { style: 'deepObject', explode: true }, { gt: 1, lt: 5 }, 'q[gt]=1&q[lt]=5'],
    ['an array (deepObject)', { style: 'deepObject', explode: true }, ['a', 'b'], 'q[]=a&q[]=b'],
    ['an object (form, explode)', {}, { a: 1, b: 2 }, 'a=1&b=2'],
    ['an object (form, no explode)', { style: 'form', explode: false }, { a: 1, b: 2 }, 'q=a,1,b,2'],
  ])('should serialise %s', (_what, style, value, query) => {
    const field: FieldBinding = { name: 'q', in: 'query', wireName: 'q', ...style };
    const request = ok(
      buildRequest(binding([field], { path: '/s', method: 'GET', bodyEncoding: null }), { q: value }),
    );
    expect(request.url).toBe(`https://api.example.com/v1/s?${query}`);
  });

  it('should leave out a null query value and encode the wire name', () => {
    const request = ok(
      buildRequest(
        binding(
          [
            { name: 'filter', in: 'query', wireName: '$filter' },
            { name: 'n', in: 'query', wireName: 'n' },
          ],
          { path: '/s', method: 'GET', bodyEncoding: null },
        ),
        { filter: 'a eq 1', n: null },
      ),
    );
    expect(request.url).toBe('https://api.example.com/v1/s?%24filter=a%20eq%201');
  });
});

describe('buildRequest: headers', () => {
  const header: FieldBinding = { name: 'trace', in: 'header', wireName: 'X-Trace-Id' };

  it.each([
    ['a string', 'abc', 'abc'],
    ['a number', 5, '5'],
    ['a boolean', true, 'true'],
    ['an array', ['a', 'b'], 'a,b'],
  ])('should send %s as a string', (_what, value, expected) => {
    const request = ok(buildRequest(binding([header], { path: '/', bodyEncoding: null }), { trace: value }));
    expect(request.headers).toEqual({ 'X-Trace-Id': expected });
  });

  it.each([
    ['a line feed', 'a\nX-Evil: 1'],
    ['a carriage return', 'a\rb'],
    ['a NUL', 'a\u0000b'],
  ])('should refuse a header value with %s', (_what, value) => {
    expect(refusal(buildRequest(binding([header], { path: '/' }), { trace: value }))).toContain(
      'line breaks',
    );
  });

  it('should refuse an object as a header value', () => {
    expect(refusal(buildRequest(binding([header], { path: '/' }), { trace: { a: 1 } }))).toContain(
      'must be a string, a number or a boolean',
    );
  });
});

describe('buildRequest: bodies', () => {
  it('should send JSON body fields as one object under their wire names', () => {
    const request = ok(
      buildRequest(
        binding([
          idField,
          { name: 'name_2', in: 'body', wireName: 'name' },
          { name: 'odata.type', in: 'body', wireName: '@odata.type' },
        ]),
        { id: '1', name_2: 'n', 'odata.type': 't' },
      ),
    );
    expect(JSON.parse(request.body ?? '')).toEqual({ name: 'n', '@odata.type': 't' });
    expect(request.contentType).toBe('application/json');
  });

  it('should send no body when no body field is given', () => {
    const request = ok(
      buildRequest(binding([idField, { name: 'a', in: 'body', wireName: 'a' }]), { id: '1' }),
    );
    expect(request).toMatchObject({ body: null, contentType: null });
  });

  it('should send a whole body as it is, with the binding content type', () => {
    const request = ok(
      buildRequest(
        binding([{ name: 'body', in: 'body', wireName: 'body', required: true }], {
          path: '/patch',
          wholeBody: true,
          contentType: 'application/json-patch+json',
        }),
        { body: [{ op: 'remove', path: '/a' }] },
      ),
    );
    expect(request.body).toBe('[{"op":"remove","path":"/a"}]');
    expect(request.contentType).toBe('application/json-patch+json');
  });

  it('should send a null body field as JSON null, which counts as given', () => {
    const request = ok(
      buildRequest(binding([{ name: 'a', in: 'body', wireName: 'a', required: true }], { path: '/' }), {
        a: null,
      }),
    );
    expect(request.body).toBe('{"a":null}');
  });

  it('should rename nested properties at every level, through arrays and maps', () => {
    const request = ok(
      buildRequest(
        binding(
          [
            {
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
            },
          ],
          { path: '/' },
        ),
        { outer: { inner_key: [{ id: 'a', ok: 1 }], map: { k: { v_1: 'x' } }, other: true } },
      ),
    );
    expect(JSON.parse(request.body ?? '')).toEqual({
      outer: { 'inner key': [{ '@id': 'a', ok: 1 }], map: { k: { 'v/1': 'x' } }, other: true },
    });
  });

  it.each<[string, Partial<FieldBinding>, unknown, string]>([
    ['a scalar', {}, 'a b', 'f=a%20b'],
    ['null as empty', {}, null, 'f='],
    ['an object in brackets', {}, { key: 'v', 'k 2': 'w' }, 'f[key]=v&f[k%202]=w'],
    ['nested objects in brackets', {}, { a: { b: 'c' } }, 'f[a][b]=c'],
    ['a deepObject array in brackets', { style: 'deepObject', explode: true }, ['a', 'b'], 'f[]=a&f[]=b'],
    [
      'an array of objects by index',
      { style: 'deepObject', explode: true },
      [{ p: 1 }, { p: 2 }],
      'f[0][p]=1&f[1][p]=2',
    ],
    ['an array inside an object in brackets', {}, { tags: ['x', 'y'] }, 'f[tags][]=x&f[tags][]=y'],
    ['an array as repeated keys (the OpenAPI default)', {}, ['a', 'b'], 'f=a&f=b'],
    ['an array comma-separated (Swagger csv)', { style: 'form', explode: false }, ['a', 'b'], 'f=a,b'],
  ])('should encode %s in a form body', (_what, style, value, body) => {
    const request = ok(
      buildRequest(
        binding([{ name: 'f', in: 'body', wireName: 'f', ...style }], { path: '/', bodyEncoding: 'form' }),
        {
          f: value,
        },
      ),
    );
    expect(request.body).toBe(body);
    expect(request.contentType).toBe('application/x-www-form-urlencoded');
  });

  it('should refuse arguments nested too deeply to encode', () => {
    let value: unknown = 'x';
    for (let i = 0; i < 100; i++) value = { a: value };
    const result = buildRequest(
      binding([{ name: 'f', in: 'body', wireName: 'f' }], { path: '/', bodyEncoding: 'form' }),
      {
        f: value,
      },
    );
    expect(refusal(result)).toContain('nested too deeply');
  });
});

describe('buildRequest: from converted descriptions', () => {
  it('should call a converted operation with renamed fields under their real names', () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      servers: [{ url: 'https://api.example.com' }],
      paths: {
        '/users/{user id}': {
          put: {
            operationId: 'updateUser',
            parameters: [
              { name: 'user id', in: 'path', required: true, schema: { type: 'string' } },
              { name: '$expand', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
            ],
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['user id'],
                    properties: {
                      'user id': { type: 'string' },
                      profile: { type: 'object', properties: { 'first-name!': { type: 'string' } } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const [op] = convertDescription(doc, null, null).operations;
    if (op === undefined) throw new Error('no operation');
    expect(Object.keys(op.inputSchema.properties as object)).toEqual([
      'user_id',
      'user_id_2',
      'expand',
      'profile',
    ]);
    const request = ok(
      buildRequest(op.binding, {
        user_id: 'u/1',
        user_id_2: 'body-id',
        expand: ['a', 'b'],
        profile: { 'first-name': 'Ann' },
      }),
    );
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('https://api.example.com/users/u%2F1?%24expand=a&%24expand=b');
    expect(JSON.parse(request.body ?? '')).toEqual({
      'user id': 'body-id',
      profile: { 'first-name!': 'Ann' },
    });
    expect(refusal(buildRequest(op.binding, { expand: ['a'] }))).toContain('"user_id", "user_id_2"');
  });
});
