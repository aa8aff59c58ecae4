import { describe, expect, it } from 'vitest';
import { paramHeadersOf, paramHeaderValues } from '../../../src/mcp/param-headers.js';

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

describe('paramHeadersOf', () => {
  it('should find annotations on properties reached through "properties" alone, nested too', () => {
    expect(
      paramHeadersOf(
        schema({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          query: { type: 'string' },
          opts: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' } } },
        }),
      ),
    ).toEqual({
      ok: true,
      headers: [
        { name: 'Region', path: ['region'] },
        { name: 'Dry-Run', path: ['opts', 'dry'] },
      ],
    });
    expect(paramHeadersOf(schema({ a: { type: 'string' } }))).toEqual({ ok: true, headers: [] });
  });

  it.each([
    ['an empty name', schema({ a: { type: 'string', 'x-mcp-header': '' } }), /HTTP token/],
    ['a name with a space', schema({ a: { type: 'string', 'x-mcp-header': 'Bad Name' } }), /HTTP token/],
    ['a name with CR LF', schema({ a: { type: 'string', 'x-mcp-header': 'A\r\nB' } }), /HTTP token/],
    [
      'a number property',
      schema({ a: { type: 'number', 'x-mcp-header': 'A' } }),
      /not string, integer or boolean/,
    ],
    [
      'an object property',
      schema({ a: { type: 'object', 'x-mcp-header': 'A' } }),
      /not string, integer or boolean/,
    ],
    [
      'a duplicate, case-insensitively',
      schema({ a: { type: 'string', 'x-mcp-header': 'Id' }, b: { type: 'string', 'x-mcp-header': 'ID' } }),
      /appears twice/,
    ],
    [
      'under items',
      schema({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }),
      /reachable/,
    ],
    [
      'under oneOf',
      schema({}, { oneOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] }),
      /reachable/,
    ],
    ['under $defs', schema({}, { $defs: { a: { type: 'string', 'x-mcp-header': 'A' } } }), /reachable/],
    ['on the root', { type: 'object', 'x-mcp-header': 'Root' }, /reachable/],
  ])('should refuse %s', (_what, input, detail) => {
    const result = paramHeadersOf(input);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.detail).toMatch(detail);
  });
});

describe('paramHeaderValues', () => {
  const headers = [
    { name: 'Region', path: ['region'] },
    { name: 'Count', path: ['count'] },
    { name: 'Dry', path: ['opts', 'dry'] },
  ];

  it('should convert and encode values as the revision says, and omit absent or null ones', () => {
    expect(paramHeaderValues(headers, { region: 'us-west1', count: -7, opts: { dry: false } })).toEqual({
      'mcp-param-region': 'us-west1',
      'mcp-param-count': '-7',
      'mcp-param-dry': 'false',
    });
    expect(paramHeaderValues(headers, { region: null, opts: {} })).toEqual({});
  });

  it.each([
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('should Base64-wrap %j', (value, encoded) => {
    expect(paramHeaderValues(headers, { region: value })).toEqual({ 'mcp-param-region': encoded });
  });

  it('should not follow inherited keys, and skip an integer beyond the safe range', () => {
    expect(paramHeaderValues([{ name: 'P', path: ['toString'] }], {})).toEqual({});
    expect(paramHeaderValues(headers, { count: 2 ** 60 })).toEqual({});
  });
});
