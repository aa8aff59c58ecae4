/**
 * Where a connection's key would go (I/O around `key-origins.ts`): for OpenAPI without a `baseUrl`
 * override that means reading and converting the description, on the description workers.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../errors.js';
import { isOutboundError, type OutboundClient } from '../http/outbound.js';
import type { DescriptionSource, LoadDeps } from '../openapi/load.js';
import { Operation } from '../operations/operation.entity.js';
import type { DescriptionPool } from '../openapi/pool.js';
import type { Logger } from '../logger.js';
import type { Connection } from './connection.entity.js';
import { keyTargets, originsOf } from './key-origins.js';

/** What reading a source's description for its key origins needs (a part of app.ts's services). */
export interface SourceOriginDeps {
  outbound: OutboundClient;
  descriptions: DescriptionPool;
  logger: Logger;
}

/** Fetching a description through the outbound client (no credential), with errors a person can act on. */
export function descriptionDeps(services: Pick<SourceOriginDeps, 'outbound'>): LoadDeps {
  return {
    fetchText: async (url, maxBytes) => {
      try {
        return await services.outbound.fetchText(url, maxBytes);
      } catch (err) {
        if (isOutboundError(err) && err.code === 'BODY_TOO_LARGE') {
          throw new AppError(
            'DESCRIPTION_TOO_LARGE',
            `the description at ${url} is larger than ${maxBytes} bytes`,
            { cause: err },
          );
        }
        if (isOutboundError(err) && err.code === 'HTTP_STATUS') {
          throw new AppError('DESCRIPTION_FETCH_FAILED', `fetching the description failed: ${err.message}`, {
            cause: err,
          });
        }
        throw err;
      }
    },
  };
}

/** A connection's source as an update would leave it. */
export interface SourceAfter {
  kind: 'MCP' | 'OPENAPI';
  endpointUrl: string | null;
  baseUrl: string | null;
  description: DescriptionSource | null;
}

/**
 * The origins a key of this source would go to (see `keyTargets`), or `null` when the description
 * cannot be read or converted now. Never throws for a source problem: discovery reports those.
 */
export async function sourceKeyTargets(
  services: SourceOriginDeps,
  source: SourceAfter,
): Promise<string[] | null> {
  let describedBases: string[] | null = null;
  if (source.kind === 'OPENAPI' && source.baseUrl === null && source.description !== null) {
    try {
      const loaded = await services.descriptions.load(source.description, descriptionDeps(services), null);
      describedBases = loaded.conversion.operations.map((o) => o.binding.baseUrl);
    } catch (err) {
      services.logger.info(
        { code: (err as { code?: string }).code },
        'description unreadable while recording key origins',
      );
    }
  }
  return keyTargets({ ...source, describedBases });
}

/**
 * The origins a key given now is recorded for: where the source sends calls, or when the
 * description cannot be read now, where the connection's operations send them today (with the
 * origins recorded before, when the key only changes).
 */
export async function originsForNewKey(
  services: SourceOriginDeps,
  em: EntityManager,
  connection: Connection,
  source: SourceAfter,
  sourceChanged: boolean,
): Promise<string[]> {
  const targets = await sourceKeyTargets(services, source);
  if (targets !== null) return targets;
  const stored = await em.find(Operation, { connection: connection.id }, { fields: ['binding'] });
  const kept = sourceChanged ? [] : (connection.credentialOrigins ?? []);
  return originsOf([...kept, ...stored.map((o) => o.binding?.baseUrl)]);
}
