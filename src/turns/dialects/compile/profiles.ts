/**
 * The compiler's profile of each dialect (pure: no I/O): which keywords it keeps, whether it is
 * strict, typed on every node or OpenAPI-nullable, which enum values, formats and property names
 * it takes, and its caps. The numbers and lists come from the providers' pages (docs/dialects.md);
 * the validator (`../rules.ts`) keeps its own copy of them on purpose, so that it checks the
 * compiler instead of agreeing with it.
 */
import type { ToolDialect } from '../dialect.js';

/** What one dialect takes, as the compiler reads it. */
export interface Profile {
  /** Keywords kept (after their subschemas are compiled); the others are dropped or described. */
  keep: ReadonlySet<string>;
  /** OpenAI strict mode: closed objects, every property required, optional ones nullable. */
  strict: boolean;
  /** Every node must carry a type: a node that allows any value becomes JSON text. */
  typed: boolean;
  /** Gemini `parameters`: one type per node and `nullable: true` (OpenAPI 3.0), not a `null` type. */
  openApiNullable: boolean;
  /** Which values an `enum` may hold. */
  enumValues: 'any' | 'strings' | 'strings-numbers';
  /** An empty-string enum value is refused (Gemini). */
  noEmptyEnumValue: boolean;
  /** `format` values kept, by type; a type not listed keeps every format. */
  formats: Readonly<Record<string, ReadonlySet<string>>> | null;
  /** Property names the dialect takes. */
  propertyName: RegExp;
  /** Property names must start with a letter or `_`. */
  propertyNameStart: boolean;
  /** Object nesting levels (the root object is level 1); deeper values become JSON text. */
  maxObjectDepth: number;
  /** Whole-schema caps (OpenAI strict), or null. */
  caps: {
    properties: number;
    enumValues: number;
    chars: number;
    bigStringEnum: { values: number; chars: number };
  } | null;
}

const JSON_SCHEMA_KEYWORDS = [
  'type',
  'description',
  'title',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'default',
];

/** OpenAI Structured Outputs' string formats (docs/dialects.md, openai.strict.format). */
const OPENAI_STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);
/** Gemini's Schema.format values, by type (docs/dialects.md, gemini.format). */
const GEMINI_FORMATS: Record<string, ReadonlySet<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
  boolean: new Set(),
  array: new Set(),
  object: new Set(),
};

/** Property names every JSON-Schema dialect takes (Anthropic's documented rule; docs/dialects.md). */
const SAFE_PROPERTY_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;
/** Gemini: letters, digits and `_`, starting with a letter or `_` (docs/dialects.md). */
const GEMINI_PROPERTY_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

/** OpenAI (non-strict) and Anthropic: JSON Schema as it is, with the rules every dialect shares. */
const JSON_SCHEMA_PROFILE: Profile = {
  keep: new Set(JSON_SCHEMA_KEYWORDS),
  strict: false,
  typed: false,
  openApiNullable: false,
  enumValues: 'any',
  noEmptyEnumValue: false,
  formats: null,
  propertyName: SAFE_PROPERTY_NAME,
  propertyNameStart: false,
  maxObjectDepth: 32,
  caps: null,
};

export const PROFILES: Record<Exclude<ToolDialect, 'GENERIC'>, Profile> = {
  OPENAI: JSON_SCHEMA_PROFILE,
  OPENAI_STRICT: {
    keep: new Set([
      'type',
      'description',
      'properties',
      'required',
      'additionalProperties',
      'items',
      'enum',
      'const',
      'anyOf',
      'format',
      'pattern',
      'minimum',
      'maximum',
      'exclusiveMinimum',
      'exclusiveMaximum',
      'multipleOf',
      'minItems',
      'maxItems',
    ]),
    strict: true,
    typed: true,
    openApiNullable: false,
    enumValues: 'any',
    noEmptyEnumValue: false,
    formats: { string: OPENAI_STRICT_FORMATS, number: new Set(), integer: new Set() },
    propertyName: SAFE_PROPERTY_NAME,
    propertyNameStart: false,
    maxObjectDepth: 10,
    caps: {
      properties: 5_000,
      enumValues: 1_000,
      chars: 120_000,
      bigStringEnum: { values: 250, chars: 15_000 },
    },
  },
  ANTHROPIC: JSON_SCHEMA_PROFILE,
  GEMINI: {
    keep: new Set([
      'type',
      'format',
      'title',
      'description',
      'nullable',
      'enum',
      'maxItems',
      'minItems',
      'properties',
      'required',
      'minProperties',
      'maxProperties',
      'minLength',
      'maxLength',
      'pattern',
      'anyOf',
      'items',
      'minimum',
      'maximum',
    ]),
    strict: false,
    typed: true,
    openApiNullable: true,
    enumValues: 'strings',
    noEmptyEnumValue: true,
    formats: GEMINI_FORMATS,
    propertyName: GEMINI_PROPERTY_NAME,
    propertyNameStart: true,
    maxObjectDepth: 32,
    caps: null,
  },
  GEMINI_JSON_SCHEMA: {
    keep: new Set([
      'type',
      'format',
      'title',
      'description',
      'enum',
      'items',
      'minItems',
      'maxItems',
      'minimum',
      'maximum',
      'anyOf',
      'properties',
      'additionalProperties',
      'required',
    ]),
    strict: false,
    typed: false,
    openApiNullable: false,
    enumValues: 'strings-numbers',
    noEmptyEnumValue: true,
    formats: null,
    propertyName: GEMINI_PROPERTY_NAME,
    propertyNameStart: true,
    maxObjectDepth: 32,
    caps: null,
  },
};
