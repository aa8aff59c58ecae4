/**
 * Documents that select every field of every type reachable from a root type, generated from the
 * schema itself, so a field added tomorrow is covered without editing a test.
 *
 * For each reachable object type T there is one document: the shortest path from the root to T
 * (through fields whose required arguments can be supplied, list pages kept small), and at T every
 * field — leaves as they are, object, interface and union fields with `__typename`, so each
 * field's resolver runs on real objects while each document stays small enough for the server's
 * depth and cost limits. The types behind those fields get their own documents.
 *
 * A type is covered only when its document reached at least one object of it: `countAt` walks the
 * answer along the path. Every selection set carries `__typename` and every Node its `id`, so the
 * answers also harvest IDs for the root fields that need one.
 */
import {
  getNamedType,
  isEnumType,
  isInterfaceType,
  isLeafType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';

/** One step of a path: a field of a type, with the arguments it is called with. */
export interface Step {
  type: string;
  field: string;
  /** Argument name → GraphQL literal text. */
  args: Record<string, string>;
}

export interface TypePlan {
  /** The object type whose every field the document selects. */
  type: string;
  path: Step[];
}

/** Global IDs by type name, from the journey and harvested from answers. */
export type IdRegistry = Map<string, string[]>;

/** The page size used on the way down a path: small, so nested pages stay cheap. */
export const PATH_PAGE = 5;
/** The page size used for list fields selected at a type (their own type has its own document). */
export const LEAF_PAGE = 2;

export class MissingArgumentError extends Error {}

/**
 * A literal for each argument a field requires, and for `first` on pages. Required `ID`s come
 * from the registry: by the field's return type, or, for an interface such as `Node`, any ID.
 * Throws MissingArgumentError when a required argument has no value to give.
 */
export function argumentsFor(
  field: GraphQLField<unknown, unknown>,
  ids: IdRegistry,
  page: number,
  pick = 0,
  idType?: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of field.args) {
    if (arg.name === 'first' && !isNonNullType(arg.type)) {
      out.first = String(page);
      continue;
    }
    if (!isNonNullType(arg.type) || arg.defaultValue !== undefined) continue;
    out[arg.name] = requiredLiteral(field, arg, ids, pick, idType);
  }
  return out;
}

function requiredLiteral(
  field: GraphQLField<unknown, unknown>,
  arg: GraphQLArgument,
  ids: IdRegistry,
  pick: number,
  idType: string | undefined,
): string {
  const named = getNamedType(arg.type);
  if (isScalarType(named) && named.name === 'ID') {
    const returned = getNamedType(field.type);
    const target = idType ?? returned.name;
    const candidates = isObjectType(returned) || idType ? (ids.get(target) ?? []) : [...ids.values()].flat();
    const id = candidates[pick % Math.max(1, candidates.length)];
    if (id === undefined) throw new MissingArgumentError(`no ID of ${target} for ${field.name}(${arg.name})`);
    return JSON.stringify(id);
  }
  if (isEnumType(named)) return named.getValues()[0]!.name;
  if (isScalarType(named)) {
    if (named.name === 'Int' || named.name === 'Float') return '1';
    if (named.name === 'Boolean') return 'true';
    if (named.name === 'String') return '"x"';
    // A time range (usage): the last day, `to` now.
    if (named.name === 'DateTimeISO') {
      return JSON.stringify(new Date(Date.now() - (arg.name === 'to' ? 0 : 86_400_000)).toISOString());
    }
  }
  throw new MissingArgumentError(
    `no value for the required argument ${field.name}(${arg.name}: ${String(arg.type)})`,
  );
}

function printArgs(args: Record<string, string>): string {
  const entries = Object.entries(args);
  return entries.length ? `(${entries.map(([k, v]) => `${k}: ${v}`).join(', ')})` : '';
}

/** Object types the field can lead to: itself, or the implementations of an interface or union. */
function targetsOf(schema: GraphQLSchema, type: GraphQLNamedType): GraphQLObjectType[] {
  if (isObjectType(type)) return [type];
  if (isInterfaceType(type) || isUnionType(type)) return [...schema.getPossibleTypes(type)];
  return [];
}

/**
 * Every object type reachable from `root`, each with its shortest paths (up to `maxPaths`), in
 * breadth-first order. A step into an interface or union lands on each implementation.
 */
export function reachablePaths(
  schema: GraphQLSchema,
  root: GraphQLObjectType,
  maxPaths = 4,
  maxDepth = 8,
): Map<string, Step[][]> {
  const paths = new Map<string, Step[][]>([[root.name, [[]]]]);
  let frontier: { type: GraphQLObjectType; path: Step[] }[] = [{ type: root, path: [] }];
  for (let depth = 0; depth < maxDepth && frontier.length > 0; depth++) {
    const next: typeof frontier = [];
    for (const { type, path } of frontier) {
      for (const field of Object.values(type.getFields())) {
        const named = getNamedType(field.type);
        if (isLeafType(named)) continue;
        for (const target of targetsOf(schema, named)) {
          const known = paths.get(target.name);
          const step: Step = { type: type.name, field: field.name, args: {} };
          const p = [...path, step];
          // Keep a few alternatives of the same (shortest-first) length or longer, but no loops.
          if (path.some((s) => s.type === target.name)) continue;
          if (known && known.length >= maxPaths) continue;
          if (known) known.push(p);
          else {
            paths.set(target.name, [p]);
            next.push({ type: target, path: p });
          }
        }
      }
    }
    frontier = next;
  }
  return paths;
}

/** Every field of `type`: leaves as they are, the rest with `__typename`. */
export function fieldsOf(type: GraphQLObjectType, ids: IdRegistry): string {
  const parts = ['__typename'];
  for (const field of Object.values(type.getFields())) {
    const args = printArgs(argumentsFor(field, ids, LEAF_PAGE));
    const named = getNamedType(field.type);
    parts.push(isLeafType(named) ? `${field.name}${args}` : `${field.name}${args} { __typename }`);
  }
  return parts.join(' ');
}

/**
 * The document for `plan`: the path with its arguments (`pick` chooses among registered IDs),
 * then every field of the type. Steps that enter an interface or union use an inline fragment.
 */
export function documentFor(
  schema: GraphQLSchema,
  operation: 'query' | 'subscription',
  plan: TypePlan,
  ids: IdRegistry,
  pick = 0,
  extraRootArgs: Record<string, string> = {},
): string {
  const target = schema.getType(plan.type) as GraphQLObjectType;
  let inner = fieldsOf(target, ids);
  for (let i = plan.path.length - 1; i >= 0; i--) {
    const step = plan.path[i]!;
    const owner = schema.getType(step.type) as GraphQLObjectType;
    const field = owner.getFields()[step.field]!;
    const named = getNamedType(field.type);
    const nextType = i + 1 < plan.path.length ? plan.path[i + 1]!.type : plan.type;
    const args = {
      ...argumentsFor(field, ids, PATH_PAGE, pick, nextType),
      ...(i === 0 ? extraRootArgs : {}),
    };
    const body =
      isObjectType(named) && named.name === nextType ? inner : `__typename ... on ${nextType} { ${inner} }`;
    const idPart = isObjectType(named) && named.getFields().id ? ' id' : '';
    inner = `${step.field}${printArgs(args)} { __typename${idPart} ${body} }`;
  }
  return `${operation} { ${inner} }`;
}

/** How many objects of `plan.type` the answer holds at the end of the path. */
export function countAt(data: unknown, plan: TypePlan): number {
  let level: unknown[] = [data];
  for (const step of plan.path) {
    const next: unknown[] = [];
    for (const value of level) {
      if (value === null || typeof value !== 'object') continue;
      const child = (value as Record<string, unknown>)[step.field];
      for (const item of Array.isArray(child) ? child.flat(4) : [child]) {
        if (item !== null && item !== undefined) next.push(item);
      }
    }
    level = next;
  }
  return level.filter(
    (v) => typeof v === 'object' && v !== null && (v as { __typename?: string }).__typename === plan.type,
  ).length;
}

/** Collects `{ __typename, id }` pairs into the registry. */
export function harvestIds(data: unknown, ids: IdRegistry): void {
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value === null || typeof value !== 'object') return;
    const obj = value as Record<string, unknown>;
    if (typeof obj.__typename === 'string' && typeof obj.id === 'string') {
      const list = ids.get(obj.__typename) ?? [];
      if (!list.includes(obj.id)) list.push(obj.id);
      ids.set(obj.__typename, list);
    }
    Object.values(obj).forEach(walk);
  };
  walk(data);
}
