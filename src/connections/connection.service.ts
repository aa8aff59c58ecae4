import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import type { JsonObject } from '../operations/types.js';
import { assignKey, slugify } from '../operations/keys.js';
import type { Services } from '../services.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { Connection, ConnectionKind, CredentialKind } from './connection.entity.js';
import { isKeyCredential, originOf, uncoveredOrigins } from './key-origins.js';
import { credentialAad } from './endpoint.js';
import { MAX_NAME_CHARS, nameLengthProblem } from '../names.js';
import { originsForNewKey, sourceKeyTargets, type SourceAfter } from './source-origins.js';
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
import { type DiscoveryRun, DiscoveryTrigger } from '../discovery/discovery-run.entity.js';

export interface ConnectionResult {
  connection: Connection | null;
  userErrors: FieldProblem[];
}

/**
 * Saves a tool source and runs its first discovery at once (the page's "connect, then discover"),
 * whoever the caller. A failed discovery keeps the connection, with its error on the run.
 */
export async function connect(
  em: EntityManager,
  services: Services,
  principal: Principal,
  workspaceId: string,
  input: CreateConnectionInput,
): Promise<ConnectionResult & { discoveryRun: DiscoveryRun | null }> {
  const result = await createConnection(em, services, principal, workspaceId, input);
  if (!result.connection) return { ...result, discoveryRun: null };
  const discovery = await services.discovery.run(result.connection.id, DiscoveryTrigger.CONNECT, principal);
  await em.refresh(result.connection);
  return { ...result, discoveryRun: discovery.run };
}

/**
 * Stores a credential. A key is recorded with the origins it is given for (`key-origins.ts`):
 * calls, and anything else that would carry it, go only there.
 */
function applyCredential(
  services: Services,
  connection: Connection,
  input: CredentialInput,
  origins: string[] | null,
): void {
  connection.credentialKind = input.kind;
  connection.credentialOrigins = isKeyCredential(input.kind) ? (origins ?? []) : null;
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
    credential: {
      kind: c.credentialKind,
      headerName: c.credentialHeaderName,
      last4: c.credentialLast4,
      origins: c.credentialOrigins,
    },
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
  if (nameLengthProblem(name) !== null) problems.push(nameInvalid());
  // A slug the user chose is theirs: a clash is their error. One made from the name is numbered
  // (`_2`, `_3`…) as operation keys are, since the user never chose it.
  const chosen = input.slug != null;
  const baseSlug = chosen ? input.slug! : slugify(name);
  const slugProblem = checkSlug(baseSlug, ['input', 'slug']);
  if (slugProblem) problems.push(slugProblem);
  problems.push(...checkSource(services, input.kind, input, true));
  if (problems.length > 0) return { connection: null, userErrors: problems };

  const workspace = () => em.getReference(Workspace, workspaceId, { wrapped: true });
  let origins: string[] | null = null;
  if (input.credential && isKeyCredential(input.credential.kind)) {
    const draft = new Connection(workspace(), input.kind, name, baseSlug);
    applySource(draft, input);
    origins = await originsForNewKey(services, em, draft, await sourceAfter(em, draft, input), true);
  }
  for (let attempt = 1; ; attempt++) {
    const slug = chosen ? baseSlug : await freeSlug(em, workspaceId, baseSlug);
    const connection = new Connection(workspace(), input.kind, name, slug);
    applySource(connection, input);
    if (input.credential) applyCredential(services, connection, input.credential, origins);
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
      return { connection, userErrors: [] };
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
      em.clear();
      // Another connection took the numbered slug meanwhile: number again, a few times.
      if (!chosen && attempt < MAX_SLUG_ATTEMPTS) continue;
      return {
        connection: null,
        userErrors: [
          {
            field: ['input', 'slug'],
            code: 'SLUG_TAKEN',
            message: chosen
              ? `the workspace already has a connection "${slug}": choose another slug, or leave it out to have one made from the name`
              : `the workspace's connections kept taking the slug "${slug}"; try again`,
          },
        ],
      };
    }
  }
}

/** Tries at numbering a slug made from the name before giving up on concurrent creates. */
/** A connection name outside 1–200 characters, trimmed (`names.ts#nameLengthProblem`). */
function nameInvalid(): FieldProblem {
  return {
    field: ['input', 'name'],
    code: 'NAME_INVALID',
    message: `must be 1–${MAX_NAME_CHARS} characters`,
  };
}

const MAX_SLUG_ATTEMPTS = 5;

/** `slug`, or the first of `slug_2`, `slug_3`… that no connection of the workspace has. */
async function freeSlug(em: EntityManager, workspaceId: string, slug: string): Promise<string> {
  const rows = await em
    .getConnection()
    .execute<{ slug: string }[]>(
      `select slug from connection where workspace_id = ? and (slug = ? or slug like ?)`,
      [workspaceId, slug, `${slug}\\_%`],
    );
  return assignKey(slug, new Set(rows.map((r) => r.slug)));
}

/** True when the update changes where calls go: endpoint, description or base address. */
function movesSource(input: UpdateConnectionInput): boolean {
  return (
    input.endpointUrl != null ||
    input.baseUrl != null ||
    (input.descriptionUrl != null && input.descriptionUrl !== '') ||
    (input.descriptionText != null && input.descriptionText !== '')
  );
}

/** The connection's source as `input` would leave it (its normalised addresses, as `applySource` writes them). */
async function sourceAfter(
  em: EntityManager,
  connection: Connection,
  input: UpdateConnectionInput | CreateConnectionInput,
): Promise<SourceAfter> {
  const url = (raw: string) => new URL(raw.trim()).toString();
  const endpointUrl = input.endpointUrl != null ? url(input.endpointUrl) : connection.endpointUrl;
  const baseUrl =
    input.baseUrl != null ? (input.baseUrl === '' ? null : url(input.baseUrl)) : connection.baseUrl;
  let description: SourceAfter['description'] = null;
  if (input.descriptionUrl != null && input.descriptionUrl !== '')
    description = { url: url(input.descriptionUrl) };
  else if (input.descriptionText != null && input.descriptionText !== '')
    description = { text: input.descriptionText };
  else if (connection.descriptionUrl !== null) description = { url: connection.descriptionUrl };
  else if (connection.kind === ConnectionKind.OPENAPI) {
    await em.populate(connection, ['descriptionText']);
    if (connection.descriptionText) description = { text: connection.descriptionText };
  }
  return { kind: connection.kind, endpointUrl, baseUrl, description };
}

/**
 * Why an update of a key-based connection needs the key again, or `null`: after it, calls would
 * go to an origin the key was not given for (a new endpoint or base address, a description whose
 * servers, path or operation `servers`, or Swagger host name another host), or the description
 * would come from another host (which then decides where operations point). Whoever can edit a
 * connection but not read its key must not be able to send the key to a host of their own.
 */
async function keyNeededAgain(
  services: Services,
  em: EntityManager,
  connection: Connection,
  input: UpdateConnectionInput,
): Promise<FieldProblem | null> {
  if (!isKeyCredential(connection.credentialKind) || input.credential || !movesSource(input)) return null;
  const problem = (message: string): FieldProblem => ({
    field: ['input', 'credential'],
    code: 'CREDENTIAL_REQUIRED',
    message,
  });
  if (
    input.descriptionUrl != null &&
    input.descriptionUrl !== '' &&
    originOf(input.descriptionUrl.trim()) !== originOf(connection.descriptionUrl)
  ) {
    return problem(
      'the description would come from another host, which then decides where the key goes: give the credential again (or kind NONE) with the new address',
    );
  }
  const targets = await sourceKeyTargets(services, await sourceAfter(em, connection, input));
  // An unreadable description is reported by discovery, which holds any operation at another
  // origin; calls never attach the key there either.
  if (targets === null) return null;
  const uncovered = uncoveredOrigins(connection.credentialOrigins, targets);
  if (uncovered.length === 0) return null;
  return problem(
    `the key would be sent to ${uncovered.join(', ')}, which it was not given for: give the credential again (or kind NONE) with this change`,
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
  if (input.name != null && nameLengthProblem(input.name) !== null) problems.push(nameInvalid());
  problems.push(...checkSource(services, connection.kind, input, false));
  if (problems.length === 0) {
    const keyProblem = await keyNeededAgain(services, em, connection, input);
    if (keyProblem) problems.push(keyProblem);
  }
  if (problems.length > 0) return { connection: null, userErrors: problems };
  const origins =
    input.credential && isKeyCredential(input.credential.kind)
      ? await originsForNewKey(
          services,
          em,
          connection,
          await sourceAfter(em, connection, input),
          movesSource(input),
        )
      : null;
  const before = connectionSummary(connection);
  if (input.name != null) connection.name = input.name.trim();
  applySource(connection, input);
  if (input.credential) applyCredential(services, connection, input.credential, origins);
  audit(em, principal, {
    workspaceId: connection.workspace.id,
    action: 'UPDATE_CONNECTION',
    targetType: 'Connection',
    targetId: connection.nodeId,
    before,
    after: connectionSummary(connection),
  });
  await em.flush();
  await changed(services, em, connection);
  return { connection, userErrors: [] };
}

/** Deletes the connection and its operations (call history stays), announced to every instance. */
export async function deleteConnection(
  em: EntityManager,
  services: Pick<Services, 'mcp' | 'toolCache'>,
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
  await changed(services, em, connection);
}

/**
 * A new address or credential, or none: this process's MCP session is dropped (one begun under
 * another identity must not be reused) and every instance's tool cache drops the connection.
 */
async function changed(
  services: Pick<Services, 'mcp' | 'toolCache'>,
  em: EntityManager,
  connection: Connection,
): Promise<void> {
  services.mcp.forgetSession(connection.id);
  await announceToolChange(services, em.getConnection(), {
    kind: 'connection',
    id: connection.id,
    workspaceId: connection.workspace.id,
  });
}

/** The plain secret of a connection's key credential, for the outbound request; never logged. */
export function openCredential(services: Services, connection: Connection): string | null {
  if (!connection.credentialSecret) return null;
  return services.secrets.open(connection.credentialSecret, credentialAad(connection.id));
}
