import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import type { JsonObject } from '../operations/types.js';
import { slugify } from '../operations/keys.js';
import type { Services } from '../services.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { Connection, ConnectionKind, CredentialKind } from './connection.entity.js';
import type { CreateConnectionInput, CredentialInput, UpdateConnectionInput } from './connection.input.js';
import {
  checkBaseUrl,
  checkCredential,
  checkDescriptionText,
  checkSlug,
  checkSourceUrl,
  checkTimeout,
  last4,
  type FieldProblem,
} from './validate.js';

export interface ConnectionResult {
  connection: Connection | null;
  userErrors: FieldProblem[];
}

/** The associated data that binds a sealed credential to its connection: a copied blob won't open. */
export function credentialAad(connectionId: string): string {
  return `connection:${connectionId}:credential`;
}

function applyCredential(services: Services, connection: Connection, input: CredentialInput): void {
  connection.credentialKind = input.kind;
  if (input.kind === CredentialKind.NONE) {
    connection.credentialSecret = null;
    connection.credentialHeaderName = null;
    connection.credentialLast4 = null;
    return;
  }
  const key = input.key!;
  connection.credentialSecret = services.secrets.seal(key, credentialAad(connection.id));
  connection.credentialHeaderName = input.kind === CredentialKind.HEADER ? input.headerName! : null;
  connection.credentialLast4 = last4(key);
}

/** The fields that describe where the source is, as audit before/after values (no secrets). */
export function connectionSummary(c: Connection): JsonObject {
  return {
    name: c.name,
    slug: c.slug,
    kind: c.kind,
    endpointUrl: c.endpointUrl,
    descriptionUrl: c.descriptionUrl,
    descriptionBytes: c.descriptionBytes,
    baseUrl: c.baseUrl,
    timeoutMs: c.timeoutMs,
    credential: { kind: c.credentialKind, headerName: c.credentialHeaderName, last4: c.credentialLast4 },
  };
}

function checkSource(
  services: Services,
  kind: ConnectionKind,
  input: {
    endpointUrl?: string | null;
    descriptionUrl?: string | null;
    descriptionText?: string | null;
    baseUrl?: string | null;
    timeoutMs?: number | null;
    credential?: CredentialInput | null;
  },
  creating: boolean,
): FieldProblem[] {
  const policy = services.config.outbound;
  const problems: FieldProblem[] = [];
  const push = (p: FieldProblem | null): void => {
    if (p) problems.push(p);
  };
  if (kind === ConnectionKind.MCP) {
    if (input.endpointUrl != null) push(checkSourceUrl(input.endpointUrl, policy, ['input', 'endpointUrl']));
    else if (creating)
      push({
        field: ['input', 'endpointUrl'],
        code: 'REQUIRED',
        message: 'an MCP connection needs an endpoint URL',
      });
    for (const f of ['descriptionUrl', 'descriptionText', 'baseUrl'] as const) {
      if (input[f] != null)
        push({ field: ['input', f], code: 'NOT_APPLICABLE', message: 'only OpenAPI connections take this' });
    }
  } else {
    if (input.endpointUrl != null) {
      push({
        field: ['input', 'endpointUrl'],
        code: 'NOT_APPLICABLE',
        message: 'only MCP connections take this',
      });
    }
    const hasUrl = input.descriptionUrl != null && input.descriptionUrl !== '';
    const hasText = input.descriptionText != null && input.descriptionText !== '';
    if (hasUrl && hasText) {
      push({
        field: ['input', 'descriptionText'],
        code: 'CONFLICT',
        message: 'give the description as a URL or as text, not both',
      });
    } else if (creating && !hasUrl && !hasText) {
      push({
        field: ['input', 'descriptionUrl'],
        code: 'REQUIRED',
        message: 'an OpenAPI connection needs a description URL or text',
      });
    }
    if (hasUrl) push(checkSourceUrl(input.descriptionUrl!, policy, ['input', 'descriptionUrl']));
    if (hasText) push(checkDescriptionText(input.descriptionText!, ['input', 'descriptionText']));
    if (input.baseUrl != null && input.baseUrl !== '')
      push(checkBaseUrl(input.baseUrl, policy, ['input', 'baseUrl']));
  }
  if (input.timeoutMs != null) push(checkTimeout(input.timeoutMs, ['input', 'timeoutMs']));
  if (input.credential) problems.push(...checkCredential(input.credential, ['input', 'credential']));
  return problems;
}

function applySource(connection: Connection, input: UpdateConnectionInput | CreateConnectionInput): void {
  if (input.endpointUrl != null) connection.endpointUrl = new URL(input.endpointUrl.trim()).toString();
  if (input.descriptionUrl != null && input.descriptionUrl !== '') {
    connection.descriptionUrl = new URL(input.descriptionUrl.trim()).toString();
    connection.descriptionText = null;
    connection.descriptionBytes = null;
  }
  if (input.descriptionText != null && input.descriptionText !== '') {
    connection.descriptionText = input.descriptionText;
    connection.descriptionBytes = Buffer.byteLength(input.descriptionText, 'utf8');
    connection.descriptionUrl = null;
  }
  if (input.baseUrl != null)
    connection.baseUrl = input.baseUrl === '' ? null : new URL(input.baseUrl.trim()).toString();
  if (input.timeoutMs != null) connection.timeoutMs = input.timeoutMs;
}

export async function createConnection(
  em: EntityManager,
  services: Services,
  principal: Principal,
  workspaceId: string,
  input: CreateConnectionInput,
): Promise<ConnectionResult> {
  const problems: FieldProblem[] = [];
  const name = input.name.trim();
  if (name.length === 0 || name.length > 200) {
    problems.push({ field: ['input', 'name'], code: 'NAME_INVALID', message: 'must be 1–200 characters' });
  }
  const slug = input.slug != null ? input.slug : slugify(name);
  const slugProblem = checkSlug(slug, ['input', 'slug']);
  if (slugProblem) problems.push(slugProblem);
  problems.push(...checkSource(services, input.kind, input, true));
  if (problems.length > 0) return { connection: null, userErrors: problems };

  const connection = new Connection(
    em.getReference(Workspace, workspaceId, { wrapped: true }),
    input.kind,
    name,
    slug,
  );
  applySource(connection, input);
  if (input.credential) applyCredential(services, connection, input.credential);
  em.persist(connection);
  audit(em, principal, {
    workspaceId,
    action: 'CONNECT',
    targetType: 'Connection',
    targetId: connection.nodeId,
    after: connectionSummary(connection),
  });
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      em.clear();
      return {
        connection: null,
        userErrors: [
          {
            field: ['input', 'slug'],
            code: 'SLUG_TAKEN',
            message: `the workspace already has a connection "${slug}"`,
          },
        ],
      };
    }
    throw err;
  }
  return { connection, userErrors: [] };
}

function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Whether an update points a key-based connection at another host. Whoever changes where the
 * connection points must give the key again: otherwise someone who can edit a connection but not
 * read its key could send it to a host of their own.
 */
function movesKeyElsewhere(connection: Connection, input: UpdateConnectionInput): boolean {
  if (
    connection.credentialKind !== CredentialKind.BEARER &&
    connection.credentialKind !== CredentialKind.HEADER
  )
    return false;
  const moved = (before: string | null, after: string | null | undefined) =>
    after != null && after !== '' && originOf(after) !== originOf(before);
  return (
    moved(connection.endpointUrl, input.endpointUrl) ||
    moved(connection.baseUrl, input.baseUrl) ||
    moved(connection.descriptionUrl, input.descriptionUrl)
  );
}

export async function updateConnection(
  em: EntityManager,
  services: Services,
  principal: Principal,
  connection: Connection,
  input: UpdateConnectionInput,
): Promise<ConnectionResult> {
  const problems: FieldProblem[] = [];
  if (input.name != null && (input.name.trim().length === 0 || input.name.trim().length > 200)) {
    problems.push({ field: ['input', 'name'], code: 'NAME_INVALID', message: 'must be 1–200 characters' });
  }
  problems.push(...checkSource(services, connection.kind, input, false));
  if (problems.length === 0 && !input.credential && movesKeyElsewhere(connection, input)) {
    problems.push({
      field: ['input', 'credential'],
      code: 'CREDENTIAL_REQUIRED',
      message:
        'the key would be sent to another host: give the credential again (or kind NONE) with the new address',
    });
  }
  if (problems.length > 0) return { connection: null, userErrors: problems };
  const before = connectionSummary(connection);
  if (input.name != null) connection.name = input.name.trim();
  applySource(connection, input);
  if (input.credential) applyCredential(services, connection, input.credential);
  audit(em, principal, {
    workspaceId: connection.workspace.id,
    action: 'UPDATE_CONNECTION',
    targetType: 'Connection',
    targetId: connection.nodeId,
    before,
    after: connectionSummary(connection),
  });
  await em.flush();
  return { connection, userErrors: [] };
}

export async function deleteConnection(
  em: EntityManager,
  principal: Principal,
  connection: Connection,
): Promise<void> {
  audit(em, principal, {
    workspaceId: connection.workspace.id,
    action: 'DELETE_CONNECTION',
    targetType: 'Connection',
    targetId: connection.nodeId,
    before: connectionSummary(connection),
  });
  em.remove(connection);
  await em.flush();
}

/** The plain secret of a connection's key credential, for the outbound request; never logged. */
export function openCredential(services: Services, connection: Connection): string | null {
  if (!connection.credentialSecret) return null;
  return services.secrets.open(connection.credentialSecret, credentialAad(connection.id));
}
