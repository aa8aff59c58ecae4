import { describe, expect, it } from 'vitest';
import {
  bearerChallenge,
  MAX_CHALLENGE_HEADER_CHARS,
  parseWwwAuthenticate,
} from '../../../src/oauth/challenge.js';

describe('parseWwwAuthenticate', () => {
  it.each([
    [
      'a bearer challenge with resource_metadata',
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      [
        {
          scheme: 'bearer',
          params: { resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp' },
          token68: null,
        },
      ],
    ],
    [
      'several parameters, token and quoted values, odd spacing',
      'Bearer realm="mcp" ,error=invalid_token,  error_description = "The access token expired"',
      [
        {
          scheme: 'bearer',
          params: { realm: 'mcp', error: 'invalid_token', error_description: 'The access token expired' },
          token68: null,
        },
      ],
    ],
    [
      'two challenges in one header',
      'Basic realm="legacy", Bearer resource_metadata="https://a.example/m", scope="read write"',
      [
        { scheme: 'basic', params: { realm: 'legacy' }, token68: null },
        {
          scheme: 'bearer',
          params: { resource_metadata: 'https://a.example/m', scope: 'read write' },
          token68: null,
        },
      ],
    ],
    [
      'a token68 challenge followed by a bearer one',
      'Negotiate YII=, Bearer realm="x"',
      [
        { scheme: 'negotiate', params: {}, token68: 'YII=' },
        { scheme: 'bearer', params: { realm: 'x' }, token68: null },
      ],
    ],
    [
      'escaped quotes and commas inside a quoted value',
      'Bearer error_description="say \\"hi\\", then go", error="x"',
      [{ scheme: 'bearer', params: { error_description: 'say "hi", then go', error: 'x' }, token68: null }],
    ],
    [
      'upper-case names, and a repeated parameter (the first wins)',
      'BEARER Resource_Metadata="https://a.example/1", resource_metadata="https://evil.example/2"',
      [{ scheme: 'bearer', params: { resource_metadata: 'https://a.example/1' }, token68: null }],
    ],
    ['a bare scheme', 'Bearer', [{ scheme: 'bearer', params: {}, token68: null }]],
    ['an empty header', '', []],
  ])('should parse %s', (_label, header, expected) => {
    expect(parseWwwAuthenticate(header)).toEqual(expected);
  });

  it('should stop at an unterminated quote without throwing', () => {
    expect(parseWwwAuthenticate('Bearer error="x", realm="never closed, scope=y')).toEqual([
      { scheme: 'bearer', params: { error: 'x' }, token68: null },
    ]);
  });

  it('should skip garbage up to the next comma and keep going', () => {
    expect(parseWwwAuthenticate('@@@, Bearer error="x"')).toEqual([
      { scheme: 'bearer', params: { error: 'x' }, token68: null },
    ]);
  });

  it('should not parse a header longer than the cap', () => {
    expect(parseWwwAuthenticate(`Bearer realm="${'a'.repeat(MAX_CHALLENGE_HEADER_CHARS)}"`)).toEqual([]);
  });
});

describe('bearerChallenge', () => {
  it('should return the resource metadata URL, scope and error of the first Bearer challenge', () => {
    expect(
      bearerChallenge(
        'Basic realm="x", Bearer error="invalid_token", scope=" mcp:tools ", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"',
      ),
    ).toEqual({
      resourceMetadata: 'https://mcp.example.com/.well-known/oauth-protected-resource',
      scope: 'mcp:tools',
      error: 'invalid_token',
    });
  });

  it.each([
    ['a relative URL', 'Bearer resource_metadata="/.well-known/oauth-protected-resource"'],
    ['a non-http scheme', 'Bearer resource_metadata="file:///etc/passwd"'],
    ['an empty value', 'Bearer resource_metadata=""'],
  ])('should give no resource metadata URL for %s', (_label, header) => {
    expect(bearerChallenge(header)?.resourceMetadata).toBeNull();
  });

  it.each([
    ['no header', null],
    ['only a Basic challenge', 'Basic realm="x"'],
  ])('should return null for %s', (_label, header) => {
    expect(bearerChallenge(header)).toBeNull();
  });
});
