import { describe, expect, it } from 'vitest';
import {
  classify,
  composeDiffs,
  diffOperation,
  formatPath,
  MAX_ENTRIES,
  MAX_VALUE_CHARS,
  parsePath,
  type ChangeKind,
  type DiffSubject,
} from '../../../src/operations/diff.js';
import type { JsonObject, JsonValue } from '../../../src/operations/types.js';

const base: DiffSubject = {
  title: 'Lookup',
  description: 'Look a customer up',
  inputSchema: {
    type: 'object',
    properties: { email: { type: 'string' }, plan: { type: 'string', enum: ['free', 'pro'] } },
    required: ['email'],
  },
  outputSchema: null,
  annotations: { readOnlyHint: true },
  risk: 'READ',
  binding: null,
};

const schema = (properties: JsonObject, required: string[] = []): JsonObject => ({
  type: 'object',
  properties,
  required,
});

/** The entries as [path, kind, breaking], the part of a diff the rule decides. */
const brief = (before: DiffSubject, after: DiffSubject) =>
  diffOperation(before, after).map((e) => [e.path, e.kind, e.breaking]);

describe('classify (the breaking rule)', () => {
  it.each<[string, JsonValue, JsonValue, ChangeKind, boolean]>([
    ['title', 'a', 'b', 'TEXT_CHANGED', false],
    ['description', 'a', null, 'TEXT_CHANGED', false],
    ['risk', 'READ', 'WRITE', 'RISK_CHANGED', true],
    ['risk', 'WRITE', 'READ', 'RISK_CHANGED', false],
    ['method', 'GET', 'POST', 'ENDPOINT_CHANGED', true],
    ['path', '/a', '/b', 'ENDPOINT_CHANGED', true],
    ['baseUrl', 'https://a.example/v1', 'https://b.example/v1', 'ENDPOINT_CHANGED', true],
    ['baseUrl', 'https://a.example/v1', 'https://a.example/v2', 'ENDPOINT_CHANGED', false],
    ['annotations.destructiveHint', null, true, 'ANNOTATION_CHANGED', false],
    ['inputSchema.properties.plan', null, { type: 'string' }, 'PROPERTY_ADDED', false],
    ['inputSchema.properties.plan', { type: 'string' }, null, 'PROPERTY_REMOVED', true],
    ['outputSchema.properties.plan', { type: 'string' }, null, 'PROPERTY_REMOVED', true],
    ['inputSchema.properties.plan.required', false, true, 'REQUIRED_CHANGED', true],
    ['inputSchema.properties.plan.required', true, false, 'REQUIRED_CHANGED', false],
    ['outputSchema.properties.plan.required', false, true, 'REQUIRED_CHANGED', false],
    ['inputSchema.properties.n.type', 'string', 'integer', 'TYPE_CHANGED', true],
    ['outputSchema.properties.n.type', 'string', 'integer', 'TYPE_CHANGED', true],
    ['inputSchema.properties.p.enum', ['a', 'b'], ['a'], 'ENUM_VALUES_REMOVED', true],
    ['inputSchema.properties.p.enum', ['a', 'b'], ['b', 'c'], 'ENUM_VALUES_REMOVED', true],
    ['inputSchema.properties.p.enum', ['a'], ['a', 'b'], 'ENUM_VALUES_ADDED', false],
    ['inputSchema.properties.p.enum', null, ['a'], 'ENUM_VALUES_REMOVED', true],
    ['inputSchema.properties.p.enum', ['a'], null, 'ENUM_VALUES_ADDED', false],
    ['inputSchema.properties.p.enum', 'cut text', ['a'], 'ENUM_VALUES_REMOVED', true],
    ['outputSchema.properties.p.enum', ['a', 'b'], ['a'], 'ENUM_VALUES_REMOVED', false],
    ['inputSchema.properties.p.maxLength', 10, 5, 'CONSTRAINT_CHANGED', false],
    ['inputSchema.properties.p.description', 'x', 'y', 'TEXT_CHANGED', false],
    ['inputSchema.properties.p.default', 'x', 'y', 'SCHEMA_CHANGED', false],
    ['inputSchema.properties.p.items.type', 'string', 'number', 'TYPE_CHANGED', true],
    // A property named like a keyword is a property, whatever its name.
    ['inputSchema.properties.type', null, { type: 'string' }, 'PROPERTY_ADDED', false],
    ['inputSchema.properties.properties.type', 'string', 'number', 'TYPE_CHANGED', true],
    ['outputSchema', null, { type: 'object' }, 'SCHEMA_CHANGED', false],
  ])('%s: %j → %j is %s, breaking %s', (path, before, after, kind, breaking) => {
    expect(classify(path, before, after)).toEqual({ kind, breaking });
  });
});

describe('paths', () => {
  it.each([[['inputSchema', 'properties', 'a.b', 'type']], [['x', 'with "quote"]', 'y']], [['a-b', '1st']]])(
    'should read back %j as written',
    (segments) => {
      expect(parsePath(formatPath(segments))).toEqual(segments);
    },
  );

  it('should write plain names with dots and odd ones in brackets', () => {
    expect(formatPath(['inputSchema', 'properties', 'a.b'])).toBe('inputSchema.properties["a.b"]');
  });
});

describe('diffOperation', () => {
  it.each<[string, Partial<DiffSubject>, [string, ChangeKind, boolean][]]>([
    ['nothing changed', {}, []],
    ['a new title', { title: 'Find' }, [['title', 'TEXT_CHANGED', false]]],
    [
      'a new optional argument',
      {
        inputSchema: schema({ ...(base.inputSchema.properties as JsonObject), note: { type: 'string' } }, [
          'email',
        ]),
      },
      [['inputSchema.properties.note', 'PROPERTY_ADDED', false]],
    ],
    [
      'a new required argument',
      {
        inputSchema: schema({ ...(base.inputSchema.properties as JsonObject), id: { type: 'string' } }, [
          'email',
          'id',
        ]),
      },
      [
        ['inputSchema.properties.id', 'PROPERTY_ADDED', false],
        ['inputSchema.properties.id.required', 'REQUIRED_CHANGED', true],
      ],
    ],
    [
      'an argument removed',
      { inputSchema: schema({ email: { type: 'string' } }, ['email']) },
      [['inputSchema.properties.plan', 'PROPERTY_REMOVED', true]],
    ],
    [
      'a type changed',
      {
        inputSchema: schema({ email: { type: 'integer' }, plan: { type: 'string', enum: ['free', 'pro'] } }, [
          'email',
        ]),
      },
      [['inputSchema.properties.email.type', 'TYPE_CHANGED', true]],
    ],
    [
      'an enum narrowed',
      {
        inputSchema: schema({ email: { type: 'string' }, plan: { type: 'string', enum: ['pro'] } }, [
          'email',
        ]),
      },
      [['inputSchema.properties.plan.enum', 'ENUM_VALUES_REMOVED', true]],
    ],
    [
      'an enum widened',
      {
        inputSchema: schema(
          { email: { type: 'string' }, plan: { type: 'string', enum: ['free', 'pro', 'team'] } },
          ['email'],
        ),
      },
      [['inputSchema.properties.plan.enum', 'ENUM_VALUES_ADDED', false]],
    ],
    [
      'a required argument made optional',
      { inputSchema: schema(base.inputSchema.properties as JsonObject, []) },
      [['inputSchema.properties.email.required', 'REQUIRED_CHANGED', false]],
    ],
    [
      'a constraint',
      {
        inputSchema: schema(
          { email: { type: 'string', maxLength: 100 }, plan: { type: 'string', enum: ['free', 'pro'] } },
          ['email'],
        ),
      },
      [['inputSchema.properties.email.maxLength', 'CONSTRAINT_CHANGED', false]],
    ],
    [
      'an output schema only',
      { outputSchema: { type: 'object', properties: { plan: { type: 'string' } } } },
      [['outputSchema', 'SCHEMA_CHANGED', false]],
    ],
    [
      'annotations that raise the risk',
      { annotations: { readOnlyHint: true, destructiveHint: true }, risk: 'WRITE' },
      [
        ['risk', 'RISK_CHANGED', true],
        ['annotations.destructiveHint', 'ANNOTATION_CHANGED', false],
      ],
    ],
  ])('%s', (_label, change, expected) => {
    expect(brief(base, { ...base, ...change })).toEqual(expected);
  });

  it('should diff an output schema property by property once both sides have one', () => {
    const before = { ...base, outputSchema: { type: 'object', properties: { plan: { type: 'string' } } } };
    const after = {
      ...base,
      outputSchema: { type: 'object', properties: { plan: { type: 'integer' }, seats: { type: 'integer' } } },
    };
    expect(brief(before, after)).toEqual([
      ['outputSchema.properties.plan.type', 'TYPE_CHANGED', true],
      ['outputSchema.properties.seats', 'PROPERTY_ADDED', false],
    ]);
  });

  it('should give annotations that lower the risk a non-breaking diff', () => {
    const before = { ...base, annotations: { readOnlyHint: false }, risk: 'WRITE' as const };
    expect(brief(before, base)).toEqual([
      ['risk', 'RISK_CHANGED', false],
      ['annotations.readOnlyHint', 'ANNOTATION_CHANGED', false],
    ]);
  });

  it('should mark an endpoint move breaking and a base path change not', () => {
    const binding = {
      method: 'GET' as const,
      path: '/pets',
      baseUrl: 'https://api.example/v1',
      bodyEncoding: null,
      wholeBody: false,
      fields: [],
    };
    const before = { ...base, binding };
    expect(brief(before, { ...base, binding: { ...binding, method: 'POST', path: '/pets/all' } })).toEqual([
      ['method', 'ENDPOINT_CHANGED', true],
      ['path', 'ENDPOINT_CHANGED', true],
    ]);
    expect(brief(before, { ...base, binding: { ...binding, baseUrl: 'https://api.example/v2' } })).toEqual([
      ['baseUrl', 'ENDPOINT_CHANGED', false],
    ]);
    expect(brief(before, { ...base, binding: { ...binding, baseUrl: 'https://evil.example/v1' } })).toEqual([
      ['baseUrl', 'ENDPOINT_CHANGED', true],
    ]);
  });

  it('should keep values bounded', () => {
    const long = 'x'.repeat(MAX_VALUE_CHARS * 3);
    const [d] = diffOperation(base, { ...base, description: long });
    expect(typeof d!.after).toBe('string');
    expect((d!.after as string).length).toBeLessThan(MAX_VALUE_CHARS + 40);
    const big = { type: 'object', properties: { blob: { type: 'string', description: long } } };
    const [p] = diffOperation(base, { ...base, outputSchema: big });
    expect(JSON.stringify(p!.after).length).toBeLessThan(MAX_VALUE_CHARS + 60);
  });

  it('should cut a long diff to MAX_ENTRIES, keeping whether the rest breaks', () => {
    const many = Object.fromEntries(
      Array.from({ length: MAX_ENTRIES + 50 }, (_, i) => [`a${i}`, { type: 'string' }]),
    );
    const before = { ...base, inputSchema: schema(many) };
    const after = { ...base, inputSchema: schema({}) };
    const d = diffOperation(before, after);
    expect(d).toHaveLength(MAX_ENTRIES);
    expect(d.at(-1)).toMatchObject({ kind: 'MORE', breaking: true, after: { entries: 51, breaking: true } });
  });
});

describe('composeDiffs', () => {
  it('should give what a diff of the first state against the last gives', () => {
    const mid: DiffSubject = {
      ...base,
      title: 'Find',
      inputSchema: schema({ email: { type: 'integer' } }, ['email']),
    };
    const last: DiffSubject = {
      ...mid,
      title: 'Lookup',
      inputSchema: schema({ email: { type: 'string' } }, ['email']),
      risk: 'WRITE',
    };
    const composed = composeDiffs(diffOperation(base, mid), diffOperation(mid, last));
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
    expect([...composed].sort(byPath)).toEqual(diffOperation(base, last).sort(byPath));
    expect(composed.map((e) => e.path)).toEqual(['inputSchema.properties.plan', 'risk']);
  });

  it('should drop a required argument added and removed again', () => {
    const added = {
      ...base,
      inputSchema: schema({ ...(base.inputSchema.properties as JsonObject), id: { type: 'string' } }, [
        'email',
        'id',
      ]),
    };
    expect(composeDiffs(diffOperation(base, added), diffOperation(added, base))).toEqual([]);
  });
});
