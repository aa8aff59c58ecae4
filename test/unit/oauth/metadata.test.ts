import { describe, expect, it } from 'vitest';
import {
  authorizationServerMetadataUrls,
  chooseAuthMethod,
  MAX_SCOPE_CHARS,
  MAX_SCOPE_TOKENS,
  mergeScopes,
  protectedResourceMetadataUrls,
  resourceCoversEndpoint,
  selectScopes,
  supportsS256,
} from '../../../src/oauth/metadata.js';

describe('protectedResourceMetadataUrls', () => {
  it.each([
    [
      'https://mcp.example.com/mcp',
      [
        'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
        'https://mcp.example.com/.well-known/oauth-protected-resource',
      ],
    ],
    [
      'https://mcp.example.com/a/b/?x=1#f',
      [
        'https://mcp.example.com/.well-known/oauth-protected-resource/a/b',
        'https://mcp.example.com/.well-known/oauth-protected-resource',
      ],
    ],
    ['http://127.0.0.1:8080/', ['http://127.0.0.1:8080/.well-known/oauth-protected-resource']],
  ])('should probe %s path-aware first, then at the root', (endpoint, expected) => {
    expect(protectedResourceMetadataUrls(endpoint)).toEqual(expected);
  });
});

describe('authorizationServerMetadataUrls', () => {
  it('should try RFC 8414, then OpenID discovery, for an issuer without a path', () => {
    expect(authorizationServerMetadataUrls('https://auth.example.com')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
  });

  it('should insert the path after the well-known segment, then append it for OpenID', () => {
    expect(authorizationServerMetadataUrls('https://auth.example.com/tenant1/')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/tenant1',
      'https://auth.example.com/.well-known/openid-configuration/tenant1',
      'https://auth.example.com/tenant1/.well-known/openid-configuration',
    ]);
  });
});

describe('resourceCoversEndpoint', () => {
  it.each([
    ['the same URL', 'https://mcp.example.com/mcp', 'https://mcp.example.com/mcp', true],
    ['the origin', 'https://mcp.example.com', 'https://mcp.example.com/mcp', true],
    ['a parent path', 'https://mcp.example.com/api/', 'https://mcp.example.com/api/mcp', true],
    [
      'a path prefix that is not a segment',
      'https://mcp.example.com/mc',
      'https://mcp.example.com/mcp',
      false,
    ],
    ['another host', 'https://evil.example.com/mcp', 'https://mcp.example.com/mcp', false],
    ['another scheme', 'http://mcp.example.com/mcp', 'https://mcp.example.com/mcp', false],
    ['another port', 'https://mcp.example.com:8443/mcp', 'https://mcp.example.com/mcp', false],
    ['a child path', 'https://mcp.example.com/mcp/deeper', 'https://mcp.example.com/mcp', false],
    ['a fragment', 'https://mcp.example.com/mcp#x', 'https://mcp.example.com/mcp', false],
    ['not a URL', 'mcp', 'https://mcp.example.com/mcp', false],
  ])('should decide for %s', (_label, resource, endpoint, expected) => {
    expect(resourceCoversEndpoint(resource, endpoint)).toBe(expected);
  });
});

describe('selectScopes', () => {
  it('should prefer the scopes of the challenge', () => {
    expect(selectScopes('files:read', ['a', 'b'])).toBe('files:read');
  });

  it('should fall back to scopes_supported, deduplicated, dropping non-strings and malformed scopes', () => {
    expect(selectScopes(null, ['mcp:tools', 'mcp:tools', 7, 'bad scope', 'x"y', 'mcp:read'])).toBe(
      'mcp:tools mcp:read',
    );
  });

  it('should request no scope when neither gives one', () => {
    expect(selectScopes(null, undefined)).toBeNull();
    expect(selectScopes('  ', [])).toBeNull();
  });
});

describe('chooseAuthMethod', () => {
  it.each([
    ['register, default list', undefined, 'register', 'client_secret_basic'],
    ['register, post only', ['client_secret_post'], 'register', 'client_secret_post'],
    ['register, public only', ['none'], 'register', 'none'],
    ['register, private_key_jwt only', ['private_key_jwt'], 'register', null],
    [
      'a secret, basic and post',
      ['client_secret_post', 'client_secret_basic'],
      'secret',
      'client_secret_basic',
    ],
    ['a secret, none only', ['none'], 'secret', null],
    ['no secret', ['client_secret_basic'], 'public', 'none'],
  ] as const)('should choose for %s', (_label, supported, client, expected) => {
    expect(chooseAuthMethod(supported, client)).toBe(expected);
  });
});

describe('supportsS256', () => {
  it('should accept a list with S256, or no list, and refuse a list without it', () => {
    expect(supportsS256(['plain', 'S256'])).toBe(true);
    expect(supportsS256(undefined)).toBe(true);
    expect(supportsS256(['plain'])).toBe(false);
  });
});

describe('mergeScopes', () => {
  it.each([
    [['mcp:basic', 'mcp:basic mcp:write'], 'mcp:basic mcp:write'],
    [[null, 'a  b\tc'], 'a b c'],
    [[undefined, null], null],
    [['a', 'b"c d\\e'], 'a'],
    [['', ' '], null],
  ])('should merge %j into %j', (lists, expected) => {
    expect(mergeScopes(...lists)).toBe(expected);
  });

  it('should give null past its bounds rather than a huge request', () => {
    const many = Array.from({ length: MAX_SCOPE_TOKENS + 1 }, (_, i) => `s${i}`).join(' ');
    expect(mergeScopes(many)).toBeNull();
    expect(mergeScopes('x'.repeat(MAX_SCOPE_CHARS + 1))).toBeNull();
    expect(mergeScopes('x'.repeat(MAX_SCOPE_CHARS))).toBe('x'.repeat(MAX_SCOPE_CHARS));
  });
});
