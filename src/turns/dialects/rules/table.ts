/**
 * The validator's rules table and limits (pure: no I/O), issue 26 item 7: one {@link DialectRule}
 * per rule id (docs/dialects.md has one row per id, with the provider page it comes from), the
 * name patterns, and the numeric limits each provider documents. The checks that apply them are the
 * per-provider modules beside this one; `../rules.ts` is the entry point.
 */
import { TOOL_DIALECTS, type ToolDialect } from '../dialect.js';

export interface RuleViolation {
  /** The declared name, when the declaration has a string one. */
  tool: string | null;
  /** JSON Pointer of the offending value inside the declaration (`''` is the declaration itself). */
  path: string;
  /** The rule id, a row of `docs/dialects.md`. */
  rule: string;
  message: string;
}

/** One rule: its id, the dialects it applies to, and what it requires (one line). */
export interface DialectRule {
  id: string;
  dialects: readonly ToolDialect[];
  rule: string;
}

const ALL = TOOL_DIALECTS;
const OPENAI_BOTH: readonly ToolDialect[] = ['OPENAI', 'OPENAI_STRICT'];
/** The two Gemini dialects (`parameters` and `parametersJsonSchema`). */
export const GEMINI_BOTH: readonly ToolDialect[] = ['GEMINI', 'GEMINI_JSON_SCHEMA'];

// ---------------------------------------------------------------------------------------------
// The limits, each with its number from the provider's page (docs/dialects.md says which).

/** Our own declared-name rule, the intersection of the three providers' (issue 26 item 2). */
export const COMMON_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
/** OpenAI function names: a-z, A-Z, 0-9, `_` and `-`, at most 64. */
export const OPENAI_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** Anthropic tool names (64 for remote MCP connectors; the Messages API itself allows 128). */
export const ANTHROPIC_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** Anthropic `input_schema.properties` keys. */
export const ANTHROPIC_PROPERTY_KEY_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;
/** Gemini function names: start with a letter or `_`; letters, digits, `_`, `.`, `-`; at most 64. */
export const GEMINI_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/;
/** Gemini parameter names: start with a letter or `_`; letters, digits, `_`; at most 64. */
export const GEMINI_PROPERTY_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

/** Chat Completions: at most 128 functions in `tools`. */
export const OPENAI_MAX_TOOLS = 128;
/** Gemini: at most 128 function declarations. */
export const GEMINI_MAX_TOOLS = 128;

/** Structured Outputs: nesting levels of a schema. */
export const OPENAI_STRICT_MAX_DEPTH = 10;
/** Structured Outputs: object properties in a schema, in total. */
export const OPENAI_STRICT_MAX_PROPERTIES = 5_000;
/** Structured Outputs: enum values across all enum properties. */
export const OPENAI_STRICT_MAX_ENUM_VALUES = 1_000;
/** Structured Outputs: characters of property names, definition names, enum values and const values. */
export const OPENAI_STRICT_MAX_STRING_CHARS = 120_000;
/** Structured Outputs: a string enum of more than this many values ... */
export const OPENAI_STRICT_LARGE_ENUM_VALUES = 250;
/** ... may have at most this many characters of values. */
export const OPENAI_STRICT_LARGE_ENUM_CHARS = 15_000;

/** The walk stops (and refuses the schema) this deep; no provider documents a deeper schema. */
export const MAX_WALK_DEPTH = 64;
/** The walk stops (and refuses the schema) after this many schemas. */
export const MAX_WALK_NODES = 200_000;

// ---------------------------------------------------------------------------------------------
// The rules table (docs/dialects.md has one row per id, with its source).

export const DIALECT_RULES: readonly DialectRule[] = [
  {
    id: 'common.declaration.json',
    dialects: ALL,
    rule: 'The declaration is a JSON object of plain JSON values',
  },
  {
    id: 'common.name',
    dialects: ALL,
    rule: 'The name matches ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ (ours, every dialect)',
  },
  { id: 'common.list.unique-names', dialects: ALL, rule: 'No two declarations in one list share a name' },
  {
    id: 'common.schema.bounded',
    dialects: ALL,
    rule: `A schema nests at most ${MAX_WALK_DEPTH} deep and has at most ${MAX_WALK_NODES} subschemas (ours)`,
  },

  {
    id: 'generic.shape',
    dialects: ['GENERIC'],
    rule: 'Exactly { name, description, inputSchema }, strings and an object',
  },
  { id: 'generic.input-schema.object', dialects: ['GENERIC'], rule: 'inputSchema has type "object"' },

  {
    id: 'openai.shape',
    dialects: OPENAI_BOTH,
    rule: '{ type: "function", function: { name, description?, parameters?, strict? } } and nothing else',
  },
  { id: 'openai.name', dialects: OPENAI_BOTH, rule: 'function.name matches ^[a-zA-Z0-9_-]{1,64}$' },
  {
    id: 'openai.parameters.object',
    dialects: OPENAI_BOTH,
    rule: 'function.parameters, when present, has type "object"',
  },
  {
    id: 'openai.schema.valid',
    dialects: OPENAI_BOTH,
    rule: 'function.parameters is a valid JSON Schema (2020-12 meta-schema)',
  },
  { id: 'openai.schema.array-items', dialects: OPENAI_BOTH, rule: 'Every array schema has items' },
  { id: 'openai.list.max', dialects: OPENAI_BOTH, rule: `At most ${OPENAI_MAX_TOOLS} functions in tools` },
  {
    id: 'openai.strict.flag',
    dialects: OPENAI_BOTH,
    rule: 'OPENAI_STRICT has function.strict true; OPENAI has it absent or false',
  },
  { id: 'openai.strict.parameters', dialects: ['OPENAI_STRICT'], rule: 'function.parameters is present' },
  {
    id: 'openai.strict.root-any-of',
    dialects: ['OPENAI_STRICT'],
    rule: 'The root is an object schema, not anyOf',
  },
  {
    id: 'openai.strict.additional-properties',
    dialects: ['OPENAI_STRICT'],
    rule: 'Every object schema has additionalProperties: false',
  },
  {
    id: 'openai.strict.required-all',
    dialects: ['OPENAI_STRICT'],
    rule: 'Every object schema has required listing exactly its properties',
  },
  {
    id: 'openai.strict.keyword',
    dialects: ['OPENAI_STRICT'],
    rule: 'Only the supported keywords (no allOf, not, oneOf, if/then/else, dependent*, default, …)',
  },
  {
    id: 'openai.strict.type',
    dialects: ['OPENAI_STRICT'],
    rule: 'Every schema has a supported type (or is anyOf, $ref, enum or const)',
  },
  {
    id: 'openai.strict.format',
    dialects: ['OPENAI_STRICT'],
    rule: 'format is one of the supported string formats',
  },
  {
    id: 'openai.strict.ref',
    dialects: ['OPENAI_STRICT'],
    rule: '$ref is # or #/$defs/… (or #/definitions/…) and resolves',
  },
  { id: 'openai.strict.ref-siblings', dialects: ['OPENAI_STRICT'], rule: 'A $ref has no sibling keywords' },
  {
    id: 'openai.strict.depth',
    dialects: ['OPENAI_STRICT'],
    rule: `At most ${OPENAI_STRICT_MAX_DEPTH} levels of nesting`,
  },
  {
    id: 'openai.strict.properties-total',
    dialects: ['OPENAI_STRICT'],
    rule: `At most ${OPENAI_STRICT_MAX_PROPERTIES} object properties in total`,
  },
  {
    id: 'openai.strict.enum-total',
    dialects: ['OPENAI_STRICT'],
    rule: `At most ${OPENAI_STRICT_MAX_ENUM_VALUES} enum values in total`,
  },
  {
    id: 'openai.strict.string-total',
    dialects: ['OPENAI_STRICT'],
    rule: `At most ${OPENAI_STRICT_MAX_STRING_CHARS} characters of property names, definition names, enum and const values`,
  },
  {
    id: 'openai.strict.large-enum',
    dialects: ['OPENAI_STRICT'],
    rule: `A string enum of more than ${OPENAI_STRICT_LARGE_ENUM_VALUES} values has at most ${OPENAI_STRICT_LARGE_ENUM_CHARS} characters`,
  },

  {
    id: 'anthropic.shape',
    dialects: ['ANTHROPIC'],
    rule: '{ name, description?, input_schema, type?: "custom", cache_control? } and nothing else',
  },
  { id: 'anthropic.name', dialects: ['ANTHROPIC'], rule: 'name matches ^[a-zA-Z0-9_-]{1,64}$' },
  { id: 'anthropic.input-schema.object', dialects: ['ANTHROPIC'], rule: 'input_schema has type "object"' },
  {
    id: 'anthropic.input-schema.root-composition',
    dialects: ['ANTHROPIC'],
    rule: 'No oneOf, anyOf or allOf at the root of input_schema',
  },
  {
    id: 'anthropic.schema.valid',
    dialects: ['ANTHROPIC'],
    rule: 'input_schema is valid JSON Schema draft 2020-12',
  },
  {
    id: 'anthropic.schema.property-key',
    dialects: ['ANTHROPIC'],
    rule: 'Every properties key matches ^[a-zA-Z0-9_.-]{1,64}$',
  },

  { id: 'gemini.shape', dialects: ['GEMINI'], rule: '{ name, description?, parameters? } and nothing else' },
  {
    id: 'gemini-json.shape',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: '{ name, description?, parametersJsonSchema? } and nothing else',
  },
  { id: 'gemini.name', dialects: GEMINI_BOTH, rule: 'name matches ^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$' },
  { id: 'gemini.list.max', dialects: GEMINI_BOTH, rule: `At most ${GEMINI_MAX_TOOLS} function declarations` },
  {
    id: 'gemini.schema.property-name',
    dialects: GEMINI_BOTH,
    rule: 'Every property name matches ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$',
  },
  { id: 'gemini.parameters.object', dialects: ['GEMINI'], rule: 'parameters has type OBJECT' },
  {
    id: 'gemini.schema.field',
    dialects: ['GEMINI'],
    rule: 'Only the fields of the Schema object (no additionalProperties, $ref, $defs, $schema, const, oneOf, allOf, exclusive*, multipleOf, uniqueItems, …)',
  },
  {
    id: 'gemini.schema.field-value',
    dialects: ['GEMINI'],
    rule: 'Each field has the value type the Schema object gives it',
  },
  {
    id: 'gemini.schema.type',
    dialects: ['GEMINI'],
    rule: 'type is one string of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT; only an anyOf may omit it',
  },
  { id: 'gemini.schema.array-items', dialects: ['GEMINI'], rule: 'An ARRAY has items' },
  { id: 'gemini.schema.object-properties', dialects: ['GEMINI'], rule: 'An OBJECT has non-empty properties' },
  {
    id: 'gemini.schema.required',
    dialects: ['GEMINI'],
    rule: 'required and propertyOrdering name only properties of the object',
  },
  { id: 'gemini.schema.enum', dialects: ['GEMINI'], rule: 'enum is on a STRING and holds non-empty strings' },
  { id: 'gemini.schema.format', dialects: ['GEMINI'], rule: 'format is a documented value for the type' },
  {
    id: 'gemini-json.parameters.object',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'parametersJsonSchema has type "object"',
  },
  {
    id: 'gemini-json.schema.valid',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'parametersJsonSchema is a valid JSON Schema (2020-12 meta-schema)',
  },
  {
    id: 'gemini-json.schema.keyword',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'Only the supported keywords (no $schema, const, allOf, not, exclusive*, multipleOf, uniqueItems, …)',
  },
  {
    id: 'gemini-json.schema.enum',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'enum holds non-empty strings or numbers',
  },
  {
    id: 'gemini-json.schema.ref',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: '$ref is # or #/$defs/… and resolves',
  },
  {
    id: 'gemini-json.schema.ref-siblings',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'A $ref has no sibling keywords except $-keywords',
  },
  {
    id: 'gemini-json.schema.cycle-required',
    dialects: ['GEMINI_JSON_SCHEMA'],
    rule: 'A cyclic $ref is reached only through a non-required property',
  },
];
