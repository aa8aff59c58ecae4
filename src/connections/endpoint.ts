import type { McpAuth, McpEndpoint } from '../mcp/client.js';
import { CredentialKind } from './connection.entity.js';
import { AppError } from '../errors.js';
import { isKeyCredential, mayCarryKey, originOf } from './key-origins.js';
import { makeScrubber, NO_SECRETS, type Scrubber } from './scrub.js';
import type { SecretBox } from './secrets.js';

/** Opening a connection's secrets and building its endpoint (a part of app.ts's services). */
export interface EndpointDeps {
  secrets: SecretBox;
  oauth: EndpointOAuth;
}

/** What endpoints read of OAuth (`oauth/oauth.service.ts#OAuthService` is it), for OAUTH connections. */
export interface EndpointOAuth {
  /** The `authorization` header for the next request, renewed first when due. */
  authHeaders(connectionId: string): Promise<Record<string, string>>;
  /** Every OAuth secret the connection holds, in clear, only to scrub them from what comes back; never log them. */
  credentialSecrets(connectionId: string): Promise<string[]>;
}

/** The associated data that binds a sealed credential to its connection: a copied blob won't open. */
export function credentialAad(connectionId: string): string {
  return `connection:${connectionId}:credential`;
}

/** What reaching a connection needs: a Connection entity, or the tool cache's snapshot of one. */
export interface ConnectionTarget {
  id: string;
  endpointUrl: string | null;
  timeoutMs: number | null;
  credentialKind: CredentialKind;
  credentialHeaderName: string | null;
  /** Sealed; opened only here, just before a request. */
  credentialSecret: string | null;
  /** BEARER and HEADER: the origins the key was given for; the key goes nowhere else. */
  credentialOrigins: readonly string[] | null;
  /** MCP: the protocol version stored at the last discovery (decides the era of calls). */
  protocolVersion?: string | null;
}

/** The plain key of a BEARER or HEADER connection; null for others. Never log it. */
export function openSecret(services: EndpointDeps, target: ConnectionTarget): string | null {
  if (target.credentialKind !== CredentialKind.BEARER && target.credentialKind !== CredentialKind.HEADER)
    return null;
  return target.credentialSecret
    ? services.secrets.open(target.credentialSecret, credentialAad(target.id))
    : null;
}

/** A key connection's key, opened, and the scrubber of it (DESIGN.md rule 15). */
export interface OpenedKey {
  /** Null for a connection without a key (NONE, OAUTH). Never log it. */
  key: string | null;
  /** Every form of the key, for what the connection's servers send back. */
  scrubber: Scrubber;
}

/** Opened keys kept per process: enough for the connections a busy instance calls. */
export const OPENED_KEYS_KEPT = 256;
const NO_KEY: OpenedKey = { key: null, scrubber: NO_SECRETS };
/**
 * Per SecretBox, by connection id and sealed value: the same pair always opens to the same key
 * (the id is the sealed value's associated data, so a value copied to another connection is
 * still refused by `open`).
 */
const openedKeys = new WeakMap<SecretBox, Map<string, OpenedKey>>();

/**
 * `openSecret` and the key's scrubber for the turn path, which would otherwise open the key
 * (AES-GCM) and build its scrubber (every form, every 8-character window) on every call. Kept by
 * sealed value, so a changed credential (a new sealed value) is opened afresh whatever the tool
 * cache holds; at most `OPENED_KEYS_KEPT`, the oldest dropped first. The process holds the key
 * that opens every sealed value anyway; what is kept never leaves it. Throws like `openSecret`.
 */
export function openedKey(services: EndpointDeps, target: ConnectionTarget): OpenedKey {
  const sealed = target.credentialSecret;
  if (!isKeyCredential(target.credentialKind) || !sealed) return NO_KEY;
  let kept = openedKeys.get(services.secrets);
  if (!kept) openedKeys.set(services.secrets, (kept = new Map()));
  const id = `${target.id}:${sealed}`;
  const hit = kept.get(id);
  if (hit) return hit;
  const key = openSecret(services, target);
  const opened: OpenedKey = { key, scrubber: key === null ? NO_SECRETS : makeScrubber([key]) };
  if (kept.size >= OPENED_KEYS_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(id, opened);
  return opened;
}

/** The error code of a request the key may not go with: its origin is not one the key was given for. */
export const KEY_ORIGIN_NOT_GIVEN = 'KEY_ORIGIN_NOT_GIVEN';

/**
 * Why the connection's key may not go with a request to `url`, or `null` when it may (or there is
 * no key). Callers check first and refuse the call; the functions below throw as a last line.
 */
export function keyRefusal(target: ConnectionTarget, url: string): string | null {
  if (!isKeyCredential(target.credentialKind) || mayCarryKey(target.credentialOrigins, url)) return null;
  const origin = originOf(url) ?? 'an address without an origin';
  return `the connection's key was not given for ${origin}`;
}

function assertKeyMayGo(target: ConnectionTarget, url: string): void {
  const refusal = keyRefusal(target, url);
  if (refusal !== null)
    throw new AppError(KEY_ORIGIN_NOT_GIVEN, `${refusal}; give the credential again to send it there`);
}

/**
 * The credential of a key-based connection as request headers for a request to `url` (OpenAPI
 * calls). Throws `KEY_ORIGIN_NOT_GIVEN` when the key was not given for that origin.
 */
export function credentialHeaders(
  services: EndpointDeps,
  target: ConnectionTarget,
  url: string,
  /** The key when the caller opened it already (`openedKey`). */
  opened?: string | null,
): Record<string, string> {
  assertKeyMayGo(target, url);
  const secret = opened === undefined ? openSecret(services, target) : opened;
  if (secret === null) return {};
  if (target.credentialKind === CredentialKind.HEADER && target.credentialHeaderName)
    return { [target.credentialHeaderName]: secret };
  return { authorization: `Bearer ${secret}` };
}

/**
 * How the MCP client reaches a connection: address, credential, timeout, session key. Throws
 * `KEY_ORIGIN_NOT_GIVEN` when the connection's key was not given for the endpoint's origin.
 */
export function mcpEndpoint(
  services: EndpointDeps,
  target: ConnectionTarget,
  /** The key when the caller opened it already (`openedKey`). */
  opened?: string | null,
): McpEndpoint {
  assertKeyMayGo(target, target.endpointUrl ?? '');
  let auth: McpAuth = { kind: 'none' };
  const secret = opened === undefined ? openSecret(services, target) : opened;
  if (secret !== null && target.credentialKind === CredentialKind.BEARER)
    auth = { kind: 'bearer', token: secret };
  if (secret !== null && target.credentialKind === CredentialKind.HEADER && target.credentialHeaderName) {
    auth = { kind: 'header', name: target.credentialHeaderName, value: secret };
  }
  const endpoint: McpEndpoint = {
    id: target.id,
    url: target.endpointUrl ?? '',
    auth,
    timeoutMs: target.timeoutMs ?? undefined,
    protocolVersion: target.protocolVersion ?? null,
  };
  const oauth = services.oauth;
  if (target.credentialKind === CredentialKind.OAUTH)
    endpoint.getAuthHeaders = () => oauth.authHeaders(target.id);
  return endpoint;
}

/**
 * Every secret a connection could send, for the Scrubber of whatever its servers return (DESIGN.md
 * rule 15): its key or named-header value, or its OAuth access and refresh tokens and client
 * secrets.
 */
export async function connectionSecrets(services: EndpointDeps, target: ConnectionTarget): Promise<string[]> {
  const secrets: string[] = [];
  const key = openSecret(services, target);
  if (key !== null) secrets.push(key);
  if (target.credentialKind === CredentialKind.OAUTH)
    secrets.push(...(await services.oauth.credentialSecrets(target.id)));
  return secrets;
}
