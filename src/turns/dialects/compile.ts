/**
 * Compiles one tool's canonical input schema for one model API (pure, issue 26): what comes out is
 * a schema that API's request accepts, and a {@link Shape} that maps the model's arguments back to
 * canonical ones (decode.ts). The rules each dialect follows, with their sources, are in
 * docs/dialects.md; the independent check of the output is rules.ts.
 *
 * The steps, for every dialect but GENERIC (which is never compiled: today's output, byte for byte):
 * 1. normalize.ts: local `$ref`s inlined (a recursive one cut into a permissive schema), `allOf`
 *    merged, boolean schemas made objects.
 * 2. The root is made one plain object schema: a root `anyOf`/`oneOf` of objects is merged into one
 *    object (properties united, `required` what every option requires), the options named in the
 *    description. A root that is not an object schema cannot be declared (`UNSUPPORTED_SCHEMA`).
 * 3. Each node is rewritten for the dialect:
 *    - `oneOf` becomes `anyOf`; a `null` option, a `null` type or `nullable` becomes the dialect's
 *      way of saying null (a `null` type or option, or OpenAPI's `nullable: true` for Gemini);
 *      several types become an `anyOf` of one type each.
 *    - Keywords the dialect refuses are removed, and what they meant is written into the node's
 *      description (`format: email`, `pattern: ^[A-Z]{3}$`, `at least 1`, `one of: …`).
 *    - Property names the dialect refuses are renamed (decode.ts maps them back).
 *    - An array without `items` gets a permissive `items`.
 *    - Where the dialect needs a type on every node (OpenAI strict, Gemini `parameters`), a node
 *      that allows any value (a free-form object, a map, a cut recursion, untyped items) is declared
 *      as a string holding JSON text, which decode.ts parses back.
 *    - OpenAI strict: every object closed (`additionalProperties: false`) and every property
 *      required; an optional property becomes nullable, and a `null` from the model for it means
 *      "not given" (dropped before the call), even where the canonical schema takes `null` (strict
 *      mode has no other way to leave a property out).
 * 4. Caps: nesting, total properties, enum values and characters, per the dialect; a cap that
 *    cannot be met by describing instead of declaring leaves the tool out (`SCHEMA_TOO_LARGE`).
 *
 * The argument check always runs against the canonical schema after decoding, so everything that
 * was only described is still enforced, with a REJECTED message naming the field and the rule.
 */
import { numbered } from '../../openapi/naming.js';
import type { JsonObject, JsonValue } from '../../operations/types.js';
import { isObject } from '../../operations/types.js';
import { fnv1a32 } from '../declare.js';
import type { ToolDialect } from './dialect.js';
import { joinDescription, mergeAll, normalizeSchema, typeList } from './normalize.js';
import { mergeShapes, type ObjectShape, type PropShape, type Shape } from './shape.js';

/** Why a tool cannot be declared in a dialect. */
export type LeftOutCode =
  'SCHEMA_TOO_LARGE' | 'UNSUPPORTED_SCHEMA' | 'IRREVERSIBLE' | 'RULE_VIOLATION' | 'TOOL_LIMIT';

export type CompiledSchema =
  | {
      ok: true;
      /** The schema as the dialect takes it; `null` for Gemini `parameters` when there are none. */
      schema: JsonObject | null;
      /** How to map the model's arguments back; null when they are the canonical ones as they are. */
      shape: Shape | null;
    }
  | { ok: false; code: LeftOutCode; reason: string };

interface Profile {
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

const PROFILES: Record<Exclude<ToolDialect, 'GENERIC'>, Profile> = {
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

/** Enum values quoted in a description when the enum itself is not declared. */
const DESCRIBED_ENUM_CHARS = 2_000;
/** The longest part of a description this compiler adds to one node. */
const ADDED_DESCRIPTION_CHARS = 2_400;

const JSON_TEXT_NOTE = 'Give the value as JSON text.';

class LeaveOut extends Error {
  constructor(
    readonly code: LeftOutCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

interface Ctx {
  profile: Profile;
  properties: number;
  enumValues: number;
  chars: number;
}

interface Out {
  schema: JsonObject;
  shape: Shape | null;
  /** The compiled node allows any value (so an anyOf holding it allows any value too). */
  permissive: boolean;
}

/** Compiles `schema` for `dialect` (never GENERIC: that is the canonical schema as it is). */
export function compileSchema(dialect: Exclude<ToolDialect, 'GENERIC'>, schema: JsonObject): CompiledSchema {
  const profile = PROFILES[dialect];
  const normalized = normalizeSchema(schema);
  if (!normalized.ok) return normalized;
  const root = rootObject(normalized.schema);
  if (!root.ok) return root;
  const ctx: Ctx = { profile, properties: 0, enumValues: 0, chars: 0 };
  try {
    const out = compileObject(root.schema, ctx, 1, true);
    if (profile.caps) {
      const { caps } = profile;
      if (ctx.properties > caps.properties)
        throw new LeaveOut(
          'SCHEMA_TOO_LARGE',
          `its input schema has ${ctx.properties} properties, over the limit of ${caps.properties}`,
        );
      if (ctx.chars > caps.chars)
        throw new LeaveOut(
          'SCHEMA_TOO_LARGE',
          `its input schema's property names, enum and const values are ${ctx.chars} characters, over the limit of ${caps.chars}`,
        );
    }
    // Gemini: a function without parameters declares none (an OBJECT needs properties there).
    const none = profile.openApiNullable && Object.keys(out.schema.properties as JsonObject).length === 0;
    return { ok: true, schema: none ? null : out.schema, shape: out.shape };
  } catch (err) {
    if (err instanceof LeaveOut) return { ok: false, code: err.code, reason: err.reason };
    throw err;
  }
}

/**
 * The root as one plain object schema: `anyOf`/`oneOf` options that are objects merged into it.
 * Each option's own required list still holds through the canonical check.
 */
function rootObject(
  schema: JsonObject,
): { ok: true; schema: JsonObject } | { ok: false; code: LeftOutCode; reason: string } {
  const { anyOf, oneOf, ...base } = schema;
  const options = [...listOf(anyOf), ...listOf(oneOf)];
  let merged: JsonObject = base;
  if (options.length > 0) {
    const objects = options.filter((o) => isObjectSchema(o));
    if (objects.length !== options.length && !isObjectSchema(base)) {
      return {
        ok: false,
        code: 'UNSUPPORTED_SCHEMA',
        reason: 'its input schema is a union of non-object schemas',
      };
    }
    const properties: JsonObject = { ...(isObject(base.properties) ? base.properties : {}) };
    for (const o of objects) {
      if (!isObject(o.properties)) continue;
      for (const name in o.properties) {
        const p = o.properties[name] as JsonObject;
        properties[name] = properties[name] === undefined ? p : { anyOf: [properties[name]!, p] };
      }
    }
    const requiredByAll = objects
      .map((o) => new Set(listOf(o.required).filter((r): r is string => typeof r === 'string')))
      .reduce<Set<string> | null>(
        (acc, s) => (acc === null ? s : new Set([...acc].filter((r) => s.has(r)))),
        null,
      );
    const required = [...new Set([...listOf(base.required), ...(requiredByAll ?? [])])];
    const forms = objects
      .map((o, i) => {
        const names = isObject(o.properties) ? Object.keys(o.properties) : [];
        const req = listOf(o.required).filter((r): r is string => typeof r === 'string');
        const what = typeof o.description === 'string' ? o.description : names.join(', ') || 'no fields';
        return `(${i + 1}) ${oneLine(what, 160)}${req.length > 0 ? ` [requires ${req.join(', ')}]` : ''}`;
      })
      .join('; ');
    merged = { ...base, type: 'object', properties };
    if (required.length > 0) merged.required = required;
    else delete merged.required;
    merged.description = joinDescription(
      base.description,
      `The arguments take one of these forms: ${forms}.`,
    );
  }
  if (!isObjectSchema(merged)) {
    return { ok: false, code: 'UNSUPPORTED_SCHEMA', reason: 'its input schema does not describe an object' };
  }
  return { ok: true, schema: merged };
}

function isObjectSchema(s: JsonValue | undefined): s is JsonObject {
  if (!isObject(s)) return false;
  const types = typeList(s.type);
  if (types.length > 0) return types.includes('object');
  return (
    s.properties !== undefined ||
    s.additionalProperties !== undefined ||
    Object.keys(s).length === 0 ||
    onlyAnnotations(s)
  );
}

function onlyAnnotations(s: JsonObject): boolean {
  return Object.keys(s).every((k) => k === 'description' || k === 'title' || k === 'required');
}

function listOf(v: JsonValue | undefined): JsonValue[] {
  return Array.isArray(v) ? v : [];
}

/** One node, any kind. `depth` counts enclosing objects (the root object is 1). */
function compileNode(node: JsonObject, ctx: Ctx, depth: number): Out {
  const options = [...listOf(node.anyOf), ...listOf(node.oneOf)].filter((o): o is JsonObject => isObject(o));
  if (options.length > 0) return compileUnion(node, options, ctx, depth);

  let types = typeList(node.type);
  if (types.length === 0) types = inferredTypes(node);
  const nullable =
    types.includes('null') ||
    node.nullable === true ||
    (Array.isArray(node.enum) && node.enum.includes(null));
  const nonNull = types.filter((t) => t !== 'null');
  if (types.length === 0) return permissive(node, ctx);
  if (nonNull.length === 0) {
    // Only null: the value must be null.
    return finish(node, { type: 'null' }, null, ctx, [], false);
  }
  if (nonNull.length > 1) {
    const { description, ...typed } = node;
    const split = nonNull.map((t): JsonObject => ({ ...typed, type: t }));
    const out = compileUnion(description === undefined ? {} : { description }, split, ctx, depth);
    return nullable ? makeNullable(out, ctx) : out;
  }
  const type = nonNull[0]!;
  let out: Out;
  if (type === 'object') out = compileObject(node, ctx, depth + 1, false);
  else if (type === 'array') out = compileArray(node, ctx, depth);
  else out = compileScalar(node, type, ctx);
  if (nullable && !out.permissive) out = makeNullable(out, ctx);
  return out;
}

function inferredTypes(node: JsonObject): string[] {
  if (isObject(node.properties) || node.additionalProperties !== undefined || Array.isArray(node.required))
    return ['object'];
  if (node.items !== undefined || Array.isArray(node.prefixItems)) return ['array'];
  const values = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : null;
  if (values) return [...new Set(values.map(jsonType))];
  return [];
}

function fitsType(v: JsonValue, type: string): boolean {
  const t = jsonType(v);
  return t === type || (t === 'integer' && type === 'number');
}

function jsonType(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** A node that allows any value; what its keywords meant (`not`, `default`, …) is described. */
function permissive(node: JsonObject, ctx: Ctx, note?: string): Out {
  const notes: string[] = [];
  for (const key in node) {
    if (key === 'description' || key === 'title' || key === 'type' || key === 'nullable') continue;
    const n = keywordNote(key, node[key]!);
    if (n) notes.push(n);
  }
  const description = describe(node, ctx, notes, note);
  if (ctx.profile.typed) {
    const schema: JsonObject = { type: 'string' };
    schema.description = joinDescription(description, `${JSON_TEXT_NOTE} Any JSON value is accepted.`);
    return { schema, shape: { k: 'json' }, permissive: true };
  }
  const schema: JsonObject = {};
  if (description) schema.description = description;
  return { schema, shape: null, permissive: true };
}

/** A value the dialect cannot type (a map, a deep object): a string of JSON text, or as it is. */
function asJsonText(node: JsonObject, ctx: Ctx, what: string): Out {
  const schema: JsonObject = { type: 'string' };
  const description = describe(node, ctx, [], undefined);
  schema.description = joinDescription(description, `${JSON_TEXT_NOTE} (${what})`);
  return { schema, shape: { k: 'json' }, permissive: false };
}

function compileUnion(node: JsonObject, options: JsonObject[], ctx: Ctx, depth: number): Out {
  const { anyOf: _a, oneOf: _o, ...base } = node;
  const structural = Object.keys(base).some(
    (k) => k !== 'description' && k !== 'title' && k !== 'default' && k !== 'nullable',
  );
  const { description: _d, title: _t, ...baseStructure } = base;
  const parts = options.map((o) => (structural ? mergeAll([baseStructure, o]) : o));
  const nullOptions = parts.filter(
    (p) =>
      (typeList(p.type).length === 1 && p.type === 'null') ||
      (Array.isArray(p.type) && p.type.length === 1 && p.type[0] === 'null'),
  );
  const rest = parts.filter((p) => !nullOptions.includes(p));
  const nullable = nullOptions.length > 0 || base.nullable === true;
  if (rest.length === 0) return finish(base, { type: 'null' }, null, ctx, [], false);
  if (rest.length === 1) {
    const only = { ...rest[0]! };
    if (typeof base.description === 'string')
      only.description = joinDescription(
        base.description,
        typeof only.description === 'string' ? only.description : '',
      );
    const out = compileNode(only, ctx, depth);
    return nullable && !out.permissive ? makeNullable(out, ctx) : out;
  }
  const compiled = rest.map((o) => compileNode(o, ctx, depth));
  if (compiled.some((c) => c.permissive || c.shape?.k === 'json')) {
    // One option allows anything, or is JSON text that a string option could be mistaken for.
    return permissive(base, ctx);
  }
  let shape: Shape | null = null;
  for (const c of compiled) {
    const merged = mergeShapes(shape, c.shape);
    if (merged === 'conflict')
      throw new LeaveOut('IRREVERSIBLE', 'two options of one of its unions rename a property differently');
    shape = merged;
  }
  if (shape?.k === 'obj') {
    // An option whose own names need no mapping has no shape: its names must mean themselves.
    for (const c of compiled) {
      if (!isObject(c.schema.properties)) continue;
      for (const declared of Object.keys(c.schema.properties)) {
        const own = c.shape?.k === 'obj' ? (c.shape.props[declared]?.name ?? declared) : declared;
        const merged = shape.props[declared];
        if (merged && merged.name !== own)
          throw new LeaveOut(
            'IRREVERSIBLE',
            'two options of one of its unions rename a property differently',
          );
      }
    }
  }
  const schema: JsonObject = { anyOf: compiled.map((c) => c.schema) };
  const description = describe(base, ctx, [], undefined);
  if (description) schema.description = description;
  const out: Out = { schema, shape, permissive: false };
  return nullable ? makeNullable(out, ctx) : out;
}

/** The same node, also allowing null, in the dialect's way. */
function makeNullable(out: Out, ctx: Ctx): Out {
  const s = out.schema;
  if (ctx.profile.openApiNullable) {
    s.nullable = true;
    return out;
  }
  if (Array.isArray(s.anyOf)) {
    if (!s.anyOf.some((o) => isObject(o) && o.type === 'null')) s.anyOf = [...s.anyOf, { type: 'null' }];
    return out;
  }
  if (Array.isArray(s.enum) && ctx.profile.enumValues !== 'any') {
    // The dialect's enums hold no null: the null goes beside the enum.
    const { description, ...rest } = s;
    const schema: JsonObject = { anyOf: [rest, { type: 'null' }] };
    if (description !== undefined) schema.description = description;
    return { ...out, schema };
  }
  const types = typeList(s.type);
  if (types.length > 0 && !types.includes('null')) s.type = [...types, 'null'];
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
  if (s.const !== undefined) {
    s.enum = [s.const, null];
    delete s.const;
  }
  return out;
}

function compileObject(node: JsonObject, ctx: Ctx, depth: number, root: boolean): Out {
  const { profile } = ctx;
  const props = isObject(node.properties) ? node.properties : {};
  const names = Object.keys(props);
  const additional = node.additionalProperties;
  const open = additional === undefined || additional === true || isObject(additional);
  if (!root && names.length === 0) {
    if (!open) return finish(node, { type: 'object', properties: {} }, null, ctx, [], false);
    // A free-form object or a map: typed dialects cannot say "any keys".
    if (profile.typed) return asJsonText(node, ctx, 'a JSON object');
    if (isObject(additional) && profile.keep.has('additionalProperties')) {
      const values = compileNode(additional, ctx, depth);
      const schema: JsonObject = { type: 'object', additionalProperties: values.schema };
      const shape: Shape | null = values.shape
        ? { k: 'obj', props: Object.create(null) as Record<string, PropShape>, rest: values.shape }
        : null;
      return finish(node, schema, shape, ctx, ['additionalProperties'], false);
    }
    return finish(node, { type: 'object' }, null, ctx, [], false);
  }
  if (!root && depth > profile.maxObjectDepth)
    return asJsonText(node, ctx, `nested deeper than ${profile.maxObjectDepth} levels`);

  const required = new Set(listOf(node.required).filter((r): r is string => typeof r === 'string'));
  const declaredNames = renameAll(names, profile);
  const properties: JsonObject = {};
  const shapeProps = Object.create(null) as Record<string, PropShape>;
  let changed = false;
  names.forEach((name, i) => {
    const declared = declaredNames[i]!;
    const child = props[name];
    let out = compileNode(isObject(child) ? child : {}, ctx, depth);
    let dropNull = false;
    if (profile.strict && !required.has(name)) {
      // Strict mode lists every property as required: the model writes null for one it leaves out.
      // So a null there always means "not given", even where the canonical schema takes null.
      if (!out.permissive || out.shape?.k === 'json') out = makeNullable(out, ctx);
      dropNull = true;
      out.schema.description = joinDescription(out.schema.description, 'Optional: null means not given.');
    }
    properties[declared] = out.schema;
    ctx.properties++;
    ctx.chars += declared.length;
    if (declared !== name || out.shape !== null || dropNull) changed = true;
    shapeProps[declared] = { name, shape: out.shape, dropNull };
  });
  const schema: JsonObject = { type: 'object', properties };
  const declaredRequired = profile.strict
    ? Object.keys(properties)
    : names.flatMap((n, i) => (required.has(n) ? [declaredNames[i]!] : []));
  if (declaredRequired.length > 0 || profile.strict) schema.required = declaredRequired;
  const handled = ['properties', 'required', 'type'];
  let rest: Shape | undefined;
  if (profile.strict) {
    schema.additionalProperties = false;
    handled.push('additionalProperties');
  } else if (additional === false && profile.keep.has('additionalProperties')) {
    schema.additionalProperties = false;
    handled.push('additionalProperties');
  } else if (isObject(additional) && profile.keep.has('additionalProperties')) {
    const values = compileNode(additional, ctx, depth);
    schema.additionalProperties = values.schema;
    if (values.shape) {
      rest = values.shape;
      changed = true;
    }
    handled.push('additionalProperties');
  } else {
    // Open (or a map) where the dialect has no word for it: the declared object lists its
    // properties only; other keys still pass the canonical check.
    handled.push('additionalProperties');
  }
  const shape: ObjectShape | null = changed
    ? { k: 'obj', props: shapeProps, ...(rest ? { rest } : {}) }
    : null;
  return finish(node, schema, shape, ctx, handled, root);
}

function compileArray(node: JsonObject, ctx: Ctx, depth: number): Out {
  const { profile } = ctx;
  const items = node.items;
  if (!isObject(items) || Object.keys(items).every((k) => k === 'description' || k === 'title')) {
    if (profile.typed) return asJsonText(node, ctx, 'a JSON array');
    const any = isObject(items) ? permissive(items, ctx).schema : {};
    return finish(node, { type: 'array', items: any }, null, ctx, ['items', 'prefixItems'], false);
  }
  const inner = compileNode(items, ctx, depth);
  const schema: JsonObject = { type: 'array', items: inner.schema };
  return finish(
    node,
    schema,
    inner.shape ? { k: 'arr', items: inner.shape } : null,
    ctx,
    ['items', 'prefixItems'],
    false,
  );
}

function compileScalar(node: JsonObject, type: string, ctx: Ctx): Out {
  const { profile } = ctx;
  const schema: JsonObject = { type };
  const handled: string[] = [];
  const notes: string[] = [];
  if (Array.isArray(node.enum)) {
    handled.push('enum');
    const values = node.enum.filter((v) => v !== null && typeof v !== 'object' && fitsType(v, type));
    const fits =
      values.length > 0 &&
      values.every((v) =>
        profile.enumValues === 'any'
          ? true
          : profile.enumValues === 'strings'
            ? typeof v === 'string'
            : typeof v === 'string' || typeof v === 'number',
      ) &&
      !(profile.noEmptyEnumValue && values.includes('')) &&
      enumWithinCaps(values, ctx);
    if (fits) {
      schema.enum = values;
      if (profile.caps) {
        ctx.enumValues += values.length;
        ctx.chars += values.reduce<number>((n, v) => n + valueText(v).length, 0);
      }
    } else {
      notes.push(enumNote(node.enum));
    }
  }
  if (node.const !== undefined) {
    handled.push('const');
    const v = node.const;
    if (
      profile.keep.has('const') &&
      (profile.caps === null || ctx.chars + valueText(v).length <= profile.caps.chars)
    ) {
      schema.const = v;
      ctx.chars += valueText(v).length;
    } else if (
      profile.enumValues !== 'any' &&
      (typeof v === 'string'
        ? !(profile.noEmptyEnumValue && v === '')
        : profile.enumValues === 'strings-numbers' && typeof v === 'number')
    ) {
      schema.enum = [v];
    } else notes.push(`must be ${JSON.stringify(v)}`);
  }
  if (typeof node.format === 'string') {
    handled.push('format');
    const allowed = profile.formats?.[type];
    if (profile.keep.has('format') && (allowed === undefined || allowed.has(node.format)))
      schema.format = node.format;
    else notes.push(`format: ${node.format}`);
  }
  return finish(node, schema, null, ctx, handled, false, notes);
}

function enumWithinCaps(values: JsonValue[], ctx: Ctx): boolean {
  const caps = ctx.profile.caps;
  if (!caps) return true;
  if (ctx.enumValues + values.length > caps.enumValues) return false;
  const chars = values.reduce<number>((n, v) => n + valueText(v).length, 0);
  if (
    values.length > caps.bigStringEnum.values &&
    values.every((v) => typeof v === 'string') &&
    chars > caps.bigStringEnum.chars
  )
    return false;
  return ctx.chars + chars <= caps.chars;
}

function enumNote(values: JsonValue[]): string {
  let text = '';
  let shown = 0;
  for (const v of values) {
    const part = JSON.stringify(v);
    if (text.length + part.length > DESCRIBED_ENUM_CHARS) break;
    text += (shown > 0 ? ', ' : '') + part;
    shown++;
  }
  return shown === values.length ? `one of: ${text}` : `one of ${values.length} values: ${text}, …`;
}

/**
 * The node's kept keywords copied onto `schema` (besides those already `handled`), and the
 * dropped ones described. `description` is written last.
 */
function finish(
  node: JsonObject,
  schema: JsonObject,
  shape: Shape | null,
  ctx: Ctx,
  handled: readonly string[],
  root: boolean,
  notes: string[] = [],
): Out {
  const { profile } = ctx;
  for (const key in node) {
    if (handled.includes(key) || key === 'type' || key === 'description' || key === 'nullable') continue;
    if (key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'properties' || key === 'items')
      continue;
    const v = node[key]!;
    if (profile.keep.has(key) && KEPT_VALUE[key]?.(v) !== false) {
      if (key === 'title' && root) continue;
      schema[key] = v;
      continue;
    }
    const note = keywordNote(key, v);
    if (note) notes.push(note);
  }
  const description = describe(node, ctx, notes, undefined);
  if (description) schema.description = description;
  return { schema, shape, permissive: false };
}

/** Values a kept keyword may have; another value is described instead. */
const KEPT_VALUE: Record<string, (v: JsonValue) => boolean> = {
  pattern: (v) => typeof v === 'string',
  title: (v) => typeof v === 'string',
  minimum: (v) => typeof v === 'number',
  maximum: (v) => typeof v === 'number',
  exclusiveMinimum: (v) => typeof v === 'number',
  exclusiveMaximum: (v) => typeof v === 'number',
  multipleOf: (v) => typeof v === 'number' && v > 0,
  minLength: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxLength: (v) => Number.isInteger(v) && (v as number) >= 0,
  minItems: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxItems: (v) => Number.isInteger(v) && (v as number) >= 0,
  minProperties: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxProperties: (v) => Number.isInteger(v) && (v as number) >= 0,
  uniqueItems: (v) => typeof v === 'boolean',
};

/** What a dropped keyword meant, in words; null for keywords that constrain nothing. */
export function keywordNote(key: string, v: JsonValue): string | null {
  const n = typeof v === 'number' ? v : null;
  switch (key) {
    case 'format':
      return typeof v === 'string' ? `format: ${v}` : null;
    case 'pattern':
      return typeof v === 'string' ? `pattern: ${oneLine(v, 300)}` : null;
    case 'minLength':
      return n === null ? null : `at least ${n} character${n === 1 ? '' : 's'}`;
    case 'maxLength':
      return n === null ? null : `at most ${n} character${n === 1 ? '' : 's'}`;
    case 'minimum':
      return n === null ? null : `at least ${n}`;
    case 'maximum':
      return n === null ? null : `at most ${n}`;
    case 'exclusiveMinimum':
      return n === null ? null : `more than ${n}`;
    case 'exclusiveMaximum':
      return n === null ? null : `less than ${n}`;
    case 'multipleOf':
      return n === null ? null : `a multiple of ${n}`;
    case 'minItems':
      return n === null ? null : `at least ${n} item${n === 1 ? '' : 's'}`;
    case 'maxItems':
      return n === null ? null : `at most ${n} item${n === 1 ? '' : 's'}`;
    case 'uniqueItems':
      return v === true ? 'items must be unique' : null;
    case 'minProperties':
      return n === null ? null : `at least ${n} key${n === 1 ? '' : 's'}`;
    case 'maxProperties':
      return n === null ? null : `at most ${n} key${n === 1 ? '' : 's'}`;
    case 'const':
      return `must be ${oneLine(JSON.stringify(v), 300)}`;
    case 'default':
      return `default: ${oneLine(JSON.stringify(v), 200)}`;
    case 'enum':
      return Array.isArray(v) ? enumNote(v) : null;
    case 'not':
      return 'some values are excluded (see the tool description)';
    case 'propertyNames':
      return 'key names are restricted';
    case 'patternProperties':
      return 'keys matching patterns take their own values';
    case 'dependentRequired':
      return 'some fields require others';
    default:
      return null;
  }
}

/** The node's own description with the notes of what was not declared, bounded. */
function describe(node: JsonObject, _ctx: Ctx, notes: string[], extra: string | undefined): string | null {
  let added = notes.join('; ');
  if (extra) added = added ? `${added}; ${extra}` : extra;
  if (added.length > ADDED_DESCRIPTION_CHARS) added = `${added.slice(0, ADDED_DESCRIPTION_CHARS)}…`;
  const own = typeof node.description === 'string' ? node.description : '';
  if (!added) return own || null;
  return joinDescription(own, `(${added})`);
}

/**
 * Declared names for one object's property names: names the dialect takes are kept (first pass),
 * the others are decomposed (`é` → `e`), every other character replaced by `_`, prefixed with
 * `p_` where the name must start with a letter, cut to 64 characters with a hash, and numbered on
 * a clash (second pass).
 */
export function renameAll(
  names: readonly string[],
  profile: Pick<Profile, 'propertyName' | 'propertyNameStart'>,
): string[] {
  const taken = new Set<string>();
  const out: (string | undefined)[] = names.map((n) => {
    if (profile.propertyName.test(n) && !taken.has(n)) {
      taken.add(n);
      return n;
    }
    return undefined;
  });
  names.forEach((n, i) => {
    if (out[i] !== undefined) return;
    let base = n
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(profile.propertyNameStart ? /[^a-zA-Z0-9_]/gu : /[^a-zA-Z0-9_.-]/gu, '_');
    if (base === '') base = 'field';
    if (profile.propertyNameStart && !/^[a-zA-Z_]/.test(base)) base = `p_${base}`;
    if (base.length > 64) base = `${base.slice(0, 55)}_${fnv1a32(n)}`;
    const name = numbered(base, taken);
    taken.add(name);
    out[i] = name;
  });
  return out as string[];
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** An enum or const value as the characters OpenAI counts. */
function valueText(v: JsonValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
