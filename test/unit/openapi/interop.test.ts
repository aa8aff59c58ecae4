/**
 * Issue 14, item 5: what real public descriptions taught (AWS server order, Swagger schemes, OpenAI's
 * 64-bit `seed`, Twilio SCIM's path items without operations, Azure's parameterized host).
 */
import { describe, expect, it } from 'vitest';
import { chooseServer, convertDescription } from '../../../src/openapi/convert.js';

const ok = { responses: { '200': { description: 'ok' } } };

function oas(
  extra: Record<string, unknown>,
  paths: Record<string, unknown> = { '/x': { get: { operationId: 'x', ...ok } } },
) {
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths, ...extra };
}

describe('choosing the base address', () => {
  it.each<[string[], string | null]>([
    [['http://a.example.com', 'https://b.example.com'], 'https://b.example.com'],
    [['https://a.example.com', 'https://b.example.com'], 'https://a.example.com'],
    [['http://a.example.com'], 'http://a.example.com'],
    [[], null],
  ])('should take the first https server of %j', (urls, chosen) => {
    expect(chooseServer(urls)).toBe(chosen);
  });

  it('should prefer a later https server over an http servers[0] (an AWS description)', () => {
    const result = convertDescription(
      oas({
        servers: [
          { url: 'http://ec2.us-east-1.amazonaws.com' },
          { url: 'https://ec2.us-east-1.amazonaws.com' },
        ],
      }),
      null,
      null,
    );
    expect(result.operations[0]!.binding.baseUrl).toBe('https://ec2.us-east-1.amazonaws.com');
    expect(result.diagnostics.join('\n')).not.toContain('no callable base address');
  });

  it('should prefer https from Swagger schemes [http, https]', () => {
    const result = convertDescription(
      {
        swagger: '2.0',
        info: { title: 't', version: '1' },
        host: 'api.example.com',
        schemes: ['http', 'https'],
        paths: { '/x': { get: { operationId: 'x', ...ok } } },
      },
      null,
      null,
    );
    expect(result.operations[0]!.binding.baseUrl).toBe('https://api.example.com');
  });

  it('should say when the only server is plain http', () => {
    const result = convertDescription(oas({ servers: [{ url: 'http://api.example.com/v1' }] }), null, null);
    expect(result.diagnostics).toContain(
      'no callable base address: the description offers only "http://api.example.com/v1", which is not https (plain http is allowed only for hosts in OUTBOUND_ALLOW_HOSTS); an operator must set the connection\'s baseUrl to the API\'s https:// address',
    );
  });

  it.each<[string, { allowHosts: string[]; allowLoopback: boolean }, boolean]>([
    ['http://api.example.com/v1', { allowHosts: ['api.example.com'], allowLoopback: false }, false],
    ['http://api.example.com/v1', { allowHosts: ['api.example.com:80'], allowLoopback: false }, false],
    ['http://api.example.com:8080/v1', { allowHosts: ['api.example.com:80'], allowLoopback: false }, true],
    ['http://127.0.0.1:8080', { allowHosts: [], allowLoopback: true }, false],
    ['http://localhost:8080', { allowHosts: [], allowLoopback: true }, false],
    ['http://localhost:8080', { allowHosts: [], allowLoopback: false }, true],
    ['https://10.0.0.7', { allowHosts: [], allowLoopback: false }, true],
    ['https://10.0.0.7', { allowHosts: ['10.0.0.7'], allowLoopback: false }, false],
  ])(
    'should judge %s under %j by the outbound rule: uncallable %s (issue 25, item 6)',
    (url, urlPolicy, uncallable) => {
      const result = convertDescription(oas({ servers: [{ url }] }), null, null, { urlPolicy });
      expect(result.diagnostics.some((d) => d.startsWith('no callable base address'))).toBe(uncallable);
    },
  );

  it("should say when the host is Azure's placeholder for x-ms-parameterized-host", () => {
    const result = convertDescription(
      {
        swagger: '2.0',
        info: { title: 't', version: '1' },
        host: 'azure.local',
        schemes: ['https'],
        'x-ms-parameterized-host': {
          hostTemplate: '{endpoint}',
          parameters: [{ name: 'endpoint', in: 'path', required: true, type: 'string' }],
        },
        paths: { '/x': { get: { operationId: 'x', ...ok } } },
      },
      null,
      null,
    );
    expect(result.diagnostics.join('\n')).toMatch(
      /no callable base address: the host is parameterized \(x-ms-parameterized-host\)/,
    );
    // The connection's own baseUrl is callable: no diagnostic then.
    const fixed = convertDescription(
      {
        swagger: '2.0',
        info: { title: 't', version: '1' },
        host: 'azure.local',
        'x-ms-parameterized-host': {},
        paths: { '/x': { get: { operationId: 'x', ...ok } } },
      },
      null,
      'https://myaccount.example.com',
    );
    expect(fixed.diagnostics.join('\n')).not.toContain('no callable base address');
    expect(fixed.operations[0]!.binding.baseUrl).toBe('https://myaccount.example.com');
    // Each operation says its base is a placeholder, so discovery can hold it; not with the override.
    expect(result.operations[0]!.basePlaceholder).toMatch(/x-ms-parameterized-host/);
    expect(fixed.operations[0]!.basePlaceholder).toBeUndefined();
  });

  it('should mark an operation whose own servers name a reserved host, and only that one', () => {
    const result = convertDescription(
      oas(
        { servers: [{ url: 'https://api.example.com' }] },
        {
          '/real': { get: { operationId: 'real', ...ok } },
          '/fake': {
            get: { operationId: 'fake', servers: [{ url: 'https://tenant.api.invalid/v1' }], ...ok },
          },
        },
      ),
      null,
      null,
    );
    const byName = Object.fromEntries(result.operations.map((o) => [o.name, o]));
    expect(byName.real!.basePlaceholder).toBeUndefined();
    expect(byName.fake!.binding.baseUrl).toBe('https://tenant.api.invalid/v1');
    expect(byName.fake!.basePlaceholder).toMatch(/tenant\.api\.invalid.*placeholder host/);
  });
});

describe('integer bounds beyond ±2^53', () => {
  it("should drop OpenAI's seed bounds rather than round them", () => {
    const doc = oas(
      { servers: [{ url: 'https://api.example.com' }] },
      {
        '/c': {
          post: {
            operationId: 'create',
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      seed: {
                        type: 'integer',
                        // As JSON.parse reads them from the description's text.
                        minimum: Number('-9223372036854775808'),
                        maximum: Number('9223372036854775807'),
                      },
                      n: { type: 'integer', minimum: 1, maximum: 128 },
                    },
                  },
                },
              },
            },
            ...ok,
          },
        },
      },
    );
    const result = convertDescription(doc, null, null);
    const props = result.operations[0]!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.seed).toEqual({ type: 'integer' });
    expect(props.n).toMatchObject({ minimum: 1, maximum: 128 });
    expect(result.diagnostics).toContain(
      'a maximum beyond ±2^53 cannot be represented exactly; it was dropped',
    );
    expect(result.diagnostics).toContain(
      'a minimum beyond ±2^53 cannot be represented exactly; it was dropped',
    );
  });
});

describe('descriptions without operations', () => {
  it('should say why: path items without operations (Twilio SCIM)', () => {
    const result = convertDescription(
      oas(
        { servers: [{ url: 'https://api.example.com' }] },
        { '/Users': { parameters: [] }, '/Groups': { summary: 'groups' } },
      ),
      null,
      null,
    );
    expect(result.operations).toEqual([]);
    expect(result.emptyReason).toBe(
      'its 2 path items have no operations (no get, put, post, patch or delete)',
    );
  });

  it('should ignore x-ms-paths with a diagnostic, and name it in the reason', () => {
    const result = convertDescription(
      oas(
        {
          servers: [{ url: 'https://api.example.com' }],
          'x-ms-paths': { '/a?op=1': { get: { operationId: 'a', ...ok } } },
        },
        {},
      ),
      null,
      null,
    );
    expect(result.diagnostics).toContain(
      'x-ms-paths holds 1 path items; vendor extensions are not part of OpenAPI and were ignored',
    );
    expect(result.emptyReason).toBe(
      'the description has no paths (its 1 x-ms-paths items are a vendor extension and are not read)',
    );
  });

  it('should count skipped operations in the reason', () => {
    const result = convertDescription(
      oas(
        { servers: [{ url: 'https://api.example.com' }] },
        { '/a': { get: { operationId: 'a', deprecated: true, ...ok } } },
      ),
      null,
      null,
    );
    expect(result.emptyReason).toBe('all 1 operations were skipped (1 deprecated)');
    expect(
      convertDescription(oas({ servers: [{ url: 'https://api.example.com' }] }), null, null).emptyReason,
    ).toBeNull();
  });
});

describe('methods that are not operations (issue 25, item 7)', () => {
  it('should report head, options and trace operations as not taken, with why, per method', () => {
    const result = convertDescription(
      oas(
        { servers: [{ url: 'https://api.example.com' }] },
        {
          '/a': { get: { operationId: 'getA', ...ok }, head: ok, options: ok },
          '/b': { head: ok, trace: ok },
          '/c': { head: ok },
          '/d': { head: ok },
        },
      ),
      null,
      null,
    );
    expect(result.operations.map((o) => o.name)).toEqual(['getA']);
    expect(result.diagnostics).toEqual([
      '4 head operations were not taken ("/a", "/b", "/c" and 1 more): operations are made from get, put, post, patch and delete only, and HEAD asks for what GET answers, without the body',
      '1 options operation was not taken ("/a"): operations are made from get, put, post, patch and delete only, and OPTIONS asks which methods and headers the server allows',
      '1 trace operation was not taken ("/b"): operations are made from get, put, post, patch and delete only, and TRACE echoes the request back',
    ]);
  });
});
