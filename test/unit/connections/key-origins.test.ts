import { describe, expect, it } from 'vitest';
import {
  holdsFor,
  isKeyCredential,
  keyTargets,
  mayCarryKey,
  originOf,
  originsOf,
  uncoveredOrigins,
} from '../../../src/connections/key-origins.js';

describe('originOf', () => {
  it.each([
    ['https://api.example.com/v1/pets?x=1', 'https://api.example.com'],
    ['https://API.Example.com:443/v1', 'https://api.example.com'],
    ['https://api.example.com:8443/v1', 'https://api.example.com:8443'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://api.example.com:80/', 'http://api.example.com'],
    ['https://user:pw@api.example.com/', 'https://api.example.com'],
    ['https://[::1]:9000/x', 'https://[::1]:9000'],
  ])('should take %s to %s, asked once or again', (url, origin) => {
    expect(originOf(url)).toBe(origin);
    expect(originOf(url)).toBe(origin);
  });

  it('should take a long address (not kept) and a thousand distinct ones (the table emptied) alike', () => {
    const long = `https://API.example.com:8443/${'p/'.repeat(400)}?q=1`;
    expect(originOf(long)).toBe('https://api.example.com:8443');
    for (let i = 0; i < 1000; i++)
      expect(originOf(`https://h${i}.example.com/x`)).toBe(`https://h${i}.example.com`);
    expect(originOf('ftp://api.example.com')).toBeNull();
    expect(originOf('ftp://api.example.com')).toBeNull();
  });

  it.each([['ftp://api.example.com'], ['/relative'], [''], ['javascript:alert(1)'], [null], [undefined]])(
    'should have no origin for %s',
    (url) => {
      expect(originOf(url)).toBeNull();
    },
  );

  it('should tell a scheme change and a port change apart from the same origin', () => {
    expect(originOf('http://api.example.com')).not.toBe(originOf('https://api.example.com'));
    expect(originOf('https://api.example.com:444')).not.toBe(originOf('https://api.example.com'));
    expect(originOf('https://api.example.com.evil.net')).not.toBe(originOf('https://api.example.com'));
  });
});

describe('originsOf and uncoveredOrigins', () => {
  it('should list distinct origins sorted, leaving out addresses without one', () => {
    expect(
      originsOf([
        'https://b.example.com/x',
        'https://a.example.com',
        'https://b.example.com/y',
        'nope',
        null,
      ]),
    ).toEqual(['https://a.example.com', 'https://b.example.com']);
  });

  it('should name each origin the key was not given for', () => {
    const recorded = ['https://api.example.com'];
    expect(uncoveredOrigins(recorded, ['https://api.example.com/v2', 'https://evil.example.net/a'])).toEqual([
      'https://evil.example.net',
    ]);
    expect(uncoveredOrigins(recorded, ['https://api.example.com/v2'])).toEqual([]);
    expect(uncoveredOrigins(null, ['https://api.example.com'])).toEqual(['https://api.example.com']);
  });
});

describe('mayCarryKey', () => {
  const recorded = ['https://api.example.com'];
  it.each([
    ['https://api.example.com/pets/1', true],
    ['https://api.example.com:443/pets', true],
    ['https://api.example.com:8443/pets', false],
    ['http://api.example.com/pets', false],
    ['https://evil.example.net/pets', false],
    ['https://api.example.com@evil.example.net/', false],
    ['not a url', false],
  ])('%s → %s', (url, expected) => {
    expect(mayCarryKey(recorded, url)).toBe(expected);
  });

  it('should refuse everything when no origin is recorded', () => {
    expect(mayCarryKey(null, 'https://api.example.com')).toBe(false);
    expect(mayCarryKey([], 'https://api.example.com')).toBe(false);
  });
});

describe('keyTargets', () => {
  it('should be the MCP endpoint origin', () => {
    expect(
      keyTargets({
        kind: 'MCP',
        endpointUrl: 'https://mcp.example.com/mcp',
        baseUrl: null,
        describedBases: null,
      }),
    ).toEqual(['https://mcp.example.com']);
  });

  it("should be the override's origin, whatever the description says", () => {
    expect(
      keyTargets({
        kind: 'OPENAPI',
        endpointUrl: null,
        baseUrl: 'https://override.example.com/v1',
        describedBases: ['https://evil.example.net'],
      }),
    ).toEqual(['https://override.example.com']);
  });

  it('should be every base the description resolves to, or unknown when it could not be read', () => {
    expect(
      keyTargets({
        kind: 'OPENAPI',
        endpointUrl: null,
        baseUrl: null,
        describedBases: [
          'https://api.example.com/v1',
          'https://uploads.example.com',
          'https://api.example.com/v2',
        ],
      }),
    ).toEqual(['https://api.example.com', 'https://uploads.example.com']);
    expect(
      keyTargets({ kind: 'OPENAPI', endpointUrl: null, baseUrl: null, describedBases: null }),
    ).toBeNull();
  });
});

describe('holdsFor', () => {
  const facts = { base: 'https://api.example.com/v1', placeholder: null, refused: null };

  it('should hold nothing for a base the key was given for, or without a key', () => {
    expect(holdsFor(facts, ['https://api.example.com'])).toEqual([]);
    expect(holdsFor({ ...facts, base: 'https://elsewhere.example.org' }, null)).toEqual([]);
  });

  it('should hold an operation whose base has another origin, naming both', () => {
    const holds = holdsFor({ ...facts, base: 'https://evil.example.net/x' }, ['https://api.example.com']);
    expect(holds).toEqual([
      {
        code: 'KEY_ORIGIN_NOT_GIVEN',
        detail: expect.stringContaining(
          'calls go to https://evil.example.net, but the key was given for https://api.example.com',
        ),
      },
    ]);
  });

  it('should hold an operation with a placeholder or refused base until baseUrl is set', () => {
    const placeholder = holdsFor(
      { ...facts, placeholder: '"https://azure.local" is a placeholder host' },
      null,
    );
    expect(placeholder).toEqual([
      {
        code: 'BASE_ADDRESS_UNCALLABLE',
        detail: expect.stringMatching(/azure\.local.*set the connection's baseUrl/),
      },
    ]);
    const refused = holdsFor({ ...facts, refused: 'must be an https:// address' }, [
      'https://api.example.com',
    ]);
    expect(refused.map((h) => h.code)).toEqual(['BASE_ADDRESS_UNCALLABLE']);
  });

  it('should report both holds in order', () => {
    const holds = holdsFor(
      { base: 'http://api.example.test', placeholder: 'placeholder', refused: 'not https' },
      ['https://api.example.com'],
    );
    expect(holds.map((h) => h.code)).toEqual(['KEY_ORIGIN_NOT_GIVEN', 'BASE_ADDRESS_UNCALLABLE']);
  });
});

describe('isKeyCredential', () => {
  it.each([
    ['BEARER', true],
    ['HEADER', true],
    ['OAUTH', false],
    ['NONE', false],
  ])('%s → %s', (kind, expected) => {
    expect(isKeyCredential(kind)).toBe(expected);
  });
});
