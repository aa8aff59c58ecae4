/**
 * Reading a connection's source (I/O): an MCP server's tool list, or an OpenAPI description's text
 * and its conversion (on a worker thread). No transaction is open while a source is read.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Connection } from '../connections/connection.entity.js';
import { mcpEndpoint, type EndpointOAuth } from '../connections/endpoint.js';
import { descriptionDeps } from '../connections/source-origins.js';
import { readDescriptionText } from '../openapi/load.js';
import { AppError } from '../errors.js';
import type { JsonObject } from '../operations/types.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../connections/secrets.js';
import type { Notifier } from '../db/notifier.js';
import type { OutboundClient } from '../http/outbound.js';
import type { Logger } from '../logger.js';
import type { McpClient } from '../mcp/client.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DescriptionPool } from '../openapi/pool.js';
import type { SkippedItem } from './discovery-run.entity.js';
import type { DiscoveredOperation } from './reconcile.js';
import { MAX_OPERATIONS_PER_CONNECTION } from '../limits.js';

/** What a source offered, before reconciliation. */
export interface SourceListing {
  operations: DiscoveredOperation[];
  /** Why the source gave no operation, when it says (OpenAPI). */
  emptyReason?: string | null;
  skipped: SkippedItem[];
  diagnostics: string[];
  protocolVersion: string | null;
  serverInfo: JsonObject | null;
}

/** What discovery is built with (a part of app.ts's services): fetch, convert, reconcile, save. */
export interface DiscoveryDeps {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  mcp: McpClient;
  metrics: Metrics;
  notifier: Notifier;
  descriptions: DescriptionPool;
  secrets: SecretBox;
  oauth: EndpointOAuth;
  outbound: OutboundClient;
  /** The clock the run's deadline runs on (src/clock.ts). Default: `systemClock`. */
  clock?: Clock;
}

/**
 * A source as read, before the expensive part: an MCP tool list is mapped as it is read (and
 * scrubbed here); a description is still text, converted only when the run is not unchanged.
 */
export type ReadSource =
  { kind: 'listing'; listing: SourceListing } | { kind: 'text'; text: string; url: string | null };

/** Reads an MCP server: initialize, every page of tools/list, end the session. */
export async function readMcp(
  services: DiscoveryDeps,
  connection: Connection,
  seen: string[],
): Promise<SourceListing> {
  const endpoint = mcpEndpoint(services, connection);
  const getAuthHeaders = endpoint.getAuthHeaders;
  if (getAuthHeaders) {
    // A token renewed during the run is a secret to scrub too.
    endpoint.getAuthHeaders = async () => {
      const headers = await getAuthHeaders();
      seen.push(...Object.values(headers).map((v) => v.replace(/^Bearer\s+/i, '')));
      return headers;
    };
  }
  const result = await services.mcp.discover(endpoint);
  const diagnostics: string[] = [];
  if (result.stopReason === 'TOOL_LIMIT')
    diagnostics.push(
      `the tool list stopped at the limit of ${MAX_OPERATIONS_PER_CONNECTION} tools; later tools were not read`,
    );
  if (result.stopReason === 'PAGE_LIMIT')
    diagnostics.push(`the tool list stopped after ${result.pages} pages (the limit)`);
  if (result.stopReason === 'REPEATED_CURSOR')
    diagnostics.push('the tool list stopped because the server repeated a cursor');
  // Discovery stays operator-driven: a freshness hint is shown, never acted on by itself.
  if (result.cache && result.cache.ttlMs > 0)
    diagnostics.push(
      `the server marks its tool list fresh for ${Math.round(result.cache.ttlMs / 1000)} s${result.cache.cacheScope ? ` (${result.cache.cacheScope})` : ''}`,
    );
  return {
    operations: result.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
      risk: t.risk,
      idempotent: t.idempotent,
      binding: null,
    })),
    skipped: [
      ...result.skipped.map((s) => ({
        name: s.name ?? `#${s.index}`,
        reason: s.reason,
        detail: s.detail,
      })),
      // Tools past the limit on pages never read have no names: one entry says they exist.
      ...(result.unreadPages
        ? [
            {
              name: `#${result.tools.length + result.skipped.length} and later`,
              reason: 'TOOL_LIMIT',
              detail: `the connection already has ${MAX_OPERATIONS_PER_CONNECTION} tools; the server listed more on pages that were not read`,
            },
          ]
        : []),
    ],
    diagnostics,
    protocolVersion: result.initialize.protocolVersion,
    serverInfo: result.initialize.serverInfo,
  };
}

/** Reads an OpenAPI description's text: re-fetching its address, or the stored text. */
export async function readOpenApiText(
  services: DiscoveryDeps,
  em: EntityManager,
  connection: Connection,
): Promise<{ text: string; url: string | null }> {
  if (connection.descriptionUrl)
    return readDescriptionText({ url: connection.descriptionUrl }, descriptionDeps(services));
  await em.populate(connection, ['descriptionText']);
  if (!connection.descriptionText)
    throw new AppError('DESCRIPTION_MISSING', 'the connection has no description to read');
  return { text: connection.descriptionText, url: null };
}

/** Parses and converts a description's text (on a worker thread: it never stalls the event loop). */
export async function convertOpenApi(
  services: DiscoveryDeps,
  connection: Connection,
  source: { text: string; url: string | null },
): Promise<SourceListing> {
  const converted = (
    await services.descriptions.convert({
      text: source.text,
      descriptionUrl: source.url,
      baseUrl: connection.baseUrl,
      urlPolicy: {
        allowHosts: services.config.outbound.allowHosts,
        allowLoopback: services.config.outbound.allowLoopback,
      },
    })
  ).conversion;
  return {
    operations: converted.operations.map((o) => ({
      name: o.name,
      title: o.title,
      description: o.description,
      inputSchema: o.inputSchema,
      checkSchema: o.checkSchema ?? null,
      annotations: o.annotations,
      risk: o.risk,
      idempotent: false,
      binding: o.binding,
      ...(o.basePlaceholder === undefined ? {} : { basePlaceholder: o.basePlaceholder }),
    })),
    skipped: converted.skipped.map((s) => ({
      name: s.name,
      reason: s.reason,
      detail: `${s.method} ${s.path}`,
    })),
    diagnostics: converted.diagnostics,
    emptyReason: converted.emptyReason,
    protocolVersion: null,
    serverInfo: null,
  };
}
