import { ArgsType, type ClassType, Field, Int, ObjectType } from 'type-graphql';
import { badInput } from './errors.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

@ObjectType()
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => Boolean, { description: 'Always false: lists are forward-only.' })
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Page<T> {
  edges: Edge<T>[];
  nodes: T[];
  pageInfo: PageInfo;
  /** Read lazily (a getter), so the count runs only when a query selects it. */
  readonly totalCount?: Promise<number>;
}

export interface ConnectionOptions {
  /**
   * Adds `totalCount`: for lists whose children stay few per parent, where one COUNT with the
   * page's filter is cheap. Every resolver returning the type must then pass `count` to toPage.
   */
  totalCount?: boolean;
}

/** Builds the `XEdge` and `XConnection` object types for a node type. */
export function connectionType<T extends object>(
  name: string,
  nodeType: ClassType<T>,
  options: ConnectionOptions = {},
): ClassType<Page<T>> {
  @ObjectType(`${name}Edge`)
  class EdgeType {
    @Field(() => String)
    cursor!: string;

    @Field(() => nodeType)
    node!: T;
  }

  // Never reachable from a field, so never emitted: only the subclasses below are.
  @ObjectType(`${name}ConnectionBase`)
  class BaseConnectionType {
    @Field(() => [EdgeType])
    edges!: EdgeType[];

    @Field(() => [nodeType])
    nodes!: T[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;
  }
  if (!options.totalCount) {
    @ObjectType(`${name}Connection`)
    class ConnectionType extends BaseConnectionType {}
    return ConnectionType;
  }

  @ObjectType(`${name}Connection`)
  class CountedConnectionType extends BaseConnectionType {
    @Field(() => Int, {
      description: 'How many items match, across all pages (one COUNT with the same filter).',
    })
    declare totalCount: Promise<number>;
  }
  return CountedConnectionType;
}

/** Cursors are opaque: base64url of the keyset value (a UUIDv7 id). */
export function encodeCursor(value: string): string {
  return Buffer.from(`c:${value}`, 'utf8').toString('base64url');
}

/** Keyset values are UUIDs; anything else never reaches the database. */
const CURSOR_VALUE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function decodeCursor(cursor: string): string {
  const decoded = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const value = decoded.slice(2);
  if (!decoded.startsWith('c:') || !CURSOR_VALUE.test(value)) {
    throw badInput('"after" is not a cursor from this API');
  }
  return value;
}

export interface PageArgs {
  first?: number | null;
  after?: string | null;
}

/** Validates `first` (0…100) and decodes `after`. */
export function pageWindow(args: PageArgs): { limit: number; after: string | null } {
  const first = args.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw badInput(`"first" must be between 0 and ${MAX_PAGE_SIZE}`);
  }
  return { limit: first, after: args.after ? decodeCursor(args.after) : null };
}

/**
 * `rows` were fetched with `limit + 1`, ordered by the keyset; the extra row says there is more.
 * `count` answers `totalCount`, and runs only if the query selects it.
 */
export function toPage<T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => string,
  count?: () => Promise<number>,
): Page<T> {
  const nodes = rows.slice(0, limit);
  const edges = nodes.map((node) => ({ node, cursor: encodeCursor(keyOf(node)) }));
  const page: Page<T> = {
    edges,
    nodes,
    pageInfo: {
      hasNextPage: rows.length > limit,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
  if (count) Object.defineProperty(page, 'totalCount', { get: count, enumerable: false });
  return page;
}

@ArgsType()
export class PageArgsType {
  @Field(() => Int, { nullable: true, description: 'At most 100; default 20.' })
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'A cursor from a previous page.' })
  after?: string | null;
}
