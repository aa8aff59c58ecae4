/**
 * What a discovery's result depends on, as a list of parts to digest (pure). Two runs of one
 * connection with equal parts (and so equal fingerprints) would produce the same listing and the
 * same plan against the same stored operations; `discover.ts` then skips the conversion and the
 * apply (issue 15: a re-discovery of an unchanged source does nothing).
 *
 * The parts, beside the source itself:
 * - the connection's settings that change the conversion or the holds judged on each operation
 *   (`baseUrl`, `endpointUrl`, the credential's kind and origins) and the outbound policy, which
 *   decides whether a base address can be called;
 * - for a description: the converter's version ({@link CONVERSION_VERSION}), its address (relative
 *   servers resolve against it) and the connection's secrets, which the converted listing is
 *   scrubbed of. The digest is keyed (`SecretBox.fingerprint`), so storing it reveals nothing.
 * - for an MCP tool list: the whole listing as read, over every page, after mapping and scrubbing,
 *   which is exactly what would be reconciled; so no version or secret is needed.
 *
 * What the stored side looks like is not here: `operationsStamp` (operation-rows.ts) covers it.
 */
import type { Connection } from '../connections/connection.entity.js';
import { CONVERSION_VERSION } from '../openapi/convert-job.js';

/** The connection's settings a listing's plan depends on. */
export type FingerprintConnection = Pick<
  Connection,
  'kind' | 'endpointUrl' | 'baseUrl' | 'credentialKind' | 'credentialOrigins'
>;

/**
 * The connection's settings that a listing's plan depends on, as one string. The apply compares
 * it under the connection's lock with the one the fingerprint was made with: a setting changed
 * in between makes the fingerprint stale.
 */
export function connectionSettings(connection: FingerprintConnection, outboundPolicy: unknown): string {
  return JSON.stringify([
    connection.kind,
    connection.endpointUrl,
    connection.baseUrl,
    connection.credentialKind,
    connection.credentialOrigins ?? null,
    outboundPolicy,
  ]);
}

/** The parts of an OpenAPI description's fingerprint: read, not yet parsed or converted. */
export function descriptionFingerprintParts(
  source: { text: string; url: string | null },
  connection: FingerprintConnection,
  outboundPolicy: unknown,
  secrets: readonly string[],
): string[] {
  return [
    'openapi',
    String(CONVERSION_VERSION),
    connectionSettings(connection, outboundPolicy),
    source.url ?? '',
    String(secrets.length),
    ...secrets,
    source.text,
  ];
}

/** The parts of an MCP tool list's fingerprint: the complete listing, mapped and scrubbed. */
export function listingFingerprintParts(
  listing: unknown,
  connection: FingerprintConnection,
  outboundPolicy: unknown,
): string[] {
  return ['mcp', connectionSettings(connection, outboundPolicy), JSON.stringify(listing)];
}
