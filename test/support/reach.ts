/**
 * Reads every field a token can reach (tests only): from `viewer` and `workspaces`, then every
 * object by `node(id)`, selecting every field of its type from the printed schema. Object fields
 * that are nodes are followed by id; lists are read as `nodes` pages. Returns every answer's text,
 * so a test can search it for what must not be there.
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  isInterfaceType,
  isLeafType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';

let schema: GraphQLSchema | null = null;
function loadSchema(): GraphQLSchema {
  schema ??= buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
  return schema;
}

function isNode(type: GraphQLObjectType): boolean {
  return type.getInterfaces().some((i) => i.name === 'Node');
}

function callable(field: GraphQLField<unknown, unknown>): boolean {
  return field.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined);
}

/** The selection of every field of `type`; nodes below the top are followed by id only. */
function selection(
  type: GraphQLObjectType,
  skip: ReadonlySet<string>,
  seen: Set<string> = new Set(),
): string {
  const parts: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (!callable(field) || skip.has(`${type.name}.${field.name}`)) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) parts.push(field.name);
    else if (isInterfaceType(named)) parts.push(`${field.name} { id }`);
    else if (isObjectType(named)) {
      if (isNode(named)) parts.push(`${field.name} { id }`);
      else if (named.getFields().nodes) {
        const item = getNamedType(named.getFields().nodes!.type) as GraphQLObjectType;
        parts.push(
          `${field.name}(first: 100) { nodes { ${isNode(item) ? 'id' : selection(item, skip, seen)} } }`,
        );
      } else if (!seen.has(named.name)) {
        parts.push(`${field.name} { ${selection(named, skip, new Set([...seen, named.name]))} }`);
      }
    }
  }
  return parts.join(' ');
}

function collectIds(value: unknown, out: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) collectIds(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'id' && typeof v === 'string') out.add(v);
      else collectIds(v, out);
    }
  }
}

export interface Reach {
  /** Every answer, as JSON text. */
  texts: string[];
  /** Node ids read. */
  ids: Set<string>;
  /** Errors other than FORBIDDEN on fields in `skip`. */
  errors: unknown[];
}

/**
 * Crawls as `token`. `skip` names fields (`Type.field`) the role may not read (they would only
 * answer FORBIDDEN).
 */
export async function readEverything(url: string, token: string, skip: string[] = []): Promise<Reach> {
  const gql = async (query: string, variables: Record<string, unknown>, bearer: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: unknown; errors?: unknown[] };
  };
  const t = { gql };
  const s = loadSchema();
  const skipSet = new Set(skip);
  const texts: string[] = [];
  const errors: unknown[] = [];
  const queue = new Set<string>();
  const root = await t.gql(
    `{ viewer { ${selection(s.getType('Viewer') as GraphQLObjectType, skipSet)} } workspaces(first: 100) { nodes { id } } }`,
    {},
    token,
  );
  texts.push(JSON.stringify(root));
  if (root.errors) errors.push(...root.errors);
  collectIds(root.data, queue);
  const done = new Set<string>();
  const nodeTypes = Object.values(s.getTypeMap()).filter(
    (type): type is GraphQLObjectType => isObjectType(type) && isNode(type),
  );
  const fragment = new Map(
    nodeTypes.map((type) => [type.name, `... on ${type.name} { ${selection(type, skipSet)} }`]),
  );
  while (queue.size > 0) {
    const [id] = queue;
    queue.delete(id!);
    if (done.has(id!)) continue;
    done.add(id!);
    // Tests only: a global id is `Type:uuid` in base64url (clients must treat ids as opaque).
    const type = Buffer.from(id!, 'base64url').toString('utf8').split(':')[0]!;
    const res = await t.gql(
      `query ($id: ID!) { node(id: $id) { __typename ${fragment.get(type) ?? ''} } }`,
      { id },
      token,
    );
    texts.push(JSON.stringify(res));
    if (res.errors) errors.push(...res.errors);
    const found = new Set<string>();
    collectIds(res.data, found);
    for (const f of found) if (!done.has(f)) queue.add(f);
  }
  return { texts, ids: done, errors };
}

/** Every window of `size` characters of `secret` found in `text`. */
export function fragmentsIn(text: string, secret: string, size = 8): string[] {
  const found: string[] = [];
  for (let i = 0; i + size <= secret.length; i++) {
    const w = secret.slice(i, i + size);
    if (text.includes(w)) found.push(w);
  }
  return found;
}
