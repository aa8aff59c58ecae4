/**
 * The schema walk of the validator (pure: no I/O): the subschemas of a JSON Schema or a Gemini
 * `Schema` ({@link children}), a bounded depth-first visit of them ({@link walk}: at most
 * {@link MAX_WALK_DEPTH} deep and {@link MAX_WALK_NODES} nodes, `$ref`s not followed), and the
 * resolution of local `$ref`s. Part of the validator (`../rules.ts`), which shares no code with the
 * compiler.
 */
import { isObj, type Obj, type Report, seg } from './common.js';
import { MAX_WALK_DEPTH, MAX_WALK_NODES } from './table.js';

/** Where a subschema sits under its parent. */
export interface Edge {
  keyword: string;
  /** The property name or index, for map and array keywords. */
  key?: string | number;
}

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

/** The subschemas of a JSON Schema (any draft) or of a Gemini `Schema`, with their edges. */
export function children(schema: Obj): { edge: Edge; path: string; value: unknown }[] {
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

export interface Visit {
  value: unknown;
  path: string;
}

/**
 * Calls `visit` for every subschema of `root` (syntactically: `$ref`s are not followed), depth
 * first. Reports `common.schema.bounded` and stops when the schema is too deep or too large.
 */
export function walk(root: unknown, rootPath: string, report: Report, visit: (v: Visit) => void): void {
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
export function typesOf(schema: Obj): string[] {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** An object or array schema: a level of nesting. */
export function isContainer(schema: Obj): boolean {
  const types = typesOf(schema).map((t) => t.toLowerCase());
  return (
    types.includes('object') ||
    types.includes('array') ||
    schema.properties !== undefined ||
    schema.items !== undefined ||
    schema.prefixItems !== undefined
  );
}

// ---------------------------------------------------------------------------------------------
// Local references.

/** The schema a local `$ref` names: `#` (the root) or `#/$defs/<name>` (or `#/definitions/<name>`). */
export function resolveRef(
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
export function refPath(key: string): string {
  return key === '#' ? '' : key.slice(1);
}
