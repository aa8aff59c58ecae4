/**
 * Schema keywords: which are copied to a converted schema, and how each value is checked and
 * bounded on the way (numeric bounds, enums, patterns, JSON values). Pure; `Converter` (schema.ts)
 * is the sink that records diagnostics.
 */
import type { JsonObject, JsonValue } from '../operations/types.js';
import { type Obj, dict, isObj } from './document.js';

/** What copying keywords needs of the converter: its diagnostics, descriptions and enum limit. */
export interface KeywordSink {
  /** The argument check's converter copies no description. */
  readonly check: boolean;
  readonly limits: { readonly maxEnumValues: number };
  diag(message: string): void;
  line(text: string): string;
}

export const JSON_TYPES: ReadonlySet<string> = new Set([
  'string',
  'number',
  'integer',
  'boolean',
  'array',
  'object',
  'null',
]);

/** Keywords copied when their value is a non-negative integer. */
export const COUNT_KEYWORDS = [
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;

/** Keywords copied from a schema to its converted form. */
const KEYWORDS = [
  'description',
  'format',
  'enum',
  'const',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'uniqueItems',
  ...COUNT_KEYWORDS,
] as const;
const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);

/** The copied keywords of the sources, the first source that has one winning, in one pass over their keys. */
function gatherKeywords(sources: readonly Obj[]): Partial<Record<(typeof KEYWORDS)[number], unknown>> {
  const found: Partial<Record<string, unknown>> = {};
  for (const source of sources) {
    for (const key of Object.keys(source)) {
      if (KEYWORD_SET.has(key) && found[key] === undefined) found[key] = source[key];
    }
  }
  return found;
}

/**
 * A numeric bound, or `undefined`. A bound beyond ±2^53 (OpenAI's `seed`:
 * `maximum: 9223372036854775807`) was already rounded when the document was parsed, so it may sit
 * on the wrong side of the declared limit: it is dropped, never rounded.
 */
export function bound(c: KeywordSink, value: unknown, keyword: string): number | undefined {
  const n = finite(value);
  if (n === undefined || Math.abs(n) <= Number.MAX_SAFE_INTEGER) return n;
  c.diag(`a ${keyword} beyond ±2^53 cannot be represented exactly; it was dropped`);
  return undefined;
}

export function copyKeywords(c: KeywordSink, sources: readonly Obj[], schema: JsonObject): void {
  const kw = gatherKeywords(sources);
  if (typeof kw.description === 'string' && !c.check) {
    const line = c.line(kw.description);
    if (line.length > 0) schema.description = line;
  }
  if (typeof kw.format === 'string') schema.format = kw.format;
  if (Array.isArray(kw.enum)) {
    const values = enumValues(c, kw.enum);
    if (values.length > 0) schema.enum = values;
  }
  if (kw.const !== undefined) {
    const json = toJson(kw.const);
    if (json !== undefined) schema.const = json;
  }
  if (kw.default !== undefined) {
    const json = toJson(kw.default);
    if (json !== undefined) schema.default = json;
  }
  const minimum = bound(c, kw.minimum, 'minimum');
  const maximum = bound(c, kw.maximum, 'maximum');
  // OpenAPI 3.0 and Swagger 2 write exclusive bounds as booleans beside the bound.
  if (kw.exclusiveMinimum === true && minimum !== undefined) schema.exclusiveMinimum = minimum;
  else {
    if (minimum !== undefined) schema.minimum = minimum;
    const value = bound(c, kw.exclusiveMinimum, 'exclusiveMinimum');
    if (value !== undefined) schema.exclusiveMinimum = value;
  }
  if (kw.exclusiveMaximum === true && maximum !== undefined) schema.exclusiveMaximum = maximum;
  else {
    if (maximum !== undefined) schema.maximum = maximum;
    const value = bound(c, kw.exclusiveMaximum, 'exclusiveMaximum');
    if (value !== undefined) schema.exclusiveMaximum = value;
  }
  const multipleOf = finite(kw.multipleOf);
  if (multipleOf !== undefined && multipleOf > 0) schema.multipleOf = multipleOf;
  for (const key of COUNT_KEYWORDS) {
    const value = kw[key];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) schema[key] = value;
  }
  if (kw.uniqueItems === true) schema.uniqueItems = true;
  if (typeof kw.pattern === 'string') {
    if (isValidPattern(kw.pattern)) schema.pattern = kw.pattern;
    else c.diag(`pattern ${JSON.stringify(kw.pattern)} is not a valid regular expression; left out`);
  }
}

/** The first `maxEnumValues` distinct JSON values. */
export function enumValues(c: KeywordSink, enumValues: readonly unknown[]): JsonValue[] {
  const values: JsonValue[] = [];
  const seen = new Set<unknown>();
  for (const value of enumValues) {
    const json = toJson(value);
    if (json === undefined) continue;
    const id = typeof json === 'object' && json !== null ? JSON.stringify(json) : json;
    if (seen.has(id)) continue;
    seen.add(id);
    values.push(json);
    if (values.length >= c.limits.maxEnumValues) break;
  }
  if (enumValues.length > c.limits.maxEnumValues) {
    c.diag(`an enum with ${enumValues.length} values kept its first ${c.limits.maxEnumValues}`);
  }
  return values;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function isValidPattern(pattern: string): boolean {
  try {
    // Validators of JSON Schema compile patterns as Unicode regular expressions.
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

const MAX_JSON_VALUE_NODES = 1_000;
const MAX_JSON_VALUE_DEPTH = 16;

/** A bounded copy of an enum, const or default value as plain JSON; `undefined` when it is not JSON. */
function toJson(value: unknown): JsonValue | undefined {
  let budget = MAX_JSON_VALUE_NODES;
  const copy = (v: unknown, depth: number): JsonValue | undefined => {
    if (--budget < 0 || depth > MAX_JSON_VALUE_DEPTH) return undefined;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
    if (Array.isArray(v)) {
      const out: JsonValue[] = [];
      for (const item of v) {
        const c = copy(item, depth + 1);
        if (c === undefined) return undefined;
        out.push(c);
      }
      return out;
    }
    if (isObj(v)) {
      const out = dict<JsonValue>();
      for (const key of Object.keys(v)) {
        const c = copy(v[key], depth + 1);
        if (c === undefined) return undefined;
        out[key] = c;
      }
      return out;
    }
    return undefined;
  };
  return copy(value, 0);
}
