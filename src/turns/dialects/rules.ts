/**
 * The validator of tool declarations, one rule set per model API (pure: no I/O, no clock), issue 26
 * item 7. It is written from the providers' own documentation (`docs/dialects.md` has one row per
 * rule with its source) and deliberately shares no code with the compiler in this folder: it is the
 * independent check that what we declare is what each API accepts.
 *
 * Where a provider's documentation is silent or ambiguous the rule is the conservative reading (it
 * refuses more than the provider might), and the table says so. Every violation names its rule id,
 * the JSON Pointer of the offending value inside the declaration, and what is wrong.
 *
 * Declarations are untrusted data: the walk is bounded in depth ({@link MAX_WALK_DEPTH}) and in work
 * ({@link MAX_WALK_NODES}), never follows a `$ref` out of the schema, and never throws.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { TOOL_DIALECTS, type ToolDialect } from './dialect.js';

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
const GEMINI_BOTH: readonly ToolDialect[] = ['GEMINI', 'GEMINI_JSON_SCHEMA'];

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
// Keyword lists, from the providers' pages.

/** Structured Outputs' supported keywords (types, `anyOf`, definitions, and the listed constraints). */
const OPENAI_STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  // string
  'pattern',
  'format',
  // number
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  // array
  'minItems',
  'maxItems',
]);
const OPENAI_STRICT_TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
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

/** The fields of the Gemini API's `Schema` object; any other field is an unknown-field 400. */
const GEMINI_SCHEMA_FIELDS = new Set([
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
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
/** `Schema.type` values we declare (the enum also has `TYPE_UNSPECIFIED` and `NULL`: not used). */
const GEMINI_TYPES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT']);
/** `Schema.format`: the documented values per type. */
const GEMINI_FORMATS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['STRING', new Set(['enum', 'date-time'])],
  ['NUMBER', new Set(['float', 'double'])],
  ['INTEGER', new Set(['int32', 'int64'])],
]);
const GEMINI_COUNT_FIELDS = [
  'maxItems',
  'minItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
];

/** The JSON Schema keywords `parametersJsonSchema` supports (the list of `responseJsonSchema`). */
const GEMINI_JSON_KEYWORDS = new Set([
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

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

// ---------------------------------------------------------------------------------------------
// Plumbing.

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One JSON Pointer segment. */
function seg(key: string | number): string {
  const text = String(key);
  // Most keys need no escaping: skip the two scans of replaceAll (this runs for every node).
  if (!text.includes('~') && !text.includes('/')) return '/' + text;
  return '/' + text.replaceAll('~', '~0').replaceAll('/', '~1');
}

function quote(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

class Report {
  readonly violations: RuleViolation[] = [];
  constructor(readonly tool: string | null) {}
  add(rule: string, path: string, message: string): void {
    this.violations.push({ tool: this.tool, path, rule, message });
  }
}

/** Where a subschema sits under its parent. */
interface Edge {
  keyword: string;
  /** The property name or index, for map and array keywords. */
  key?: string | number;
}

/** The subschemas of a JSON Schema (any draft) or of a Gemini `Schema`, with their edges. */
/** Keywords whose value is a map of subschemas, a list of them, or one subschema. */
const MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];
const ONE_KEYWORDS = [
  'items',
  'additionalProperties',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
];
const CHILD_KEYWORDS = new Set([...MAP_KEYWORDS, ...LIST_KEYWORDS, ...ONE_KEYWORDS]);

function children(schema: Obj): { edge: Edge; path: string; value: unknown }[] {
  const out: { edge: Edge; path: string; value: unknown }[] = [];
  // Most nodes are leaves ({ type, description }): one pass over their few keys says so.
  let any = false;
  for (const key in schema)
    if (CHILD_KEYWORDS.has(key)) {
      any = true;
      break;
    }
  if (!any) return out;
  for (const keyword of MAP_KEYWORDS) {
    const map = schema[keyword];
    if (isObj(map))
      for (const [key, value] of Object.entries(map))
        out.push({ edge: { keyword, key }, path: seg(keyword) + seg(key), value });
  }
  for (const keyword of LIST_KEYWORDS) {
    const list = schema[keyword];
    if (Array.isArray(list))
      list.forEach((value, key) =>
        out.push({ edge: { keyword, key }, path: seg(keyword) + seg(key), value }),
      );
  }
  for (const keyword of ONE_KEYWORDS) {
    const value = schema[keyword];
    if (isObj(value) || (typeof value === 'boolean' && keyword !== 'additionalProperties'))
      out.push({ edge: { keyword }, path: seg(keyword), value });
  }
  return out;
}

interface Visit {
  value: unknown;
  path: string;
}

/**
 * Calls `visit` for every subschema of `root` (syntactically: `$ref`s are not followed), depth
 * first. Reports `common.schema.bounded` and stops when the schema is too deep or too large.
 */
function walk(root: unknown, rootPath: string, report: Report, visit: (v: Visit) => void): void {
  let nodes = 0;
  let stopped = false;
  const onPath = new Set<unknown>();
  const go = (v: Visit, level: number): void => {
    if (stopped) return;
    if (++nodes > MAX_WALK_NODES) {
      stopped = true;
      return report.add(
        'common.schema.bounded',
        rootPath,
        `the schema has more than ${MAX_WALK_NODES} subschemas`,
      );
    }
    if (level > MAX_WALK_DEPTH) {
      stopped = true;
      return report.add(
        'common.schema.bounded',
        v.path,
        `the schema nests deeper than ${MAX_WALK_DEPTH} levels`,
      );
    }
    visit(v);
    if (!isObj(v.value) || onPath.has(v.value)) return;
    onPath.add(v.value);
    for (const child of children(v.value)) go({ value: child.value, path: v.path + child.path }, level + 1);
    onPath.delete(v.value);
  };
  go({ value: root, path: rootPath }, 0);
}

/** The `type` values of a JSON Schema as a list (empty when absent or malformed). */
function typesOf(schema: Obj): string[] {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** An object or array schema: a level of nesting. */
function isContainer(schema: Obj): boolean {
  const types = typesOf(schema).map((t) => t.toLowerCase());
  return (
    types.includes('object') ||
    types.includes('array') ||
    schema.properties !== undefined ||
    schema.items !== undefined ||
    schema.prefixItems !== undefined
  );
}

/** Whether the value survives JSON as it is: plain objects, arrays, strings, finite numbers, booleans, null. */
function checkJson(value: unknown, path: string, report: Report, seen: Set<unknown>, level: number): boolean {
  // The path below `path` is kept as a trail of keys and written out only for a report.
  const trail: (string | number)[] = [];
  const at = () => path + trail.map(seg).join('');
  const go = (v: unknown, depth: number): boolean => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) return true;
      report.add('common.declaration.json', at(), `${String(v)} is not a JSON number`);
      return false;
    }
    if (typeof v !== 'object') {
      report.add('common.declaration.json', at(), `a ${typeof v} is not a JSON value`);
      return false;
    }
    if (seen.has(v)) {
      report.add('common.declaration.json', at(), 'the value contains itself');
      return false;
    }
    if (depth > MAX_WALK_DEPTH * 4) {
      report.add('common.declaration.json', at(), `the value nests deeper than ${MAX_WALK_DEPTH * 4} levels`);
      return false;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      report.add('common.declaration.json', at(), 'the value is not a plain object');
      return false;
    }
    seen.add(v);
    let ok = true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && ok; i++) {
        trail.push(i);
        ok = go(v[i] as unknown, depth + 1);
        trail.pop();
      }
    } else {
      const obj = v as Record<string, unknown>;
      for (const key in obj) {
        if (!Object.hasOwn(obj, key)) continue;
        trail.push(key);
        ok = go(obj[key], depth + 1);
        trail.pop();
        if (!ok) break;
      }
    }
    seen.delete(v);
    return ok;
  };
  return go(value, level);
}

function checkKeys(obj: Obj, allowed: readonly string[], rule: string, path: string, report: Report): void {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) report.add(rule, path + seg(key), `unknown field ${quote(key)}`);
}

function checkName(name: unknown, pattern: RegExp, rule: string, path: string, report: Report): void {
  if (typeof name !== 'string') return report.add(rule, path, 'the name is missing or not a string');
  if (!pattern.test(name))
    report.add(rule, path, `the name ${quote(name)} does not match ${String(pattern)}`);
}

function checkDescription(value: unknown, rule: string, path: string, report: Report): void {
  if (value !== undefined && typeof value !== 'string') report.add(rule, path, 'description is not a string');
}

// ---------------------------------------------------------------------------------------------
// JSON Schema meta-validation (2020-12), one Ajv made on first use.

const META_2020 = 'https://json-schema.org/draft/2020-12/schema';
let metaAjv: Ajv2020 | null = null;

function checkMetaSchema(schema: unknown, rule: string, path: string, report: Report): void {
  metaAjv ??= new Ajv2020({ strict: false, allErrors: false, validateFormats: false, logger: false });
  const validate = metaAjv.getSchema(META_2020);
  if (!validate) return report.add(rule, path, 'the JSON Schema 2020-12 meta-schema is not available');
  let valid: boolean;
  try {
    valid = validate(schema) as boolean;
  } catch {
    valid = false;
  }
  if (!valid) {
    const error = validate.errors?.[0];
    const at = error?.instancePath ?? '';
    report.add(
      rule,
      path + at,
      `not a valid JSON Schema 2020-12: ${at || 'the root'} ${error?.message ?? 'is invalid'}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Local references.

/** The schema a local `$ref` names: `#` (the root) or `#/$defs/<name>` (or `#/definitions/<name>`). */
function resolveRef(
  root: Obj,
  ref: string,
  containers: readonly string[],
): { ok: true; target: Obj; key: string } | { ok: false } {
  if (ref === '#') return { ok: true, target: root, key: '#' };
  for (const container of containers) {
    const prefix = `#/${container}/`;
    if (!ref.startsWith(prefix)) continue;
    const raw = ref.slice(prefix.length);
    if (raw.includes('/')) return { ok: false };
    const name = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const defs = root[container];
    const target = isObj(defs) && Object.hasOwn(defs, name) ? defs[name] : undefined;
    return isObj(target) ? { ok: true, target, key: ref } : { ok: false };
  }
  return { ok: false };
}

/** Where a resolved local `$ref` points, as a JSON Pointer from the schema's root. */
function refPath(key: string): string {
  return key === '#' ? '' : key.slice(1);
}

// ---------------------------------------------------------------------------------------------
// GENERIC.

function checkGeneric(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'inputSchema'], 'generic.shape', '', report);
  if (typeof decl.description !== 'string')
    report.add('generic.shape', '/description', 'description is not a string');
  if (!isObj(decl.inputSchema))
    return report.add('generic.shape', '/inputSchema', 'inputSchema is not an object');
  if (decl.inputSchema.type !== 'object')
    report.add(
      'generic.input-schema.object',
      '/inputSchema/type',
      `type is ${quote(decl.inputSchema.type)}, not "object"`,
    );
  walk(decl.inputSchema, '/inputSchema', report, () => undefined);
}

// ---------------------------------------------------------------------------------------------
// OPENAI and OPENAI_STRICT.

function checkOpenAi(decl: Obj, strict: boolean, report: Report): void {
  checkKeys(decl, ['type', 'function'], 'openai.shape', '', report);
  if (decl.type !== 'function')
    report.add('openai.shape', '/type', `type is ${quote(decl.type)}, not "function"`);
  const fn = decl.function;
  if (!isObj(fn)) return report.add('openai.shape', '/function', 'function is not an object');
  checkKeys(fn, ['name', 'description', 'parameters', 'strict'], 'openai.shape', '/function', report);
  checkName(fn.name, OPENAI_NAME_PATTERN, 'openai.name', '/function/name', report);
  checkDescription(fn.description, 'openai.shape', '/function/description', report);
  if (fn.strict !== undefined && typeof fn.strict !== 'boolean')
    report.add('openai.shape', '/function/strict', 'strict is not a boolean');
  if (strict && fn.strict !== true)
    report.add('openai.strict.flag', '/function/strict', 'OPENAI_STRICT declares strict: true');
  if (!strict && fn.strict === true)
    report.add('openai.strict.flag', '/function/strict', 'OPENAI (non-strict) does not declare strict: true');

  const params = fn.parameters;
  if (params === undefined) {
    if (strict)
      report.add(
        'openai.strict.parameters',
        '/function',
        'strict mode needs parameters, even with no properties',
      );
    return;
  }
  const at = '/function/parameters';
  if (!isObj(params)) return report.add('openai.parameters.object', at, 'parameters is not an object schema');
  if (params.type !== 'object')
    report.add('openai.parameters.object', at + '/type', `type is ${quote(params.type)}, not "object"`);
  checkMetaSchema(params, 'openai.schema.valid', at, report);
  walk(params, at, report, ({ value, path }) => {
    if (isObj(value) && typesOf(value).includes('array') && value.items === undefined)
      report.add('openai.schema.array-items', path, 'an array schema has no items');
  });
  if (strict) checkOpenAiStrict(params, at, report);
}

function checkOpenAiStrict(root: Obj, at: string, report: Report): void {
  if (root.anyOf !== undefined) report.add('openai.strict.root-any-of', at + '/anyOf', 'the root uses anyOf');

  walk(root, at, report, ({ value, path }) => {
    if (!isObj(value)) {
      return report.add(
        'openai.strict.type',
        path,
        `a ${value === true || value === false ? 'boolean' : typeof value} schema is not supported`,
      );
    }
    for (const key of Object.keys(value))
      if (!OPENAI_STRICT_KEYWORDS.has(key))
        report.add('openai.strict.keyword', path + seg(key), `${quote(key)} is not supported`);

    const types = value.type;
    const typeList = typesOf(value);
    if (types === undefined) {
      if (
        value.anyOf === undefined &&
        value.$ref === undefined &&
        value.enum === undefined &&
        value.const === undefined
      )
        report.add('openai.strict.type', path, 'the schema has no type');
    } else {
      for (const t of typeList)
        if (!OPENAI_STRICT_TYPES.has(t))
          report.add('openai.strict.type', path + '/type', `type ${quote(t)} is not supported`);
    }

    if (typeof value.format === 'string' && !OPENAI_STRICT_FORMATS.has(value.format))
      report.add('openai.strict.format', path + '/format', `format ${quote(value.format)} is not supported`);

    if (value.$ref !== undefined) {
      if (typeof value.$ref !== 'string' || !resolveRef(root, value.$ref, ['$defs', 'definitions']).ok)
        report.add(
          'openai.strict.ref',
          path + '/$ref',
          `$ref ${quote(value.$ref)} is not a local definition of this schema`,
        );
      const siblings = Object.keys(value).filter((k) => k !== '$ref');
      if (siblings.length > 0)
        report.add(
          'openai.strict.ref-siblings',
          path,
          `$ref has sibling keywords ${siblings.map(quote).join(', ')}`,
        );
    }

    const isObject = typeList.includes('object') || value.properties !== undefined;
    if (isObject) {
      if (value.additionalProperties !== false)
        report.add(
          'openai.strict.additional-properties',
          path,
          'an object schema does not set additionalProperties: false',
        );
      const keys = isObj(value.properties) ? Object.keys(value.properties) : [];
      const required = value.required;
      if (!Array.isArray(required)) {
        report.add('openai.strict.required-all', path, 'an object schema has no required list');
      } else {
        const listed = new Set<unknown>(required);
        const missing = keys.filter((k) => !listed.has(k));
        const own = new Set<unknown>(keys);
        const extra = required.filter((k) => !own.has(k));
        if (missing.length > 0)
          report.add(
            'openai.strict.required-all',
            path + '/required',
            `required misses ${missing.map(quote).join(', ')}`,
          );
        if (extra.length > 0)
          report.add(
            'openai.strict.required-all',
            path + '/required',
            `required names ${extra.map(quote).join(', ')}, not a property`,
          );
      }
    }

    if (Array.isArray(value.enum)) {
      const enumChars = value.enum.reduce((sum: number, v) => sum + valueChars(v), 0);
      if (
        value.enum.length > OPENAI_STRICT_LARGE_ENUM_VALUES &&
        value.enum.every((v) => typeof v === 'string') &&
        enumChars > OPENAI_STRICT_LARGE_ENUM_CHARS
      )
        report.add(
          'openai.strict.large-enum',
          path + '/enum',
          `a string enum of ${value.enum.length} values has ${enumChars} characters, over ${OPENAI_STRICT_LARGE_ENUM_CHARS}`,
        );
    }
  });

  const sizes = expandedSizes(root, ['$defs', 'definitions']);
  if (sizes === null)
    return report.add(
      'common.schema.bounded',
      at,
      `following its $refs takes more than ${MAX_WALK_NODES} steps`,
    );
  if (sizes.properties > OPENAI_STRICT_MAX_PROPERTIES)
    report.add(
      'openai.strict.properties-total',
      at,
      `${sizes.properties} object properties, over ${OPENAI_STRICT_MAX_PROPERTIES}`,
    );
  if (sizes.enumValues > OPENAI_STRICT_MAX_ENUM_VALUES)
    report.add(
      'openai.strict.enum-total',
      at,
      `${sizes.enumValues} enum values, over ${OPENAI_STRICT_MAX_ENUM_VALUES}`,
    );
  if (sizes.chars > OPENAI_STRICT_MAX_STRING_CHARS)
    report.add(
      'openai.strict.string-total',
      at,
      `${sizes.chars} characters of names and values, over ${OPENAI_STRICT_MAX_STRING_CHARS}`,
    );
  if (sizes.levels > OPENAI_STRICT_MAX_DEPTH)
    report.add(
      'openai.strict.depth',
      at + sizes.deepest,
      `${sizes.levels} levels of nesting, over ${OPENAI_STRICT_MAX_DEPTH}`,
    );
}

/** Characters an enum or const value counts: a string's length, else the length of its JSON. */
function valueChars(value: unknown): number {
  return typeof value === 'string' ? value.length : quote(value).length;
}

interface ExpandedSizes {
  /** The deepest chain of object and array schemas, and where it ends (in the schema as written). */
  levels: number;
  deepest: string;
  /** Object properties, enum values, and characters of names, enum and const values. */
  properties: number;
  enumValues: number;
  chars: number;
}

/**
 * The sizes Structured Outputs limits, measured on the schema with its local `$ref`s expanded where
 * they are used (a definition used twice counts twice, and nests as deep as where it is used), a
 * cycle cut where it closes (a recursive definition counts once). A definition no `$ref` reaches
 * counts as written. Definition names count once.
 * `null` when the expansion takes more than {@link MAX_WALK_NODES} steps.
 */
function expandedSizes(root: Obj, containers: readonly string[]): ExpandedSizes | null {
  const sizes: ExpandedSizes = { levels: 0, deepest: '', properties: 0, enumValues: 0, chars: 0 };
  for (const container of containers) {
    const defs = root[container];
    if (isObj(defs)) for (const name of Object.keys(defs)) sizes.chars += name.length;
  }
  let budget = MAX_WALK_NODES;
  const expanding = new Set<string>(['#']);
  const reached = new Set<string>();
  const go = (schema: unknown, path: string, levels: number, steps: number): void => {
    if (!isObj(schema) || --budget < 0 || steps > MAX_WALK_DEPTH) return;
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref, containers);
      if (target.ok && !expanding.has(target.key)) {
        reached.add(target.key);
        expanding.add(target.key);
        go(target.target, refPath(target.key), levels, steps + 1);
        expanding.delete(target.key);
      }
    }
    const here = levels + (isContainer(schema) ? 1 : 0);
    if (here > sizes.levels) {
      sizes.levels = here;
      sizes.deepest = path;
    }
    if (isObj(schema.properties))
      for (const key of Object.keys(schema.properties)) {
        sizes.properties++;
        sizes.chars += key.length;
      }
    if (Array.isArray(schema.enum)) {
      sizes.enumValues += schema.enum.length;
      for (const v of schema.enum) sizes.chars += valueChars(v);
    }
    if (schema.const !== undefined) sizes.chars += valueChars(schema.const);
    for (const child of children(schema)) {
      if (containers.includes(child.edge.keyword)) continue;
      go(child.value, path + child.path, here, steps + 1);
    }
  };
  go(root, '', 0, 0);
  // A definition no $ref reaches still counts, as written.
  for (const container of containers) {
    const defs = root[container];
    if (!isObj(defs)) continue;
    for (const [name, def] of Object.entries(defs)) {
      const key = `#/${container}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (reached.has(key)) continue;
      expanding.add(key);
      go(def, refPath(key), 0, 0);
      expanding.delete(key);
    }
  }
  return budget < 0 ? null : sizes;
}

// ---------------------------------------------------------------------------------------------
// ANTHROPIC.

function checkAnthropic(decl: Obj, report: Report): void {
  checkKeys(
    decl,
    ['name', 'description', 'input_schema', 'type', 'cache_control'],
    'anthropic.shape',
    '',
    report,
  );
  checkName(decl.name, ANTHROPIC_NAME_PATTERN, 'anthropic.name', '/name', report);
  checkDescription(decl.description, 'anthropic.shape', '/description', report);
  if (decl.type !== undefined && decl.type !== 'custom')
    report.add('anthropic.shape', '/type', `type is ${quote(decl.type)}, not "custom"`);
  const schema = decl.input_schema;
  const at = '/input_schema';
  if (!isObj(schema))
    return report.add('anthropic.input-schema.object', at, 'input_schema is missing or not an object');
  if (schema.type !== 'object')
    report.add('anthropic.input-schema.object', at + '/type', `type is ${quote(schema.type)}, not "object"`);
  for (const keyword of ['oneOf', 'anyOf', 'allOf'])
    if (schema[keyword] !== undefined)
      report.add(
        'anthropic.input-schema.root-composition',
        at + seg(keyword),
        `${keyword} at the top level of input_schema`,
      );
  checkMetaSchema(schema, 'anthropic.schema.valid', at, report);
  walk(schema, at, report, ({ value, path }) => {
    if (!isObj(value) || !isObj(value.properties)) return;
    for (const key of Object.keys(value.properties))
      if (!ANTHROPIC_PROPERTY_KEY_PATTERN.test(key))
        report.add(
          'anthropic.schema.property-key',
          path + '/properties' + seg(key),
          `property key ${quote(key)} does not match ${String(ANTHROPIC_PROPERTY_KEY_PATTERN)}`,
        );
  });
}

// ---------------------------------------------------------------------------------------------
// GEMINI (`parameters`, the OpenAPI 3.0 subset).

function checkGemini(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'parameters'], 'gemini.shape', '', report);
  checkName(decl.name, GEMINI_NAME_PATTERN, 'gemini.name', '/name', report);
  checkDescription(decl.description, 'gemini.shape', '/description', report);
  const params = decl.parameters;
  if (params === undefined) return;
  const at = '/parameters';
  if (!isObj(params)) return report.add('gemini.parameters.object', at, 'parameters is not a Schema object');
  if (typeof params.type !== 'string' || params.type.toUpperCase() !== 'OBJECT')
    report.add('gemini.parameters.object', at + '/type', `type is ${quote(params.type)}, not OBJECT`);
  walk(params, at, report, ({ value, path }) => checkGeminiSchema(value, path, report));
}

function checkGeminiSchema(value: unknown, path: string, report: Report): void {
  if (!isObj(value))
    return report.add('gemini.schema.field-value', path, `${quote(value)} is not a Schema object`);
  for (const key of Object.keys(value))
    if (!GEMINI_SCHEMA_FIELDS.has(key))
      report.add('gemini.schema.field', path + seg(key), `${quote(key)} is not a field of Schema`);

  const type = typeof value.type === 'string' ? value.type.toUpperCase() : null;
  if (value.type === undefined) {
    if (value.anyOf === undefined) report.add('gemini.schema.type', path, 'the schema has no type');
  } else if (type === null || !GEMINI_TYPES.has(type)) {
    report.add(
      'gemini.schema.type',
      path + '/type',
      `type ${quote(value.type)} is not one of ${[...GEMINI_TYPES].join(', ')}`,
    );
  }

  const fieldValue = (key: string, ok: boolean, what: string): void => {
    if (value[key] !== undefined && !ok)
      report.add('gemini.schema.field-value', path + seg(key), `${key} is not ${what}`);
  };
  fieldValue('nullable', typeof value.nullable === 'boolean', 'a boolean');
  for (const key of ['title', 'description', 'pattern', 'format'])
    fieldValue(key, typeof value[key] === 'string', 'a string');
  for (const key of ['minimum', 'maximum'])
    fieldValue(key, typeof value[key] === 'number' && Number.isFinite(value[key]), 'a number');
  for (const key of GEMINI_COUNT_FIELDS) {
    const v = value[key];
    const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
    fieldValue(key, typeof n === 'number' && Number.isSafeInteger(n) && n >= 0, 'a non-negative integer');
  }
  fieldValue('properties', isObj(value.properties), 'an object of Schemas');
  fieldValue('items', isObj(value.items), 'one Schema');
  fieldValue('anyOf', Array.isArray(value.anyOf) && value.anyOf.length > 0, 'a non-empty list of Schemas');
  fieldValue('enum', Array.isArray(value.enum), 'a list');
  fieldValue('required', Array.isArray(value.required), 'a list');
  fieldValue('propertyOrdering', Array.isArray(value.propertyOrdering), 'a list');

  if (type === 'ARRAY' && value.items === undefined)
    report.add('gemini.schema.array-items', path, 'an ARRAY has no items');
  const properties = isObj(value.properties) ? value.properties : null;
  if (type === 'OBJECT' && (properties === null || Object.keys(properties).length === 0))
    report.add('gemini.schema.object-properties', path, 'an OBJECT has no properties');
  if (properties)
    for (const key of Object.keys(properties))
      if (!GEMINI_PROPERTY_NAME_PATTERN.test(key))
        report.add(
          'gemini.schema.property-name',
          path + '/properties' + seg(key),
          `property name ${quote(key)} does not match ${String(GEMINI_PROPERTY_NAME_PATTERN)}`,
        );
  for (const key of ['required', 'propertyOrdering']) {
    const list = value[key];
    if (!Array.isArray(list)) continue;
    list.forEach((name, i) => {
      if (typeof name !== 'string' || !properties || !Object.hasOwn(properties, name))
        report.add(
          'gemini.schema.required',
          path + seg(key) + seg(i),
          `${quote(name)} is not a property of this object`,
        );
    });
  }

  if (Array.isArray(value.enum)) {
    if (type !== 'STRING')
      report.add('gemini.schema.enum', path + '/enum', `enum on type ${quote(value.type)}, not STRING`);
    value.enum.forEach((v, i) => {
      if (typeof v !== 'string')
        report.add('gemini.schema.enum', path + '/enum' + seg(i), `enum value ${quote(v)} is not a string`);
      else if (v === '')
        report.add('gemini.schema.enum', path + '/enum' + seg(i), 'an empty-string enum value');
    });
  }
  if (typeof value.format === 'string') {
    const allowed = type ? GEMINI_FORMATS.get(type) : undefined;
    if (!allowed?.has(value.format))
      report.add(
        'gemini.schema.format',
        path + '/format',
        `format ${quote(value.format)} is not documented for type ${quote(value.type)}`,
      );
  }
}

// ---------------------------------------------------------------------------------------------
// GEMINI_JSON_SCHEMA (`parametersJsonSchema`).

function checkGeminiJson(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'parametersJsonSchema'], 'gemini-json.shape', '', report);
  checkName(decl.name, GEMINI_NAME_PATTERN, 'gemini.name', '/name', report);
  checkDescription(decl.description, 'gemini-json.shape', '/description', report);
  const schema = decl.parametersJsonSchema;
  if (schema === undefined) return;
  const at = '/parametersJsonSchema';
  if (!isObj(schema))
    return report.add('gemini-json.parameters.object', at, 'parametersJsonSchema is not an object schema');
  if (schema.type !== 'object')
    report.add('gemini-json.parameters.object', at + '/type', `type is ${quote(schema.type)}, not "object"`);
  checkMetaSchema(schema, 'gemini-json.schema.valid', at, report);
  walk(schema, at, report, ({ value, path }) => {
    if (!isObj(value)) return;
    for (const key of Object.keys(value))
      if (!GEMINI_JSON_KEYWORDS.has(key))
        report.add('gemini-json.schema.keyword', path + seg(key), `${quote(key)} is not supported`);
    if (isObj(value.properties))
      for (const key of Object.keys(value.properties))
        if (!GEMINI_PROPERTY_NAME_PATTERN.test(key))
          report.add(
            'gemini.schema.property-name',
            path + '/properties' + seg(key),
            `property name ${quote(key)} does not match ${String(GEMINI_PROPERTY_NAME_PATTERN)}`,
          );
    if (Array.isArray(value.enum))
      value.enum.forEach((v, i) => {
        if (v === '')
          report.add('gemini-json.schema.enum', path + '/enum' + seg(i), 'an empty-string enum value');
        else if (typeof v !== 'string' && typeof v !== 'number')
          report.add(
            'gemini-json.schema.enum',
            path + '/enum' + seg(i),
            `enum value ${quote(v)} is not a string or a number`,
          );
      });
    if (value.$ref !== undefined) {
      if (typeof value.$ref !== 'string' || !resolveRef(schema, value.$ref, ['$defs']).ok)
        report.add(
          'gemini-json.schema.ref',
          path + '/$ref',
          `$ref ${quote(value.$ref)} is not a local definition of this schema`,
        );
      const siblings = Object.keys(value).filter((k) => !k.startsWith('$'));
      if (siblings.length > 0)
        report.add(
          'gemini-json.schema.ref-siblings',
          path,
          `$ref has sibling keywords ${siblings.map(quote).join(', ')}`,
        );
    }
  });
  checkGeminiCycles(schema, at, report);
}

/**
 * A `$ref` back to a definition being expanded (or to the root) is a cycle: Gemini unrolls it only
 * a little, so it must sit under at least one property that is not required (else every valid
 * value would be infinite).
 */
function checkGeminiCycles(root: Obj, at: string, report: Report): void {
  let budget = MAX_WALK_NODES;
  const reported = new Set<string>();
  const expanding = new Map<string, boolean>(); // ref key → passed a non-required property since
  const go = (
    schema: unknown,
    path: string,
    optionalSince: ReadonlyMap<string, boolean>,
    steps: number,
  ): void => {
    if (!isObj(schema) || --budget < 0 || steps > MAX_WALK_DEPTH) return;
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref, ['$defs']);
      if (target.ok) {
        const since = optionalSince.get(target.key);
        if (since !== undefined) {
          if (!since && !reported.has(path)) {
            reported.add(path);
            report.add(
              'gemini-json.schema.cycle-required',
              path + '/$ref',
              `the cyclic $ref ${quote(schema.$ref)} is reached only through required properties`,
            );
          }
        } else {
          const next = new Map(optionalSince);
          next.set(target.key, false);
          go(target.target, at + refPath(target.key), next, steps + 1);
        }
      }
    }
    const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
    for (const child of children(schema)) {
      if (child.edge.keyword === '$defs') continue;
      let next: ReadonlyMap<string, boolean> = optionalSince;
      if (child.edge.keyword === 'properties' && !required.has(child.edge.key)) {
        const copy = new Map(optionalSince);
        for (const key of copy.keys()) copy.set(key, true);
        next = copy;
      }
      go(child.value, path + child.path, next, steps + 1);
    }
  };
  expanding.set('#', false);
  go(root, at, expanding, 0);
  if (budget < 0)
    report.add('common.schema.bounded', at, `following its $refs takes more than ${MAX_WALK_NODES} steps`);
}

// ---------------------------------------------------------------------------------------------
// The entry points.

function nameOf(dialect: ToolDialect, decl: Obj): string | null {
  const name =
    dialect === 'OPENAI' || dialect === 'OPENAI_STRICT'
      ? isObj(decl.function)
        ? decl.function.name
        : undefined
      : decl.name;
  return typeof name === 'string' ? name : null;
}

/** Violations of one declaration (the object a runtime appends to that API's tools array). */
export function checkDeclaration(dialect: ToolDialect, declaration: unknown): RuleViolation[] {
  if (!isObj(declaration)) {
    const report = new Report(null);
    report.add('common.declaration.json', '', 'the declaration is not a JSON object');
    return report.violations;
  }
  const name = nameOf(dialect, declaration);
  const report = new Report(name);
  if (!checkJson(declaration, '', report, new Set(), 0)) return report.violations;
  if (name === null || !COMMON_NAME_PATTERN.test(name))
    report.add(
      'common.name',
      dialect === 'OPENAI' || dialect === 'OPENAI_STRICT' ? '/function/name' : '/name',
      `the name ${quote(name)} does not match ${String(COMMON_NAME_PATTERN)}`,
    );
  switch (dialect) {
    case 'GENERIC':
      checkGeneric(declaration, report);
      break;
    case 'OPENAI':
    case 'OPENAI_STRICT':
      checkOpenAi(declaration, dialect === 'OPENAI_STRICT', report);
      break;
    case 'ANTHROPIC':
      checkAnthropic(declaration, report);
      break;
    case 'GEMINI':
      checkGemini(declaration, report);
      break;
    case 'GEMINI_JSON_SCHEMA':
      checkGeminiJson(declaration, report);
      break;
  }
  return report.violations;
}

/** Violations of a whole tools array: list rules (max count, unique names) plus each declaration's. */
export function checkDeclarationList(
  dialect: ToolDialect,
  declarations: readonly unknown[],
): RuleViolation[] {
  return listViolations(dialect, declarations, true);
}

/**
 * Only the rules of the list as a whole (how many tools, unique names), for a list whose every
 * declaration already passed {@link checkDeclaration} on its own: the compiler checks each tool
 * once, when it is compiled, and not again for each list it is in.
 */
export function checkListRules(dialect: ToolDialect, declarations: readonly unknown[]): RuleViolation[] {
  return listViolations(dialect, declarations, false);
}

function listViolations(
  dialect: ToolDialect,
  declarations: readonly unknown[],
  each: boolean,
): RuleViolation[] {
  const out: RuleViolation[] = [];
  const max =
    dialect === 'OPENAI' || dialect === 'OPENAI_STRICT'
      ? OPENAI_MAX_TOOLS
      : GEMINI_BOTH.includes(dialect)
        ? GEMINI_MAX_TOOLS
        : null;
  if (max !== null && declarations.length > max)
    out.push({
      tool: null,
      path: '',
      rule: dialect.startsWith('OPENAI') ? 'openai.list.max' : 'gemini.list.max',
      message: `${declarations.length} declarations, over the ${max} the API takes`,
    });
  const seen = new Set<string>();
  declarations.forEach((declaration, i) => {
    if (each)
      for (const v of checkDeclaration(dialect, declaration)) out.push({ ...v, path: seg(i) + v.path });
    const name = isObj(declaration) ? nameOf(dialect, declaration) : null;
    if (name === null) return;
    if (seen.has(name))
      out.push({
        tool: name,
        path: seg(i),
        rule: 'common.list.unique-names',
        message: `the name ${quote(name)} is declared twice`,
      });
    seen.add(name);
  });
  return out;
}

/** The ids of the rules that apply to a dialect. */
export function rulesOf(dialect: ToolDialect): string[] {
  return DIALECT_RULES.filter((r) => r.dialects.includes(dialect)).map((r) => r.id);
}
