import { describe, expect, it } from 'vitest';
import {
  cacheHintsOf,
  describeInputRequests,
  encodeHeaderValue,
  eraOf,
  judgeModernError,
  modernHeaders,
  pickVersion,
  resultTypeOf,
  describeServerAsks,
  serverRequestAnswer,
} from '../../../src/mcp/versions.js';

describe('protocol versions', () => {
  it.each([
    ['2026-07-28', 'modern'],
    ['2025-11-25', 'legacy'],
    ['2025-06-18', 'legacy'],
    ['2025-03-26', 'legacy'],
    ['2024-11-05', 'legacy'],
    ['1999-01-01', null],
    [null, null],
  ])('should put %s in era %s', (version, era) => {
    expect(eraOf(version)).toBe(era);
  });

  it.each<[string[], string | null]>([
    [['2026-07-28', '2025-11-25'], '2026-07-28'],
    [['2025-11-25', '2025-06-18'], '2025-11-25'],
    [['2025-03-26'], '2025-03-26'],
    [['1999-01-01'], null],
    [[], null],
  ])('should pick from %j: %s', (supported, expected) => {
    expect(pickVersion(supported)).toBe(expected);
  });

  it.each<[unknown, ReturnType<typeof judgeModernError>]>([
    [
      {
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: ['2026-07-28'], requested: 'x' },
      },
      { kind: 'unsupported_version', supported: ['2026-07-28'] },
    ],
    [
      { code: -32020, message: 'Header mismatch' },
      { kind: 'modern_error', code: -32020, message: 'Header mismatch' },
    ],
    [
      { code: -32021, message: 'Missing capability' },
      { kind: 'modern_error', code: -32021, message: 'Missing capability' },
    ],
    [{ code: -32000, message: 'Bad Request: No valid session ID provided' }, { kind: 'legacy' }],
    [{ code: -32601, message: 'Method not found' }, { kind: 'legacy' }],
    [null, { kind: 'legacy' }],
    ['not json', { kind: 'legacy' }],
  ])('should judge the error %j', (error, verdict) => {
    expect(judgeModernError(error)).toEqual(verdict);
  });

  it.each([
    ['get_weather', 'get_weather'],
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('should encode the header value %j as the spec table does', (value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });

  it('should build the modern headers with the name only for tools/call', () => {
    expect(modernHeaders('2026-07-28', 'tools/list')).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    });
    expect(modernHeaders('2026-07-28', 'tools/call', 'é')['mcp-name']).toBe('=?base64?w6k=?=');
  });

  it.each<[Record<string, unknown>, ReturnType<typeof resultTypeOf>]>([
    [{}, 'complete'],
    [{ resultType: 'complete' }, 'complete'],
    [{ resultType: 'input_required' }, 'input_required'],
    [{ resultType: 'task' }, { invalid: 'task' }],
    [{ resultType: 3 }, { invalid: 'number' }],
  ])('should read resultType of %j', (result, type) => {
    expect(resultTypeOf(result)).toEqual(type);
  });

  it.each<[Record<string, unknown>, ReturnType<typeof cacheHintsOf>]>([
    [
      { ttlMs: 60_000, cacheScope: 'public' },
      { ttlMs: 60_000, cacheScope: 'public' },
    ],
    [
      { ttlMs: -5, cacheScope: 'private' },
      { ttlMs: 0, cacheScope: 'private' },
    ],
    [{}, { ttlMs: 0, cacheScope: null }],
    [
      { ttlMs: 'soon', cacheScope: 'everyone' },
      { ttlMs: 0, cacheScope: null },
    ],
  ])('should read cache hints of %j', (result, hints) => {
    expect(cacheHintsOf(result)).toEqual(hints);
  });

  it('should say what an input_required result asks for, by kind only', () => {
    expect(
      describeInputRequests({
        inputRequests: {
          a: { method: 'elicitation/create', params: { message: 'secret question' } },
          b: { method: 'sampling/createMessage' },
        },
      }),
    ).toBe('an answer from the user and a model completion');
    expect(describeInputRequests({ requestState: 'x' })).toBe('more input');
  });
});

describe('serverRequestAnswer', () => {
  it.each([
    ['ping', '2025-06-18', { result: {} }],
    ['elicitation/create', '2025-06-18', { result: { action: 'decline' } }],
    ['elicitation/create', '2025-11-25', { result: { action: 'decline' } }],
    // No elicitation in these revisions: the method does not exist.
    ['elicitation/create', '2025-03-26', { error: { code: -32601, message: 'Method not found' } }],
    ['elicitation/create', '2024-11-05', { error: { code: -32601, message: 'Method not found' } }],
    [
      'sampling/createMessage',
      '2025-06-18',
      {
        error: {
          code: -32601,
          message: 'Sampling not supported',
          data: { reason: 'Client does not have sampling capability' },
        },
      },
    ],
    [
      'roots/list',
      '2025-11-25',
      {
        error: {
          code: -32601,
          message: 'Roots not supported',
          data: { reason: 'Client does not have roots capability' },
        },
      },
    ],
    ['tasks/get', '2025-11-25', { error: { code: -32601, message: 'Method not found' } }],
  ])('should answer %s under %s with %j', (method, version, answer) => {
    expect(serverRequestAnswer(method, version)).toEqual(answer);
  });

  it('should name what a set of requests asked for, once each', () => {
    expect(describeServerAsks(['elicitation', 'roots', 'elicitation'])).toBe(
      'an answer from the user and a list of folders',
    );
  });
});
