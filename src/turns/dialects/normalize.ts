/**
 * The first step of compiling a tool's input schema for a model API (pure, issue 26): local `$ref`s
 * inlined, `allOf` merged, boolean schemas made objects, and the bookkeeping keywords (`$defs`,
 * `definitions`, `$schema`, `$id`, `$anchor`, `$comment`) dropped. What comes out is one
 * self-contained schema tree every dialect's step can walk without resolving anything.
 *
 * Bounds (a tool server chooses the schema):
 * - A `$ref` already being expanded {@link RECURSION_DEPTH} times on the current path (a recursive
 *   model) is cut into a permissive schema `{}` whose description says so. The argument check
 *   still runs against the canonical schema, so the cut only widens what the model is told.
 * - A remote or unresolvable `$ref` becomes a permissive schema too.
 * - The output is at most {@link MAX_NORMALIZED_NODES} schema nodes: past that the tool cannot be
 *   declared (`SCHEMA_TOO_LARGE`), never a huge request.
 */
import type { JsonObject, JsonValue } from '../../operations/types.js';
import { isObject } from '../../operations/types.js';

/** How many times one `$ref` may be expanded inside itself before it is cut (a recursive model). */
export const RECURSION_DEPTH = 2;
/** Schema nodes after inlining, for one tool. */
export const MAX_NORMALIZED_NODES = 20_000;
/** Nesting of schema nodes followed while inlining; deeper nodes are cut like a cycle. */
const MAX_WALK_DEPTH = 64;

const DROPPED = new Set(['$defs', 'definitions', '$schema', '$id', '$anchor', '$dynamicAnchor', '$comment']);

/** Keywords whose value is one subschema. */
export const SUBSCHEMA_KEYWORDS = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
] as const;
/** Keywords whose value is a list of subschemas. */
export const SUBSCHEMA_LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
/** Keywords whose value maps names to subschemas. */
export const SUBSCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas'] as const;

/** Which of the three lists above a keyword is in (one lookup per key of every node). */
const SUBSCHEMA_KIND = new Map<string, 'one' | 'list' | 'map'>([
  ...SUBSCHEMA_KEYWORDS.map((k) => [k, 'one'] as const),
  ...SUBSCHEMA_LIST_KEYWORDS.map((k) => [k, 'list'] as const),
  ...SUBSCHEMA_MAP_KEYWORDS.map((k) => [k, 'map'] as const),
]);

export type Normalized =
  { ok: true; schema: JsonObject } | { ok: false; code: 'SCHEMA_TOO_LARGE'; reason: string };

class TooLarge extends Error {}

/** Inlines, merges and cleans one input schema; see the module comment. */
export function normalizeSchema(root: JsonObject): Normalized {
  let nodes = 0;
  const expanding: string[] = [];

  const walk = (value: JsonValue | undefined, depth: number): JsonObject => {
    if (++nodes > MAX_NORMALIZED_NODES) throw new TooLarge();
    if (value === true || value === undefined) return {};
    if (value === false) return { not: {} };
    if (!isObject(value)) return {};
    if (depth > MAX_WALK_DEPTH) return { description: 'Nested too deep to describe: any value.' };
    let node: JsonObject = value;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const { $ref: _ref, ...siblings } = node;
      const target = ref.startsWith('#') ? pointer(root, ref) : undefined;
      const times = expanding.filter((r) => r === ref).length;
      if (target === undefined || times >= RECURSION_DEPTH) {
        const why =
          target === undefined
            ? `a reference this service does not follow (${ref.slice(0, 80)})`
            : 'recursive';
        const out = walk(siblings, depth);
        out.description = joinDescription(out.description, `Any value (${why}).`);
        return out;
      }
      expanding.push(ref);
      try {
        const resolved = walk(target, depth);
        const rest = walk(siblings, depth);
        // Siblings of $ref apply beside it (2019-09 and later); a description beside it wins.
        return mergeAll([resolved, rest]);
      } finally {
        expanding.pop();
      }
    }
    node = normalizeKeys(node, depth, walk);
    if (Array.isArray(node.allOf)) {
      const { allOf, ...rest } = node;
      return mergeAll([rest, ...(allOf as JsonObject[])]);
    }
    return node;
  };

  try {
    return { ok: true, schema: walk(root, 0) };
  } catch (err) {
    if (!(err instanceof TooLarge)) throw err;
    return {
      ok: false,
      code: 'SCHEMA_TOO_LARGE',
      reason: `its input schema has more than ${MAX_NORMALIZED_NODES} schema nodes once its $refs are inlined`,
    };
  }
}

type Walk = (value: JsonValue | undefined, depth: number) => JsonObject;

/**
 * The node with its subschemas walked one level deeper and its bookkeeping keywords dropped. A
 * node whose subschemas all come back as they are, with nothing to drop, is the node itself:
 * shared, not copied, since no step after this one changes a node it reads
 * (test/unit/turns/compile-frozen.test.ts compiles deep-frozen schemas). The copy is made at the first key that differs.
 */
function normalizeKeys(node: JsonObject, depth: number, walk: Walk): JsonObject {
  let out: JsonObject | null = null;
  for (const key in node) {
    const v = node[key]!;
    const kind = SUBSCHEMA_KIND.get(key);
    let next: JsonValue | undefined;
    if (DROPPED.has(key)) next = undefined;
    else if (kind === 'one')
      // `additionalProperties: false` (and `true`) mean what they say: kept as they are.
      next =
        typeof v === 'boolean' ? v : Array.isArray(v) ? walkList(v, depth + 1, walk) : walk(v, depth + 1);
    else if (kind === 'list') next = Array.isArray(v) ? walkList(v, depth + 1, walk) : [];
    else if (kind === 'map') next = isObject(v) ? walkMap(v, depth + 1, walk) : {};
    else next = v;
    if (out === null && next !== v) out = copyBefore(node, key);
    if (out !== null && next !== undefined) out[key] = next;
  }
  return out ?? node;
}

/** The subschemas of a list keyword walked; the list itself when none changed. */
function walkList(list: JsonValue[], depth: number, walk: Walk): JsonValue[] {
  let out: JsonValue[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const next = walk(list[i], depth);
    if (out === null && next !== list[i]) out = list.slice(0, i);
    if (out !== null) out.push(next);
  }
  return out ?? list;
}

/** The subschemas of a map keyword walked; the map itself when none changed. */
function walkMap(map: JsonObject, depth: number, walk: Walk): JsonObject {
  let out: JsonObject | null = null;
  for (const name in map) {
    const next = walk(map[name], depth);
    if (out === null && next !== map[name]) out = copyBefore(map, name);
    if (out !== null) out[name] = next;
  }
  return out ?? map;
}

/** A copy of the object's entries that come before `key` (all of them as they are). */
function copyBefore(obj: JsonObject, key: string): JsonObject {
  const out: JsonObject = {};
  for (const k in obj) {
    if (k === key) break;
    out[k] = obj[k]!;
  }
  return out;
}

/** A local JSON pointer (`#/$defs/Item`, `#`), or undefined when it leads nowhere. */
function pointer(root: JsonObject, ref: string): JsonValue | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: JsonValue | undefined = root;
  for (const raw of ref.slice(2).split('/')) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node) && Object.hasOwn(node, part)) node = node[part];
    else return undefined;
  }
  return node;
}

/**
 * Merges schemas that must all hold (`allOf`, `$ref` with siblings) into one: properties and
 * `required` are united (a property in several is merged the same way), `type`s intersected,
 * bounds tightened; for any other keyword the first schema that has it wins.
 */
export function mergeAll(schemas: readonly JsonObject[]): JsonObject {
  const out: JsonObject = {};
  for (const s of schemas) {
    for (const key in s) {
      const v = s[key]!;
      const had = out[key];
      if (had === undefined) {
        out[key] = key === 'properties' && isObject(v) ? { ...v } : v;
        continue;
      }
      switch (key) {
        case 'properties': {
          const props = had as JsonObject;
          if (!isObject(v)) break;
          for (const name in v) {
            const p = v[name] as JsonObject;
            props[name] = props[name] === undefined ? p : mergeAll([props[name] as JsonObject, p]);
          }
          break;
        }
        case 'required':
          if (Array.isArray(had) && Array.isArray(v)) out.required = [...new Set([...had, ...v])];
          break;
        case 'type': {
          const a = typeList(had);
          const b = typeList(v);
          const both = a.filter((t) => b.includes(t) || (t === 'integer' && b.includes('number')));
          const more = b.filter((t) => t === 'integer' && a.includes('number') && !both.includes(t));
          const types = [...both, ...more];
          // Contradictory types cannot all hold; the first schema's type is declared.
          if (types.length > 0) out.type = types.length === 1 ? types[0]! : types;
          break;
        }
        case 'description':
          if (typeof had === 'string' && typeof v === 'string' && !had.includes(v)) {
            out.description = joinDescription(had, v);
          }
          break;
        case 'minimum':
        case 'minLength':
        case 'minItems':
        case 'minProperties':
        case 'exclusiveMinimum':
          if (typeof had === 'number' && typeof v === 'number') out[key] = Math.max(had, v);
          break;
        case 'maximum':
        case 'maxLength':
        case 'maxItems':
        case 'maxProperties':
        case 'exclusiveMaximum':
          if (typeof had === 'number' && typeof v === 'number') out[key] = Math.min(had, v);
          break;
        case 'additionalProperties':
          // Either one closing the object closes it.
          if (had !== false) out.additionalProperties = v;
          break;
        default:
          break;
      }
    }
  }
  return out;
}

/** `type` as a list of names (a string, or an array of strings; anything else: none). */
export function typeList(type: JsonValue | undefined): string[] {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** Two description texts as one; either may be missing. */
export function joinDescription(a: JsonValue | undefined, b: string): string {
  const first = typeof a === 'string' ? a.trim() : '';
  if (first === '') return b;
  return /[.!?:;]$/.test(first) ? `${first} ${b}` : `${first}. ${b}`;
}
