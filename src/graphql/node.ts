import { Field, ID, InterfaceType } from 'type-graphql';
import { notFound } from './errors.js';

/** The GraphQL type names that carry global IDs. */
export const NODE_TYPES = [
  'Workspace',
  'Assistant',
  'Connection',
  'Operation',
  'ReviewReason',
  'OperationChange',
  'DiscoveryRun',
  'Turn',
  'TurnCall',
  'LedgerEntry',
  'AuditEvent',
  'ApiToken',
] as const;
export type NodeTypeName = (typeof NODE_TYPES)[number];

/** Opaque global ID: base64url of `Type:uuid`. Clients must not parse it. */
export function toGlobalId(type: NodeTypeName, id: string): string {
  return Buffer.from(`${type}:${id}`, 'utf8').toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Decodes a global ID; null when it is malformed or names an unknown type. */
export function fromGlobalId(globalId: string): { type: NodeTypeName; id: string } | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(globalId)) return null;
  const decoded = Buffer.from(globalId, 'base64url').toString('utf8');
  const sep = decoded.indexOf(':');
  if (sep < 0) return null;
  const type = decoded.slice(0, sep);
  const id = decoded.slice(sep + 1);
  if (!(NODE_TYPES as readonly string[]).includes(type) || !UUID.test(id)) return null;
  return { type: type as NodeTypeName, id };
}

@InterfaceType({ description: 'An object with an opaque global ID.' })
export abstract class Node {
  /** Each implementing class overrides this with its own type name. */
  @Field(() => ID, { name: 'id' })
  get nodeId(): string {
    throw new Error(`${this.constructor.name} does not define its global ID`);
  }
}

/** Decodes a global ID that must be of `type` into its UUID; anything else is NOT_FOUND. */
export function idOf(globalId: string, type: NodeTypeName, what: string): string {
  const parsed = fromGlobalId(globalId);
  if (!parsed || parsed.type !== type) throw notFound(what);
  return parsed.id;
}
