/**
 * What a refresh changed in one operation, as a structured diff (pure), and the one rule that
 * decides which changes are breaking (issue 28).
 *
 * An entry names a `path` (`inputSchema.properties.plan.type`, `annotations.readOnlyHint`,
 * `risk`, `method`), its `before` and `after` JSON values (`null` for absent), a `kind` and
 * `breaking`. `kind` and `breaking` follow from the path and the two values alone
 * ({@link classify}), so two diffs in a row compose by path ({@link composeDiffs}) and the result
 * is classified exactly as a diff of the first state against the last would be.
 *
 * Breaking means (issue 28): a new required argument, a type changed, an enum narrowed, a
 * property removed, the risk raised, or the endpoint moved (method, path, or the base address's
 * origin). Output schemas count types and removed properties only: a new required field or a
 * narrower enum in what a tool returns breaks no caller.
 *
 * Values are bounded ({@link MAX_VALUE_CHARS} characters of JSON each, {@link MAX_ENTRIES}
 * entries per diff); scrubbing secrets is the caller's, on the stored diff.
 */
import { isRiskRaise } from './risk.js';
import { type JsonObject, type JsonValue, type OpenApiBinding, type Risk } from './types.js';

export const CHANGE_KINDS = [
  /** A title or description, at the top or inside a schema. */
  'TEXT_CHANGED',
  'PROPERTY_ADDED',
  'PROPERTY_REMOVED',
  'TYPE_CHANGED',
  /** A property became required or optional (an absent property counts as not required). */
  'REQUIRED_CHANGED',
  'ENUM_VALUES_ADDED',
  /** Some allowed values are gone (or an enum now limits a property that took any value). */
  'ENUM_VALUES_REMOVED',
  /** minimum, maxLength, pattern, format and the like. */
  'CONSTRAINT_CHANGED',
  /** Any other schema keyword, or a whole schema that is not an object on one side. */
  'SCHEMA_CHANGED',
  'ANNOTATION_CHANGED',
  'RISK_CHANGED',
  /** OpenAPI: the method, the path template or the base address. */
  'ENDPOINT_CHANGED',
  /** The diff was cut at MAX_ENTRIES: this entry stands for the rest (`after` says how many). */
  'MORE',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** {@link ChangeKind} as an enum-like object, for the GraphQL enum. */
export const ChangeKinds = Object.fromEntries(CHANGE_KINDS.map((k) => [k, k])) as {
  readonly [K in ChangeKind]: K;
};

export interface DiffEntry {
  path: string;
  kind: ChangeKind;
  before: JsonValue;
  after: JsonValue;
  breaking: boolean;
}

/** The fields of an operation a diff compares. */
export interface DiffSubject {
  title: string | null;
  description: string | null;
  inputSchema: JsonObject;
  outputSchema?: JsonObject | null;
  annotations: JsonObject | null;
  risk: Risk;
  binding: OpenApiBinding | null;
}

/** Each value's JSON is cut to this many characters (a longer value becomes a cut string). */
export const MAX_VALUE_CHARS = 2_000;
/** At most this many entries; the rest are one `MORE` entry. */
export const MAX_ENTRIES = 200;
/** Schemas are compared property by property this deep; below, a subtree is one entry. */
const MAX_DEPTH = 6;
const MORE_PATH = '…';

const CONSTRAINTS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'const',
  'additionalProperties',
]);
const TEXT_KEYWORDS = new Set(['title', 'description']);
/** Keywords compared on their own terms, never as plain keywords. */
const STRUCTURE = new Set(['properties', 'required', 'items', 'type', 'enum']);

// ---- paths ------------------------------------------------------------------------------------

const PLAIN_SEGMENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Segments as one path: `a.b["odd name"].c`. */
export function formatPath(segments: readonly string[]): string {
  return segments
    .map((s, i) => (PLAIN_SEGMENT.test(s) ? (i === 0 ? s : `.${s}`) : `[${JSON.stringify(s)}]`))
    .join('');
}

/** The inverse of {@link formatPath}; `null` for a string it did not make. */
export function parsePath(path: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '[') {
      // A JSON string up to the first `"]` that is not escaped.
      let j = i + 2;
      while (j < path.length && !(path[j] === '"' && path[j + 1] === ']' && path[j - 1] !== '\\')) j++;
      try {
        out.push(JSON.parse(path.slice(i + 1, j + 1)) as string);
      } catch {
        return null;
      }
      i = j + 2;
      continue;
    }
    if (path[i] === '.') {
      if (out.length === 0) return null;
      i++;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    if (j === i) return null;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

interface SchemaPlace {
  root: 'inputSchema' | 'outputSchema';
  /** The keyword after the last property or `items` step; null when the path names a property or the root. */
  keyword: string | null;
  /** The path names a property itself (`…properties.<name>`). */
  property: boolean;
}

/** Where in a schema a path points: walked from the root in (`properties`, name) and `items` steps. */
function schemaPlace(segments: readonly string[]): SchemaPlace | null {
  const root = segments[0];
  if (root !== 'inputSchema' && root !== 'outputSchema') return null;
  let i = 1;
  let property = false;
  while (i < segments.length) {
    if (segments[i] === 'properties' && i + 1 < segments.length) {
      i += 2;
      property = true;
    } else if (segments[i] === 'items') {
      i += 1;
      property = false;
    } else {
      return i === segments.length - 1 ? { root, keyword: segments[i]!, property: false } : null;
    }
  }
  return { root, keyword: null, property };
}

// ---- the rule ---------------------------------------------------------------------------------

function originOf(value: JsonValue): string | null {
  if (typeof value !== 'string') return null;
  try {
    return new URL(value).origin;
  } catch {
    return value;
  }
}

/** Values that a bound turned into text are compared as unknown: the rule then assumes the worst. */
function enumRemoves(before: JsonValue, after: JsonValue): boolean | null {
  if (after === null) return false; // no enum now: anything goes
  if (!Array.isArray(after)) return null;
  if (before === null) return true; // an enum now limits what was free
  if (!Array.isArray(before)) return null;
  const kept = new Set(after.map((v) => JSON.stringify(v)));
  return before.some((v) => !kept.has(JSON.stringify(v)));
}

/**
 * The kind of a change and whether it is breaking, from its path and its two values alone. This
 * is the one place that decides `breaking` (issue 28); see the module comment for the rule.
 */
export function classify(
  path: string,
  before: JsonValue,
  after: JsonValue,
): Omit<DiffEntry, 'path' | 'before' | 'after'> {
  if (path === MORE_PATH) return { kind: 'MORE', breaking: after !== null && isMoreBreaking(after) };
  const segments = parsePath(path) ?? [path];
  const head = segments[0];
  if (segments.length === 1) {
    switch (head) {
      case 'title':
      case 'description':
        return { kind: 'TEXT_CHANGED', breaking: false };
      case 'risk':
        return {
          kind: 'RISK_CHANGED',
          breaking: isRisk(before) && isRisk(after) ? isRiskRaise(before, after) : true,
        };
      case 'method':
      case 'path':
        return { kind: 'ENDPOINT_CHANGED', breaking: true };
      case 'baseUrl':
        return { kind: 'ENDPOINT_CHANGED', breaking: originOf(before) !== originOf(after) };
    }
  }
  if (head === 'annotations') return { kind: 'ANNOTATION_CHANGED', breaking: false };
  const place = schemaPlace(segments);
  if (place === null) return { kind: 'SCHEMA_CHANGED', breaking: false };
  const input = place.root === 'inputSchema';
  if (place.property) {
    if (before === null) return { kind: 'PROPERTY_ADDED', breaking: false };
    if (after === null) return { kind: 'PROPERTY_REMOVED', breaking: true };
    return { kind: 'SCHEMA_CHANGED', breaking: false };
  }
  switch (place.keyword) {
    case null:
      return { kind: 'SCHEMA_CHANGED', breaking: input };
    case 'type':
      return { kind: 'TYPE_CHANGED', breaking: true };
    case 'required':
      return { kind: 'REQUIRED_CHANGED', breaking: input && after === true };
    case 'enum': {
      const removes = enumRemoves(before, after);
      return {
        kind: removes === false ? 'ENUM_VALUES_ADDED' : 'ENUM_VALUES_REMOVED',
        breaking: input && removes !== false,
      };
    }
  }
  if (TEXT_KEYWORDS.has(place.keyword)) return { kind: 'TEXT_CHANGED', breaking: false };
  if (CONSTRAINTS.has(place.keyword)) return { kind: 'CONSTRAINT_CHANGED', breaking: false };
  return { kind: 'SCHEMA_CHANGED', breaking: false };
}

function isRisk(v: JsonValue): v is Risk {
  return v === 'READ' || v === 'WRITE';
}

function isMoreBreaking(after: JsonValue): boolean {
  return typeof after === 'object' && after !== null && !Array.isArray(after) && after.breaking === true;
}

// ---- the diff ---------------------------------------------------------------------------------

/** A value as stored in an entry: its JSON cut to MAX_VALUE_CHARS (then a string). */
export function boundValue(value: JsonValue | undefined): JsonValue {
  if (value === undefined) return null;
  if (typeof value === 'string') {
    return value.length <= MAX_VALUE_CHARS
      ? value
      : `${value.slice(0, MAX_VALUE_CHARS)}… (${value.length} characters)`;
  }
  if (typeof value !== 'object' || value === null) return value;
  const json = JSON.stringify(value);
  return json.length <= MAX_VALUE_CHARS
    ? value
    : `${json.slice(0, MAX_VALUE_CHARS)}… (${json.length} characters of JSON)`;
}

function entry(
  segments: readonly string[],
  before: JsonValue | undefined,
  after: JsonValue | undefined,
): DiffEntry {
  const path = formatPath(segments);
  const b = boundValue(before);
  const a = boundValue(after);
  return { path, before: b, after: a, ...classify(path, b, a) };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON deep equality: key order ignored, an `undefined` property counts as absent. The same as
 * reconcile.ts's `jsonEqual`, which this module cannot import (reconcile imports it).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    return a.length === y.length && a.every((v, i) => sameJson(v, y[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) {
    if (x[k] === undefined && y[k] === undefined) continue;
    if (!sameJson(x[k], y[k])) return false;
  }
  return true;
}

function requiredSet(schema: JsonObject): Set<string> {
  const r = schema.required;
  return new Set(Array.isArray(r) ? r.filter((n): n is string => typeof n === 'string') : []);
}

/** Schemas compared keyword by keyword, properties one by one (names in the order first seen). */
function diffSchema(
  out: DiffEntry[],
  segments: string[],
  before: JsonValue | undefined,
  after: JsonValue | undefined,
  depth: number,
): void {
  if (sameJson(before, after)) return;
  if (!isObject(before) || !isObject(after) || depth >= MAX_DEPTH) {
    out.push(entry(segments, before, after));
    return;
  }
  for (const keyword of ['type', 'enum'] as const) {
    if (!sameJson(before[keyword], after[keyword]))
      out.push(entry([...segments, keyword], before[keyword], after[keyword]));
  }
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    if (STRUCTURE.has(key) || sameJson(before[key], after[key])) continue;
    out.push(entry([...segments, key], before[key], after[key]));
  }
  const props = (s: JsonObject) => (isObject(s.properties) ? s.properties : {});
  const beforeProps = props(before);
  const afterProps = props(after);
  const beforeRequired = requiredSet(before);
  const afterRequired = requiredSet(after);
  const names = new Set([...Object.keys(beforeProps), ...Object.keys(afterProps)]);
  for (const name of names) {
    const at = [...segments, 'properties', name];
    const b = beforeProps[name];
    const a = afterProps[name];
    if (b === undefined || a === undefined) out.push(entry(at, b, a));
    else diffSchema(out, at, b, a, depth + 1);
    const wasRequired = b !== undefined && beforeRequired.has(name);
    const isRequired = a !== undefined && afterRequired.has(name);
    if (wasRequired !== isRequired) out.push(entry([...at, 'required'], wasRequired, isRequired));
  }
  if (!sameJson(before.items, after.items))
    diffSchema(out, [...segments, 'items'], before.items, after.items, depth + 1);
}

/** The whole diff of one operation, in a fixed order: texts, endpoint, risk, annotations, schemas. */
export function diffOperation(before: DiffSubject, after: DiffSubject): DiffEntry[] {
  const out: DiffEntry[] = [];
  const top = (name: string, b: JsonValue | undefined, a: JsonValue | undefined) => {
    if (!sameJson(b ?? null, a ?? null)) out.push(entry([name], b, a));
  };
  top('title', before.title, after.title);
  top('description', before.description, after.description);
  top('method', before.binding?.method ?? null, after.binding?.method ?? null);
  top('path', before.binding?.path ?? null, after.binding?.path ?? null);
  top('baseUrl', before.binding?.baseUrl ?? null, after.binding?.baseUrl ?? null);
  top('risk', before.risk, after.risk);
  const ba = before.annotations ?? {};
  const aa = after.annotations ?? {};
  for (const key of new Set([...Object.keys(ba), ...Object.keys(aa)])) {
    if (!sameJson(ba[key], aa[key])) out.push(entry(['annotations', key], ba[key], aa[key]));
  }
  diffSchema(out, ['inputSchema'], before.inputSchema, after.inputSchema, 0);
  diffSchema(out, ['outputSchema'], before.outputSchema ?? null, after.outputSchema ?? null, 0);
  return capEntries(out);
}

/** At most MAX_ENTRIES: the rest become one `MORE` entry saying how many, and whether any breaks. */
function capEntries(entries: DiffEntry[]): DiffEntry[] {
  if (entries.length <= MAX_ENTRIES) return entries;
  const kept = entries.slice(0, MAX_ENTRIES - 1);
  const rest = entries.slice(MAX_ENTRIES - 1);
  const after = { entries: rest.length, breaking: rest.some((e) => e.breaking) };
  return [...kept, { path: MORE_PATH, before: null, after, ...classify(MORE_PATH, null, after) }];
}

/**
 * Two diffs in a row as one: per path, the first `before` and the last `after`, classified again;
 * a path whose value came back is dropped. Paths keep the order they first appeared in.
 */
export function composeDiffs(older: readonly DiffEntry[], newer: readonly DiffEntry[]): DiffEntry[] {
  const byPath = new Map<string, DiffEntry>();
  for (const e of older) byPath.set(e.path, e);
  for (const e of newer) {
    const first = byPath.get(e.path);
    if (!first) {
      byPath.set(e.path, e);
      continue;
    }
    if (e.path === MORE_PATH) {
      const count = (v: JsonValue) => (isObject(v) && typeof v.entries === 'number' ? v.entries : 0);
      const after = { entries: count(first.after) + count(e.after), breaking: first.breaking || e.breaking };
      byPath.set(e.path, { ...e, after, ...classify(MORE_PATH, null, after) });
      continue;
    }
    byPath.set(e.path, {
      path: e.path,
      before: first.before,
      after: e.after,
      ...classify(e.path, first.before, e.after),
    });
  }
  return capEntries([...byPath.values()].filter((e) => e.path === MORE_PATH || !sameJson(e.before, e.after)));
}
