/**
 * What a discovery read, scrubbed of the connection's secrets before anything of it is stored,
 * returned or declared to a model (DESIGN.md rule 15). Pure.
 *
 * Free text (server info, protocol version, titles, descriptions, every string inside schemas
 * (input and output) and annotations, skipped items, diagnostics) is scrubbed in place. Identifiers that go on the wire
 * cannot be: a tool whose name, argument names or OpenAPI binding (path, wire names, base address)
 * hold part of a secret would be called under a name the server does not know, or would send the
 * secret itself. Such a tool is skipped with the reason `SECRET_ECHOED`, under its scrubbed name.
 */
import type { Scrubber } from '../connections/scrub.js';
import type { JsonValue } from '../operations/types.js';
import type { SkippedItem } from './discovery-run.entity.js';
import type { DiscoveredOperation } from './reconcile.js';

/** The skip reason of a tool whose wire identifiers hold part of a credential. */
export const SECRET_ECHOED = 'SECRET_ECHOED';

export interface ScrubbableListing {
  operations: DiscoveredOperation[];
  skipped: SkippedItem[];
  diagnostics: string[];
  protocolVersion: string | null;
  serverInfo: { [key: string]: JsonValue } | null;
}

/** Whether any object key at any depth of `value` holds a secret run. */
function keyHits(value: JsonValue, scrubber: Scrubber): boolean {
  if (Array.isArray(value)) return value.some((item) => keyHits(item, scrubber));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, item]) => scrubber.hits(key) || keyHits(item, scrubber));
  }
  return false;
}

export function scrubListing<T extends ScrubbableListing>(listing: T, scrubber: Scrubber): T {
  if (!scrubber.active) return listing;
  const operations: DiscoveredOperation[] = [];
  const echoed: SkippedItem[] = [];
  for (const op of listing.operations) {
    const wire =
      scrubber.hits(op.name) ||
      keyHits(op.inputSchema, scrubber) ||
      (op.binding !== null && scrubber.hits(JSON.stringify(op.binding)));
    if (wire) {
      echoed.push({
        name: scrubber.text(op.name),
        reason: SECRET_ECHOED,
        detail: "the tool's name, argument names or address hold part of the connection's credential",
      });
      continue;
    }
    operations.push({
      ...op,
      title: op.title === null ? null : scrubber.text(op.title),
      description: op.description === null ? null : scrubber.text(op.description),
      inputSchema: scrubber.json(op.inputSchema),
      checkSchema: op.checkSchema == null ? null : scrubber.json(op.checkSchema),
      ...(op.outputSchema == null ? {} : { outputSchema: scrubber.json(op.outputSchema) }),
      annotations: scrubber.json(op.annotations),
    });
  }
  return {
    ...listing,
    operations,
    skipped: [
      ...listing.skipped.map((s) => ({
        name: scrubber.text(s.name),
        reason: scrubber.text(s.reason),
        detail: s.detail == null ? null : scrubber.text(s.detail),
      })),
      ...echoed,
    ],
    diagnostics: listing.diagnostics.map((d) => scrubber.text(d)),
    protocolVersion: listing.protocolVersion === null ? null : scrubber.text(listing.protocolVersion),
    serverInfo: scrubber.json(listing.serverInfo),
  };
}
