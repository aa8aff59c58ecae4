/**
 * The per-dialect validator (issue 26 item 7): every rule fires on a hand-written bad declaration and
 * stays quiet on good ones, and docs/dialects.md has exactly one row per rule id. The declarations
 * here are written by hand from the providers' documentation, never taken from the compiler.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/project-root.js';
import { TOOL_DIALECTS, type ToolDialect } from '../../../src/turns/dialects/dialect.js';
import {
  checkDeclaration,
  checkDeclarationList,
  checkListRules,
  DIALECT_RULES,
  MAX_WALK_DEPTH,
  rulesOf,
} from '../../../src/turns/dialects/rules.js';

type Obj = Record<string, unknown>;

/** Nests `leaf` `levels` objects deep: `{ type: object, properties: { n: … } }`, strict-compatible. */
function nested(levels: number, leaf: Obj = { type: 'string' }): Obj {
  let schema = leaf;
  for (let i = 0; i < levels; i++)
    schema = { type: 'object', properties: { n: schema }, required: ['n'], additionalProperties: false };
  return schema;
}

function strictObject(properties: Obj): Obj {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** Several good declarations per dialect, each close to an edge the rules draw. */
const GOOD: Record<ToolDialect, Obj[]> = {
  GENERIC: [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    // GENERIC is permissive about keywords: anything JSON Schema allows.
    {
      name: '_private-tool',
      description: '',
      inputSchema: {
        type: 'object',
        oneOf: [{ required: ['a'] }, { required: ['b'] }],
        properties: { 'a.b': { const: 1 }, tags: { type: 'array' } },
      },
    },
  ],
  OPENAI: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city.',
        parameters: {
          type: 'object',
          properties: {
            city: { type: 'string', minLength: 1 },
            tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
            when: { oneOf: [{ type: 'string', format: 'date' }, { type: 'integer' }] },
          },
          required: ['city'],
        },
      },
    },
    { type: 'function', function: { name: 'no_arguments' } },
    {
      type: 'function',
      function: { name: 'relaxed', parameters: { type: 'object', properties: {} }, strict: false },
    },
  ],
  OPENAI_STRICT: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city.',
        strict: true,
        parameters: strictObject({
          city: { type: 'string', description: 'City name', pattern: '^[A-Z]' },
          unit: { type: ['string', 'null'], enum: ['C', 'F', null] },
          when: { type: 'string', format: 'date-time' },
          count: { type: 'integer', minimum: 1, exclusiveMaximum: 10, multipleOf: 1 },
          tags: { type: 'array', items: { type: 'string' }, minItems: 0, maxItems: 5 },
          pick: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          mode: { const: 'fast' },
        }),
      },
    },
    // Definitions and recursion are supported.
    {
      type: 'function',
      function: {
        name: 'tree',
        strict: true,
        parameters: {
          type: 'object',
          $defs: {
            node: strictObject({
              value: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/$defs/node' } },
            }),
          },
          properties: { root: { $ref: '#/$defs/node' }, again: { anyOf: [{ $ref: '#' }, { type: 'null' }] } },
          required: ['root', 'again'],
          additionalProperties: false,
        },
      },
    },
    // Exactly at the limits: 10 levels, 250 long values in one enum.
    {
      type: 'function',
      function: { name: 'deep', strict: true, parameters: nested(10) },
    },
    {
      type: 'function',
      function: {
        name: 'big_enum',
        strict: true,
        parameters: strictObject({
          pick: {
            type: 'string',
            enum: Array.from({ length: 250 }, (_, i) => `value-${i}-`.padEnd(100, 'x')),
          },
        }),
      },
    },
  ],
  ANTHROPIC: [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      input_schema: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          'filter.name': { type: 'string' },
          choice: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
          user: { $ref: '#/$defs/user' },
        },
        $defs: { user: { type: 'object', properties: { id: { type: 'integer' } } } },
        required: ['city'],
      },
    },
    { name: '_starts-with-underscore', input_schema: { type: 'object' }, type: 'custom' },
  ],
  GEMINI: [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      parameters: {
        type: 'OBJECT',
        properties: {
          city: { type: 'STRING', description: 'City', minLength: '1', pattern: '^[A-Z]' },
          unit: { type: 'STRING', format: 'enum', enum: ['C', 'F'], nullable: true },
          when: { type: 'string', format: 'date-time' },
          count: { type: 'integer', format: 'int32', minimum: 0, maximum: 9 },
          tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: 1, maxItems: 3 },
          choice: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER', format: 'double' }] },
          nested: { type: 'OBJECT', properties: { x: { type: 'BOOLEAN' } }, propertyOrdering: ['x'] },
        },
        required: ['city'],
        propertyOrdering: ['city', 'unit'],
      },
    },
    { name: 'no_arguments', description: 'Takes nothing.' },
  ],
  GEMINI_JSON_SCHEMA: [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      parametersJsonSchema: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City' },
          unit: { type: ['string', 'null'], enum: ['C', 'F'] },
          level: { type: 'integer', enum: [1, 2, 3] },
          user: { anyOf: [{ $ref: '#/$defs/user' }, { type: 'null' }] },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2 },
          tree: { $ref: '#/$defs/node' },
        },
        $defs: {
          user: { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: false },
          // Recursive through an optional property: Gemini unrolls it a little.
          node: {
            type: 'object',
            properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } },
          },
        },
        required: ['city', 'tree'],
        additionalProperties: false,
        propertyOrdering: ['city', 'unit'],
      },
    },
    { name: 'no_arguments' },
  ],
};

function base(dialect: ToolDialect): Obj {
  return structuredClone(GOOD[dialect][0] as Obj);
}

/** The schema object of a declaration, to mutate. */
function schemaOf(dialect: ToolDialect, decl: Obj): Obj {
  switch (dialect) {
    case 'GENERIC':
      return decl.inputSchema as Obj;
    case 'OPENAI':
    case 'OPENAI_STRICT':
      return (decl.function as Obj).parameters as Obj;
    case 'ANTHROPIC':
      return decl.input_schema as Obj;
    case 'GEMINI':
      return decl.parameters as Obj;
    case 'GEMINI_JSON_SCHEMA':
      return decl.parametersJsonSchema as Obj;
  }
}

function withSchema(dialect: ToolDialect, schema: Obj): Obj {
  const decl = base(dialect);
  const target = dialect === 'OPENAI' || dialect === 'OPENAI_STRICT' ? (decl.function as Obj) : decl;
  const key = {
    GENERIC: 'inputSchema',
    OPENAI: 'parameters',
    OPENAI_STRICT: 'parameters',
    ANTHROPIC: 'input_schema',
    GEMINI: 'parameters',
    GEMINI_JSON_SCHEMA: 'parametersJsonSchema',
  }[dialect];
  target[key] = schema;
  return decl;
}

function withName(dialect: ToolDialect, name: unknown): Obj {
  const decl = base(dialect);
  if (dialect === 'OPENAI' || dialect === 'OPENAI_STRICT') (decl.function as Obj).name = name;
  else decl.name = name;
  return decl;
}

/** Adds one property to the base declaration's schema. */
function withProperty(dialect: ToolDialect, name: string, schema: unknown, required = true): Obj {
  const decl = base(dialect);
  const root = schemaOf(dialect, decl);
  (root.properties as Obj)[name] = schema;
  if (required) root.required = [...((root.required as string[] | undefined) ?? []), name];
  return decl;
}

interface Case {
  dialect: ToolDialect;
  rule: string;
  what: string;
  declaration: unknown;
  /** The violation's path, when the case pins it. */
  path?: string;
}

const cyclic: Obj = { name: 'loop', description: 'x', inputSchema: { type: 'object' } };
(cyclic.inputSchema as Obj).self = cyclic;

const CASES: Case[] = [
  // common
  ...TOOL_DIALECTS.map((dialect) => ({
    dialect,
    rule: 'common.declaration.json',
    what: 'a declaration that is not an object',
    declaration: [base(dialect)],
    path: '',
  })),
  {
    dialect: 'GENERIC',
    rule: 'common.declaration.json',
    what: 'a value that contains itself',
    declaration: cyclic,
  },
  {
    dialect: 'OPENAI',
    rule: 'common.declaration.json',
    what: 'an undefined value',
    declaration: { type: 'function', function: { name: 'x', description: undefined } },
    path: '/function/description',
  },
  {
    dialect: 'GEMINI',
    rule: 'common.declaration.json',
    what: 'a NaN',
    declaration: withProperty('GEMINI', 'n', { type: 'NUMBER', minimum: Number.NaN }),
    path: '/parameters/properties/n/minimum',
  },
  ...TOOL_DIALECTS.map((dialect) => ({
    dialect,
    rule: 'common.name',
    what: 'a name that starts with a digit',
    declaration: withName(dialect, '9lives'),
  })),
  {
    dialect: 'ANTHROPIC',
    rule: 'common.name',
    what: 'a name that starts with "-"',
    declaration: withName('ANTHROPIC', '-x'),
  },
  ...TOOL_DIALECTS.map((dialect) => ({
    dialect,
    rule: 'common.schema.bounded',
    what: `a schema nested deeper than ${MAX_WALK_DEPTH}`,
    declaration: withProperty(dialect, 'deep', nested(MAX_WALK_DEPTH + 1, { type: 'string' })),
  })),

  // GENERIC
  {
    dialect: 'GENERIC',
    rule: 'generic.shape',
    what: 'an extra field',
    declaration: { ...base('GENERIC'), strict: true },
    path: '/strict',
  },
  {
    dialect: 'GENERIC',
    rule: 'generic.shape',
    what: 'no description',
    declaration: { name: 'x', inputSchema: { type: 'object' } },
  },
  {
    dialect: 'GENERIC',
    rule: 'generic.shape',
    what: 'no inputSchema',
    declaration: { name: 'x', description: '' },
  },
  {
    dialect: 'GENERIC',
    rule: 'generic.input-schema.object',
    what: 'a string root',
    declaration: withSchema('GENERIC', { type: 'string' }),
    path: '/inputSchema/type',
  },

  // OPENAI and OPENAI_STRICT
  ...(['OPENAI', 'OPENAI_STRICT'] as const).flatMap((dialect): Case[] => [
    {
      dialect,
      rule: 'openai.shape',
      what: 'the Responses shape',
      declaration: { type: 'function', name: 'x', parameters: {} },
    },
    {
      dialect,
      rule: 'openai.shape',
      what: 'type "tool"',
      declaration: { ...base(dialect), type: 'tool' },
      path: '/type',
    },
    {
      dialect,
      rule: 'openai.shape',
      what: 'an unknown function field',
      declaration: { ...base(dialect), function: { ...(base(dialect).function as Obj), input_schema: {} } },
      path: '/function/input_schema',
    },
    {
      dialect,
      rule: 'openai.name',
      what: 'a dot in the name',
      declaration: withName(dialect, 'a.b'),
      path: '/function/name',
    },
    {
      dialect,
      rule: 'openai.name',
      what: 'a 65-character name',
      declaration: withName(dialect, 'a'.repeat(65)),
    },
    {
      dialect,
      rule: 'openai.parameters.object',
      what: 'a root without type object',
      declaration: withSchema(dialect, { properties: {}, required: [], additionalProperties: false }),
      path: '/function/parameters/type',
    },
    {
      dialect,
      rule: 'openai.schema.valid',
      what: 'required given as a string',
      declaration: withSchema(dialect, {
        type: 'object',
        properties: {},
        required: 'a',
        additionalProperties: false,
      }),
      path: '/function/parameters/required',
    },
    {
      dialect,
      rule: 'openai.schema.array-items',
      what: 'an array without items',
      declaration: withProperty(dialect, 'list', { type: 'array' }),
      path: '/function/parameters/properties/list',
    },
    {
      dialect,
      rule: 'openai.schema.array-items',
      what: 'a nullable array without items',
      declaration: withProperty(dialect, 'list', { type: ['array', 'null'] }),
    },
  ]),
  {
    dialect: 'OPENAI',
    rule: 'openai.strict.flag',
    what: 'strict: true in the non-strict dialect',
    declaration: { type: 'function', function: { name: 'x', strict: true } },
    path: '/function/strict',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.flag',
    what: 'strict absent',
    declaration: (() => {
      const decl = base('OPENAI_STRICT');
      delete (decl.function as Obj).strict;
      return decl;
    })(),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.parameters',
    what: 'no parameters',
    declaration: { type: 'function', function: { name: 'x', strict: true } },
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.root-any-of',
    what: 'a root anyOf',
    declaration: withSchema('OPENAI_STRICT', {
      type: 'object',
      anyOf: [strictObject({ a: { type: 'string' } }), strictObject({ b: { type: 'string' } })],
      properties: {},
      required: [],
      additionalProperties: false,
    }),
    path: '/function/parameters/anyOf',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.additional-properties',
    what: 'a nested object without additionalProperties: false',
    declaration: withProperty('OPENAI_STRICT', 'o', { type: 'object', properties: {}, required: [] }),
    path: '/function/parameters/properties/o',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.additional-properties',
    what: 'an object inside anyOf with additionalProperties: true',
    declaration: withProperty('OPENAI_STRICT', 'o', {
      anyOf: [{ type: 'object', properties: {}, required: [], additionalProperties: true }, { type: 'null' }],
    }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.required-all',
    what: 'an optional property',
    declaration: withProperty('OPENAI_STRICT', 'optional', { type: 'string' }, false),
    path: '/function/parameters/required',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.required-all',
    what: 'no required list',
    declaration: withProperty('OPENAI_STRICT', 'o', {
      type: 'object',
      properties: {},
      additionalProperties: false,
    }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.required-all',
    what: 'required naming no property',
    declaration: withProperty('OPENAI_STRICT', 'o', {
      type: 'object',
      properties: {},
      required: ['ghost'],
      additionalProperties: false,
    }),
  },
  ...[
    'allOf',
    'not',
    'oneOf',
    'if',
    'dependentRequired',
    'default',
    'minLength',
    'uniqueItems',
    'patternProperties',
    '$schema',
  ].map((keyword): Case => ({
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.keyword',
    what: `the keyword ${keyword}`,
    declaration: withProperty('OPENAI_STRICT', 'p', {
      type: 'string',
      [keyword]:
        keyword === 'dependentRequired' || keyword === 'patternProperties'
          ? {}
          : keyword === 'allOf' || keyword === 'oneOf'
            ? [{ type: 'string' }]
            : keyword === 'minLength'
              ? 1
              : keyword === 'uniqueItems'
                ? true
                : keyword === '$schema'
                  ? 'https://json-schema.org/draft/2020-12/schema'
                  : { type: 'string' },
    }),
    path: `/function/parameters/properties/p/${keyword}`,
  })),
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.type',
    what: 'a schema without type',
    declaration: withProperty('OPENAI_STRICT', 'p', { description: 'anything' }),
    path: '/function/parameters/properties/p',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.type',
    what: 'a boolean schema',
    declaration: withProperty('OPENAI_STRICT', 'p', true),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.format',
    what: 'format uri',
    declaration: withProperty('OPENAI_STRICT', 'p', { type: 'string', format: 'uri' }),
    path: '/function/parameters/properties/p/format',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.ref',
    what: 'a remote $ref',
    declaration: withProperty('OPENAI_STRICT', 'p', { $ref: 'https://example.com/schema.json' }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.ref',
    what: 'a $ref to a missing definition',
    declaration: withProperty('OPENAI_STRICT', 'p', { $ref: '#/$defs/missing' }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.ref-siblings',
    what: 'a description beside $ref',
    declaration: (() => {
      const decl = withProperty('OPENAI_STRICT', 'p', { $ref: '#/$defs/s', description: 'why' });
      (decl.function as Obj).parameters = {
        ...schemaOf('OPENAI_STRICT', decl),
        $defs: { s: { type: 'string' } },
      };
      return decl;
    })(),
    path: '/function/parameters/properties/p',
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.depth',
    what: '11 levels of nesting',
    declaration: withSchema('OPENAI_STRICT', nested(11)),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.depth',
    what: '11 levels reached through a definition',
    declaration: withSchema('OPENAI_STRICT', {
      ...nested(6, { $ref: '#/$defs/five' }),
      $defs: { five: nested(5) },
    }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.properties-total',
    what: '5,001 properties',
    declaration: withSchema(
      'OPENAI_STRICT',
      strictObject(
        Object.fromEntries(Array.from({ length: 5_001 }, (_, i) => [`p${i}`, { type: 'string' }])),
      ),
    ),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.properties-total',
    what: '5,002 properties once a definition used twice is expanded',
    declaration: withSchema('OPENAI_STRICT', {
      ...strictObject({ a: { $ref: '#/$defs/half' }, b: { $ref: '#/$defs/half' } }),
      $defs: {
        half: strictObject(
          Object.fromEntries(Array.from({ length: 2_500 }, (_, i) => [`p${i}`, { type: 'string' }])),
        ),
      },
    }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.properties-total',
    what: '5,001 properties in a definition no $ref uses',
    declaration: withSchema('OPENAI_STRICT', {
      ...strictObject({ a: { type: 'string' } }),
      $defs: {
        unused: strictObject(
          Object.fromEntries(Array.from({ length: 5_001 }, (_, i) => [`p${i}`, { type: 'string' }])),
        ),
      },
    }),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.enum-total',
    what: '1,001 enum values over two enums',
    declaration: withSchema(
      'OPENAI_STRICT',
      strictObject({
        a: { type: 'integer', enum: Array.from({ length: 500 }, (_, i) => i) },
        b: { type: 'integer', enum: Array.from({ length: 501 }, (_, i) => i) },
      }),
    ),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.string-total',
    what: '120,001 characters of property names',
    declaration: withSchema(
      'OPENAI_STRICT',
      strictObject(
        Object.fromEntries(
          Array.from({ length: 1_000 }, (_, i) => [
            `${i}`.padStart(120, 'n') + (i === 0 ? 'x' : ''),
            { type: 'string' },
          ]),
        ),
      ),
    ),
  },
  {
    dialect: 'OPENAI_STRICT',
    rule: 'openai.strict.large-enum',
    what: 'a 600-value string enum of 18,000 characters',
    declaration: withProperty('OPENAI_STRICT', 'pick', {
      type: 'string',
      enum: Array.from({ length: 600 }, (_, i) => `value-${i}`.padEnd(30, '-')),
    }),
    path: '/function/parameters/properties/pick/enum',
  },

  // ANTHROPIC
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.shape',
    what: 'an unknown field',
    declaration: { ...base('ANTHROPIC'), parameters: {} },
    path: '/parameters',
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.shape',
    what: 'type "function"',
    declaration: { ...base('ANTHROPIC'), type: 'function' },
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.shape',
    what: 'a non-string description',
    declaration: { ...base('ANTHROPIC'), description: 3 },
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.name',
    what: 'a space in the name',
    declaration: withName('ANTHROPIC', 'get weather'),
    path: '/name',
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.name',
    what: 'no name',
    declaration: { input_schema: { type: 'object' } },
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.input-schema.object',
    what: 'no input_schema',
    declaration: { name: 'x', description: 'y' },
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.input-schema.object',
    what: 'a root without type',
    declaration: withSchema('ANTHROPIC', { properties: { a: { type: 'string' } } }),
    path: '/input_schema/type',
  },
  ...['oneOf', 'anyOf', 'allOf'].map((keyword): Case => ({
    dialect: 'ANTHROPIC',
    rule: 'anthropic.input-schema.root-composition',
    what: `a root ${keyword}`,
    declaration: withSchema('ANTHROPIC', {
      type: 'object',
      [keyword]: [{ required: ['a'] }, { required: ['b'] }],
    }),
    path: `/input_schema/${keyword}`,
  })),
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.schema.valid',
    what: 'a draft-04 boolean exclusiveMinimum',
    declaration: withProperty('ANTHROPIC', 'n', { type: 'number', minimum: 0, exclusiveMinimum: true }),
    path: '/input_schema/properties/n/exclusiveMinimum',
  },
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.schema.valid',
    what: 'a draft-07 items array',
    declaration: withProperty('ANTHROPIC', 't', { type: 'array', items: [{ type: 'string' }] }),
  },
  ...['filter[name]', 'a b', 'café', 'x'.repeat(65)].map((key): Case => ({
    dialect: 'ANTHROPIC',
    rule: 'anthropic.schema.property-key',
    what: `the property key ${key.slice(0, 12)}`,
    declaration: withProperty('ANTHROPIC', key, { type: 'string' }),
  })),
  {
    dialect: 'ANTHROPIC',
    rule: 'anthropic.schema.property-key',
    what: 'a nested property key with a space',
    declaration: withProperty('ANTHROPIC', 'o', {
      type: 'object',
      properties: { 'a b': { type: 'string' } },
    }),
    path: '/input_schema/properties/o/properties/a b',
  },

  // GEMINI
  {
    dialect: 'GEMINI',
    rule: 'gemini.shape',
    what: 'parametersJsonSchema beside parameters',
    declaration: { ...base('GEMINI'), parametersJsonSchema: {} },
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.shape',
    what: 'a non-string description',
    declaration: { ...base('GEMINI'), description: null },
  },
  ...(['GEMINI', 'GEMINI_JSON_SCHEMA'] as const).flatMap((dialect): Case[] => [
    {
      dialect,
      rule: 'gemini.name',
      what: 'a name that starts with a digit',
      declaration: withName(dialect, '1x'),
      path: '/name',
    },
    {
      dialect,
      rule: 'gemini.name',
      what: 'a 65-character name',
      declaration: withName(dialect, 'a'.repeat(65)),
    },
    { dialect, rule: 'gemini.name', what: 'a space in the name', declaration: withName(dialect, 'a b') },
    ...['a.b', 'a b', 'café', 'a-b', '1st'].map((key): Case => ({
      dialect,
      rule: 'gemini.schema.property-name',
      what: `the property name ${key}`,
      declaration: withProperty(dialect, key, dialect === 'GEMINI' ? { type: 'STRING' } : { type: 'string' }),
    })),
  ]),
  {
    dialect: 'GEMINI',
    rule: 'gemini.parameters.object',
    what: 'a STRING root',
    declaration: withSchema('GEMINI', { type: 'STRING' }),
    path: '/parameters/type',
  },
  ...(
    [
      ['additionalProperties', false],
      ['$ref', '#/$defs/x'],
      ['$defs', {}],
      ['$schema', 'https://json-schema.org/draft/2020-12/schema'],
      ['exclusiveMinimum', 0],
      ['exclusiveMaximum', 9],
      ['multipleOf', 2],
      ['uniqueItems', true],
      ['const', 'x'],
      ['oneOf', [{ type: 'STRING' }]],
      ['allOf', [{ type: 'STRING' }]],
      ['examples', ['x']],
    ] as const
  ).map(([field, value]): Case => ({
    dialect: 'GEMINI',
    rule: 'gemini.schema.field',
    what: `the field ${field}`,
    declaration: withProperty('GEMINI', 'p', { type: 'STRING', [field]: value }),
    path: `/parameters/properties/p/${field}`,
  })),
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.field-value',
    what: 'nullable as a string',
    declaration: withProperty('GEMINI', 'p', { type: 'STRING', nullable: 'yes' }),
    path: '/parameters/properties/p/nullable',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.field-value',
    what: 'a negative maxItems',
    declaration: withProperty('GEMINI', 'p', { type: 'ARRAY', items: { type: 'STRING' }, maxItems: -1 }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.field-value',
    what: 'an items tuple',
    declaration: withProperty('GEMINI', 'p', { type: 'ARRAY', items: [{ type: 'STRING' }] }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.field-value',
    what: 'a boolean schema',
    declaration: withProperty('GEMINI', 'p', true),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.type',
    what: 'a type list',
    declaration: withProperty('GEMINI', 'p', { type: ['string', 'null'] }),
    path: '/parameters/properties/p/type',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.type',
    what: 'type NULL',
    declaration: withProperty('GEMINI', 'p', { type: 'NULL' }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.type',
    what: 'type file',
    declaration: withProperty('GEMINI', 'p', { type: 'file' }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.type',
    what: 'no type',
    declaration: withProperty('GEMINI', 'p', { description: 'x' }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.array-items',
    what: 'an ARRAY without items',
    declaration: withProperty('GEMINI', 'p', { type: 'ARRAY' }),
    path: '/parameters/properties/p',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.object-properties',
    what: 'an OBJECT without properties',
    declaration: withProperty('GEMINI', 'p', { type: 'OBJECT' }),
    path: '/parameters/properties/p',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.object-properties',
    what: 'a root OBJECT with empty properties',
    declaration: withSchema('GEMINI', { type: 'OBJECT', properties: {} }),
    path: '/parameters',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.required',
    what: 'required naming no property',
    declaration: withSchema('GEMINI', {
      type: 'OBJECT',
      properties: { a: { type: 'STRING' } },
      required: ['b'],
    }),
    path: '/parameters/required/0',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.required',
    what: 'propertyOrdering naming no property',
    declaration: withSchema('GEMINI', {
      type: 'OBJECT',
      properties: { a: { type: 'STRING' } },
      propertyOrdering: ['a', 'z'],
    }),
    path: '/parameters/propertyOrdering/1',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.enum',
    what: 'an empty-string enum value',
    declaration: withProperty('GEMINI', 'p', { type: 'STRING', enum: ['a', ''] }),
    path: '/parameters/properties/p/enum/1',
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.enum',
    what: 'an integer enum',
    declaration: withProperty('GEMINI', 'p', { type: 'INTEGER', enum: [1, 2] }),
  },
  {
    dialect: 'GEMINI',
    rule: 'gemini.schema.enum',
    what: 'string values on INTEGER',
    declaration: withProperty('GEMINI', 'p', { type: 'INTEGER', format: 'enum', enum: ['101', '201'] }),
    path: '/parameters/properties/p/enum',
  },
  ...(
    [
      ['STRING', 'email'],
      ['STRING', 'uuid'],
      ['INTEGER', 'double'],
      ['NUMBER', 'int32'],
      ['BOOLEAN', 'enum'],
    ] as const
  ).map(([type, format]): Case => ({
    dialect: 'GEMINI',
    rule: 'gemini.schema.format',
    what: `format ${format} on ${type}`,
    declaration: withProperty('GEMINI', 'p', { type, format }),
    path: '/parameters/properties/p/format',
  })),

  // GEMINI_JSON_SCHEMA
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.shape',
    what: 'parameters beside parametersJsonSchema',
    declaration: { ...base('GEMINI_JSON_SCHEMA'), parameters: { type: 'OBJECT' } },
    path: '/parameters',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.parameters.object',
    what: 'an array root',
    declaration: withSchema('GEMINI_JSON_SCHEMA', { type: 'array', items: { type: 'string' } }),
    path: '/parametersJsonSchema/type',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.valid',
    what: 'an unknown type name',
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', { type: 'text' }),
  },
  ...[
    '$schema',
    'const',
    'allOf',
    'not',
    'exclusiveMinimum',
    'multipleOf',
    'uniqueItems',
    'pattern',
    'default',
  ].map((keyword): Case => ({
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.keyword',
    what: `the keyword ${keyword}`,
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', {
      type: 'number',
      [keyword]:
        keyword === '$schema'
          ? 'https://json-schema.org/draft/2020-12/schema'
          : keyword === 'allOf'
            ? [{ type: 'number' }]
            : keyword === 'not'
              ? { type: 'string' }
              : keyword === 'uniqueItems'
                ? true
                : keyword === 'pattern'
                  ? '^a'
                  : 1,
    }),
    path: `/parametersJsonSchema/properties/p/${keyword}`,
  })),
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.keyword',
    what: '$schema at the root',
    declaration: withSchema('GEMINI_JSON_SCHEMA', {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
    }),
    path: '/parametersJsonSchema/$schema',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.enum',
    what: 'an empty-string enum value',
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', { type: 'string', enum: ['', 'a'] }),
    path: '/parametersJsonSchema/properties/p/enum/0',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.enum',
    what: 'a boolean enum value',
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', { enum: [true, false] }),
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.ref',
    what: 'a $ref to a missing definition',
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', { $ref: '#/$defs/missing' }),
    path: '/parametersJsonSchema/properties/p/$ref',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.ref',
    what: 'a $ref into definitions (not $defs)',
    declaration: withSchema('GEMINI_JSON_SCHEMA', {
      type: 'object',
      properties: { p: { $ref: '#/definitions/s' } },
      definitions: { s: { type: 'string' } },
    }),
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.ref-siblings',
    what: 'a description beside $ref',
    declaration: withProperty('GEMINI_JSON_SCHEMA', 'p', { $ref: '#/$defs/user', description: 'who' }),
    path: '/parametersJsonSchema/properties/p',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.cycle-required',
    what: 'a recursive model through a required property',
    declaration: withSchema('GEMINI_JSON_SCHEMA', {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] } },
    }),
    path: '/parametersJsonSchema/$defs/node/properties/next/$ref',
  },
  {
    dialect: 'GEMINI_JSON_SCHEMA',
    rule: 'gemini-json.schema.cycle-required',
    what: 'a required $ref to the root',
    declaration: withSchema('GEMINI_JSON_SCHEMA', {
      type: 'object',
      properties: { again: { $ref: '#' } },
      required: ['again'],
    }),
  },
];

describe('checkDeclaration', () => {
  it.each(
    TOOL_DIALECTS.flatMap((dialect) => GOOD[dialect].map((declaration, i) => ({ dialect, i, declaration }))),
  )('passes good declaration $i in $dialect', ({ dialect, declaration }) => {
    expect(checkDeclaration(dialect, declaration)).toEqual([]);
  });

  it.each(CASES)('$dialect: $rule fires on $what', ({ dialect, rule, declaration, path }) => {
    const violations = checkDeclaration(dialect, declaration);
    const hits = violations.filter((v) => v.rule === rule);
    expect(hits.length, JSON.stringify(violations, null, 1).slice(0, 2000)).toBeGreaterThan(0);
    if (path !== undefined) expect(hits.map((v) => v.path)).toContain(path);
    for (const v of violations) {
      expect(rulesOf(dialect)).toContain(v.rule);
      expect(v.message.length).toBeGreaterThan(0);
    }
  });

  it('names the tool in each violation, or null when the name cannot be read', () => {
    expect(checkDeclaration('ANTHROPIC', withName('ANTHROPIC', 'a b'))[0]?.tool).toBe('a b');
    expect(checkDeclaration('OPENAI', { type: 'function', function: { name: 'a.b' } })[0]?.tool).toBe('a.b');
    expect(checkDeclaration('GEMINI', null)).toEqual([
      {
        tool: null,
        path: '',
        rule: 'common.declaration.json',
        message: 'the declaration is not a JSON object',
      },
    ]);
  });

  it('never throws on hostile values', () => {
    const hostile: unknown[] = [
      undefined,
      'x',
      42,
      [],
      { name: 'x', inputSchema: { type: 'object', properties: { ['__proto__']: { type: 'string' } } } },
      {
        type: 'function',
        function: { name: 'x', strict: true, parameters: { type: 'object', $defs: null, properties: [] } },
      },
      { name: 'x', parametersJsonSchema: { type: 'object', properties: { a: { $ref: 7 } }, required: 'a' } },
      { name: 'x', parameters: { type: 'OBJECT', properties: { a: null }, required: [null], enum: {} } },
    ];
    for (const dialect of TOOL_DIALECTS)
      for (const value of hostile) expect(() => checkDeclaration(dialect, value)).not.toThrow();
  });

  it('bounds the work of following $refs that fan out', () => {
    // Each definition uses the next one twice: 2^40 expansions if followed naively.
    const $defs: Obj = {};
    for (let i = 0; i < 40; i++)
      $defs[`d${i}`] = strictObject({ a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } });
    $defs.d40 = { type: 'string' };
    const decl = withSchema('OPENAI_STRICT', { ...strictObject({ root: { $ref: '#/$defs/d0' } }), $defs });
    const violations = checkDeclaration('OPENAI_STRICT', decl);
    expect(violations.map((v) => v.rule)).toContain('common.schema.bounded');
  });
});

describe('checkDeclarationList', () => {
  const many = (dialect: ToolDialect, n: number): Obj[] =>
    Array.from({ length: n }, (_, i) => withName(dialect, `tool_${i}`));

  it.each([
    ['OPENAI', 'openai.list.max', 128],
    ['OPENAI_STRICT', 'openai.list.max', 128],
    ['GEMINI', 'gemini.list.max', 128],
    ['GEMINI_JSON_SCHEMA', 'gemini.list.max', 128],
  ] as const)('%s: %s allows %i declarations and no more', (dialect, rule, max) => {
    expect(checkDeclarationList(dialect, many(dialect, max))).toEqual([]);
    expect(checkDeclarationList(dialect, many(dialect, max + 1))).toEqual([
      { tool: null, path: '', rule, message: `${max + 1} declarations, over the ${max} the API takes` },
    ]);
  });

  it.each(['GENERIC', 'ANTHROPIC'] as const)('%s has no documented count limit', (dialect) => {
    expect(checkDeclarationList(dialect, many(dialect, 300))).toEqual([]);
  });

  it.each(TOOL_DIALECTS)('%s: common.list.unique-names fires on a repeated name', (dialect) => {
    const list = [withName(dialect, 'same'), withName(dialect, 'other'), withName(dialect, 'same')];
    expect(checkDeclarationList(dialect, list)).toEqual([
      {
        tool: 'same',
        path: '/2',
        rule: 'common.list.unique-names',
        message: 'the name "same" is declared twice',
      },
    ]);
  });

  it("prefixes each declaration's violations with its index", () => {
    const list = [withName('GEMINI', 'first'), withProperty('GEMINI', 'p', { type: 'ARRAY' })];
    expect(checkDeclarationList('GEMINI', list).map((v) => [v.rule, v.path])).toEqual([
      ['gemini.schema.array-items', '/1/parameters/properties/p'],
    ]);
  });

  it('checkListRules: the list rules alone, for declarations each already checked', () => {
    const broken = withProperty('GEMINI', 'p', { type: 'ARRAY' });
    expect(checkListRules('GEMINI', [withName('GEMINI', 'first'), broken])).toEqual([]);
    const twice = [withName('GEMINI', 'same'), withName('GEMINI', 'same')];
    expect(checkListRules('GEMINI', twice)).toEqual(checkDeclarationList('GEMINI', twice));
    expect(checkListRules('OPENAI', many('OPENAI', 129)).map((v) => v.rule)).toEqual(['openai.list.max']);
  });
});

describe('the rules table', () => {
  it('has unique ids, each tested by a case in every dialect it applies to', () => {
    const ids = DIALECT_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The list rules are tested by checkDeclarationList's own tests above.
    const listRules = new Set(['openai.list.max', 'gemini.list.max', 'common.list.unique-names']);
    const untested = DIALECT_RULES.filter((r) => !listRules.has(r.id)).flatMap((r) =>
      r.dialects
        .filter((dialect) => !CASES.some((c) => c.rule === r.id && c.dialect === dialect))
        .map((dialect) => `${r.id} in ${dialect}`),
    );
    expect(untested).toEqual([]);
  });

  it('is docs/dialects.md: one row per rule id, and no row for an unknown id', () => {
    const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'dialects.md'), 'utf8');
    const rowIds = [...doc.matchAll(/^\| `([a-z-]+(?:\.[a-z0-9-]+)+)` *\|/gm)].map((m) => m[1]);
    const ids = DIALECT_RULES.map((r) => r.id);
    for (const id of ids) expect(rowIds, `docs/dialects.md has no row for ${id}`).toContain(id);
    for (const id of rowIds) expect(ids, `docs/dialects.md has a row for unknown ${id}`).toContain(id);
  });
});
