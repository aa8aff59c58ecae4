/**
 * The schema walk of the validator (pure: no I/O): the subschemas of a JSON Schema or a Gemini
 * `Schema` ({@link eachChild}), a bounded depth-first visit of them ({@link walk}: at most
 * {@link MAX_WALK_DEPTH} deep and {@link MAX_WALK_NODES} nodes, `$ref`s not followed), and the
 * resolution of local `$ref`s. Part of the validator (`../rules.ts`), which shares no code with the
 * compiler.
 */
import { isObj, type Obj, type Report, Trail } from './common.js';
import { MAX_WALK_DEPTH, MAX_WALK_NODES } from './table.js';

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
/** Each keyword's kinds of subschema value (`items` is a list in older drafts, one schema in newer). */
const CHILD_KINDS = new Map<string, { map: boolean; list: boolean; one: boolean }>(
  [...new Set([...MAP_KEYWORDS, ...LIST_KEYWORDS, ...ONE_KEYWORDS])].map((k) => [
    k,
    { map: MAP_KEYWORDS.includes(k), list: LIST_KEYWORDS.includes(k), one: ONE_KEYWORDS.includes(k) },
  ]),
);

/**
 * Calls `fn` for each subschema of a JSON Schema (any draft) or of a Gemini `Schema`, with the
 * keyword it sits under and, for map and list keywords, its property name or index, in the order
 * the node's keys come. Allocates nothing per child, and looks up only the keys the node has: this
 * runs for every node of every declaration checked.
 */
export function eachChild(
  schema: Obj,
  fn: (value: unknown, keyword: string, key: string | number | undefined) => void,
): void {
  for (const keyword in schema) {
    const kind = CHILD_KINDS.get(keyword);
    if (kind === undefined || !Object.hasOwn(schema, keyword)) continue;
    const value = schema[keyword];
    if (kind.map && isObj(value)) {
      for (const key in value) if (Object.hasOwn(value, key)) fn(value[key], keyword, key);
    } else if (kind.list && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) fn(value[i] as unknown, keyword, i);
    } else if (
      kind.one &&
      (isObj(value) || (typeof value === 'boolean' && keyword !== 'additionalProperties'))
    )
      fn(value, keyword, undefined);
  }
}

/**
 * The JSON Pointer of the subschema being visited, written out only when it is asked for (for a
 * report): the walks keep a `Trail` (common.ts) of keywords and keys instead of a string per node. Valid
 * during the visit it is handed to.
 */
export type At = () => string;

/**
 * Calls `visit` for every subschema of `root` (syntactically: `$ref`s are not followed), depth
 * first, with an {@link At} that gives its JSON Pointer below `rootPath`. Reports
 * `common.schema.bounded` and stops when the schema is too deep or too large.
 */
export function walk(
  root: unknown,
  rootPath: string,
  report: Report,
  visit: (value: unknown, at: At) => void,
): void {
  let nodes = 0;
  let stopped = false;
  // The objects open on the current path: a list, since the path is short (a Set's adds and
  // deletes at every node cost more).
  const onPath: unknown[] = [];
  const trail = new Trail(rootPath);
  const at: At = () => trail.pointer();
  let level = 0;
  // One closure for the whole walk (not one per node): the level is kept beside the trail.
  const child = (value: unknown, keyword: string, key: string | number | undefined): void => {
    trail.push(keyword, key);
    level++;
    go(value);
    level--;
    trail.pop();
  };
  const go = (value: unknown): void => {
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
        at(),
        `the schema nests deeper than ${MAX_WALK_DEPTH} levels`,
      );
    }
    visit(value, at);
    if (!isObj(value) || onPath.includes(value)) return;
    onPath.push(value);
    eachChild(value, child);
    onPath.pop();
  };
  go(root);
}

/** The `type` values of a JSON Schema as a list (empty when absent or malformed). */
export function typesOf(schema: Obj): string[] {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** Whether the schema's `type` is or lists `type` (no list is made: this runs for every node). */
export function hasType(schema: Obj, type: string, ignoreCase = false): boolean {
  const t = schema.type;
  if (typeof t === 'string') return sameType(t, type, ignoreCase);
  if (!Array.isArray(t)) return false;
  for (const v of t) if (typeof v === 'string' && sameType(v, type, ignoreCase)) return true;
  return false;
}

/** `written` is `type` (lower case), or with `ignoreCase` is it in any case; lowers only when it must. */
function sameType(written: string, type: string, ignoreCase: boolean): boolean {
  if (written === type) return true;
  return ignoreCase && written.length === type.length && written.toLowerCase() === type;
}

/** An object or array schema: a level of nesting. */
export function isContainer(schema: Obj): boolean {
  return (
    hasType(schema, 'object', true) ||
    hasType(schema, 'array', true) ||
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
