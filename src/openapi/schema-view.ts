/**
 * Schema views: a schema with `$ref`, `allOf`, `oneOf` and `anyOf` flattened into one level, and
 * how two views merge (the `allOf` rule) or multiply (the options of unions, for the check). Pure;
 * `Converter` (schema.ts) builds them.
 */
import { type Obj, isObj, own } from './document.js';

/** Views of one schema per option of its unions, past which a check leaves the schema free. */
export const MAX_CHECK_VARIANTS = 16;

/**
 * A schema with `$ref`, `allOf`, `oneOf` and `anyOf` flattened into one level. Children stay raw
 * (unresolved) so that each is converted at its own level. Collections are `null` until a member
 * fills them: most schemas are leaves, and these are built once per node of large documents.
 */
export interface View {
  /** `null` when no member constrains the type. */
  types: string[] | null;
  properties: Map<string, unknown[]> | null;
  required: Set<string> | null;
  items: unknown[] | null;
  additional: unknown[] | null;
  /** `additionalProperties: false`: an object with no listed properties is then the empty object. */
  closed: boolean;
  readOnly: boolean;
  /**
   * `null` is a value too: a `null` branch of `oneOf`/`anyOf` (OpenAPI 3.1, pydantic's `Optional`),
   * or 3.0's `nullable: true` on a node without its own `type` (beside `allOf`/`$ref`). Applied
   * after the members' types are merged, so it survives their intersection.
   */
  nullable: boolean;
  /** A union with several options was narrowed to its first: the check accepts more than this. */
  narrowed: boolean;
  /** Where keywords come from; the first that has one wins: the node, its reference, its members. */
  sources: Obj[];
}

export function emptyView(): View {
  return {
    types: null,
    properties: null,
    required: null,
    items: null,
    additional: null,
    closed: false,
    readOnly: false,
    nullable: false,
    narrowed: false,
    sources: [],
  };
}

/** A copy of a view that can be merged into without changing the original (which may be memoised). */
export function cloneView(v: View): View {
  return {
    types: v.types === null ? null : [...v.types],
    properties: v.properties === null ? null : new Map([...v.properties].map(([k, s]) => [k, [...s]])),
    required: v.required === null ? null : new Set(v.required),
    items: v.items === null ? null : [...v.items],
    additional: v.additional === null ? null : [...v.additional],
    closed: v.closed,
    readOnly: v.readOnly,
    nullable: v.nullable,
    narrowed: v.narrowed,
    sources: [...v.sources],
  };
}

/**
 * A union option that only admits `null` (`{type: 'null'}`, `{type: ['null']}`, `{enum: [null]}`,
 * `{const: null}`): it makes the union nullable rather than being an option of its own.
 */
export function isNullOption(option: unknown): boolean {
  if (!isObj(option) || Object.hasOwn(option, '$ref')) return false;
  const type = own(option, 'type');
  if (type === 'null') return true;
  if (Array.isArray(type)) return type.length === 1 && type[0] === 'null';
  const values = own(option, 'enum');
  if (Array.isArray(values)) return values.length === 1 && values[0] === null && type === undefined;
  return type === undefined && Object.hasOwn(option, 'const') && own(option, 'const') === null;
}

/**
 * The options of a `oneOf`/`anyOf` without its `null` branches, and whether it had one. A union of
 * `null` alone is kept as it is.
 */
export function unionOptions(value: unknown): { options: unknown[]; nullable: boolean } | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const options = value.filter((o) => !isNullOption(o));
  if (options.length === 0) return { options: [value[0]], nullable: false };
  return { options, nullable: options.length < value.length };
}

/** Merges `from` (which may be memoised and is not changed) into `into` (a view being built). */
export function mergeInto(into: View, from: View): void {
  if (from.types !== null) {
    if (into.types === null) into.types = [...from.types];
    else {
      const other = from.types;
      const both = into.types.filter(
        (t) => other.includes(t) || (t === 'number' && other.includes('integer')),
      );
      // Disagreeing types cannot both hold; leave the type free rather than refuse every value.
      into.types = both.length > 0 ? both : null;
    }
  }
  if (from.properties !== null) {
    into.properties ??= new Map();
    for (const [name, schemas] of from.properties) {
      const existing = into.properties.get(name);
      if (existing === undefined) into.properties.set(name, [...schemas]);
      else for (const s of schemas) if (!existing.includes(s)) existing.push(s);
    }
  }
  if (from.required !== null) {
    into.required ??= new Set();
    for (const name of from.required) into.required.add(name);
  }
  if (from.items !== null) {
    into.items ??= [];
    for (const s of from.items) if (!into.items.includes(s)) into.items.push(s);
  }
  if (from.additional !== null) {
    into.additional ??= [];
    for (const s of from.additional) if (!into.additional.includes(s)) into.additional.push(s);
  }
  into.closed ||= from.closed;
  into.readOnly ||= from.readOnly;
  into.nullable ||= from.nullable;
  into.narrowed ||= from.narrowed;
  for (const source of from.sources) into.sources.push(source);
}

/**
 * Every view of `a` merged with every view of `b` (`a`'s views are fresh and may be changed; `b`'s
 * may be memoised and are not). Past `MAX_CHECK_VARIANTS` combinations: one free view.
 */
export function product(a: View[], b: readonly View[]): View[] {
  if (b.length === 0) return a;
  if (a.length * b.length > MAX_CHECK_VARIANTS) return [emptyView()];
  if (b.length === 1) {
    for (const v of a) mergeInto(v, b[0] as View);
    return a;
  }
  const out: View[] = [];
  for (const v of a) {
    for (const w of b) {
      const merged = cloneView(v);
      mergeInto(merged, w);
      out.push(merged);
    }
  }
  return out;
}
