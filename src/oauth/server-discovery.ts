/**
 * Finds out how to sign in to an MCP server (I/O; the rules are in `metadata.ts` and
 * `challenge.ts`), following protocol 2025-06-18 basic/authorization.mdx:
 *
 * 1. Ask the endpoint without credentials (an `initialize` POST). A 401 carries
 *    `WWW-Authenticate: Bearer resource_metadata="…"`.
 * 2. Fetch the protected-resource metadata (RFC 9728) from there; if the header names none, or it
 *    fails, probe the well-known addresses (path-aware first, then root).
 * 3. Fetch the metadata of its first authorization server: RFC 8414, then OpenID discovery. The
 *    `issuer` must match (oauth4webapi checks it).
 *
 * Everything goes through the outbound client. Errors are `OAuthError`s a person can act on.
 */
import * as oauth from 'oauth4webapi';
import { isOutboundError, type OutboundClient } from '../http/outbound.js';
import { MCP_PROTOCOL_VERSION } from '../mcp/client.js';
import { bearerChallenge, type BearerChallenge } from './challenge.js';
import { OAuthError, OAuthErrorCode } from './errors.js';
import type { OAuthFetch } from './fetch.js';
import {
  authorizationServerMetadataUrls,
  protectedResourceMetadataUrls,
  resourceCoversEndpoint,
  selectScopes,
  supportsS256,
} from './metadata.js';
import { isObject } from '../operations/types.js';

/** Body cap of the probe's answer, which we only read the headers of. */
const PROBE_MAX_BODY_BYTES = 64 * 1024; // 64 KiB

export interface AuthorizationTarget {
  /** The RFC 8707 resource indicator: the `resource` the server's metadata names. */
  resource: string;
  /** Null for a 2025-03-26 server, which publishes none. */
  resourceMetadataUrl: string | null;
  issuer: string;
  server: oauth.AuthorizationServer;
  /** Space-separated scopes to request, or null for the server's default. */
  scope: string | null;
  /** The 401 challenge, if the endpoint answered with one. */
  challenge: BearerChallenge | null;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the server';
  }
}

/** Options every oauth4webapi call gets: our fetch, and http allowed (the outbound client decides). */
export function transportOptions(fetch: OAuthFetch): {
  [oauth.customFetch]: OAuthFetch;
  [oauth.allowInsecureRequests]: boolean;
} {
  return {
    [oauth.customFetch]: fetch,
    // oauth4webapi refuses http:// on its own; the outbound client already enforces https except
    // for allow-listed hosts (and loopback in dev and test), which must keep working here too.
    [oauth.allowInsecureRequests]: true,
  };
}

/** Step 1: the endpoint's 401 challenge, or null when it answered otherwise. */
export async function probeChallenge(
  outbound: OutboundClient,
  endpointUrl: string,
): Promise<BearerChallenge | null> {
  return (await probe(outbound, endpointUrl)).challenge;
}

/** Step 1, with whether the endpoint answered 401 at all (a 2025-03-26 server may send no challenge). */
async function probe(
  outbound: OutboundClient,
  endpointUrl: string,
): Promise<{ unauthorized: boolean; challenge: BearerChallenge | null }> {
  let res;
  try {
    res = await outbound.request(endpointUrl, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': MCP_PROTOCOL_VERSION,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: MCP_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'connected-tools', version: '0.1.0' },
        },
      }),
      maxBodyBytes: PROBE_MAX_BODY_BYTES,
    });
  } catch (err) {
    throw new OAuthError(
      OAuthErrorCode.SERVER_UNREACHABLE,
      isOutboundError(err)
        ? `the MCP server could not be asked: ${err.message}`
        : 'the MCP server could not be asked',
      { field: ['input', 'connectionId'], cause: isOutboundError(err) ? err : undefined },
    );
  }
  const raw = res.headers['www-authenticate'];
  await res.dump();
  if (res.status !== 401) return { unauthorized: false, challenge: null };
  return { unauthorized: true, challenge: bearerChallenge(Array.isArray(raw) ? raw.join(', ') : raw) };
}

/** Step 2: the protected-resource metadata, from the challenge's address or the well-known ones. */
async function fetchResourceMetadata(
  fetch: OAuthFetch,
  endpointUrl: string,
  challenge: BearerChallenge | null,
): Promise<{ url: string; metadata: Record<string, unknown> }> {
  const candidates = [
    ...new Set([
      ...(challenge?.resourceMetadata ? [challenge.resourceMetadata] : []),
      ...protectedResourceMetadataUrls(endpointUrl),
    ]),
  ];
  for (const url of candidates) {
    let body: unknown;
    try {
      const res = await fetch(url, { method: 'GET', headers: { accept: 'application/json' } });
      if (res.status !== 200) continue;
      body = await res.json();
    } catch {
      continue; // refused, unreachable or not JSON: the next address may still answer
    }
    if (!isObject(body) || typeof body.resource !== 'string' || !Array.isArray(body.authorization_servers))
      continue;
    if (!resourceCoversEndpoint(body.resource, endpointUrl)) {
      throw new OAuthError(
        OAuthErrorCode.RESOURCE_MISMATCH,
        `the protected-resource metadata at ${hostOf(url)} is for another resource than this connection's endpoint`,
        { field: ['input', 'connectionId'] },
      );
    }
    return { url, metadata: body };
  }
  throw new OAuthError(
    OAuthErrorCode.OAUTH_NOT_ADVERTISED,
    `${hostOf(endpointUrl)} does not advertise an OAuth sign-in (no protected-resource metadata was found)`,
    { field: ['input', 'connectionId'] },
  );
}

/** The metadata fields holding addresses that the service fetches or hands to a browser. */
const SERVER_ADDRESS_FIELDS = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
] as const;

/**
 * Every address an authorization server's metadata gives must pass the outbound client's own
 * rule (`https://`, or loopback `http://` in development, or an allow-listed host): the
 * authorization endpoint is shown to a person as "open this in a browser", so a `javascript:`
 * URL there would run in the console's origin. Throws `ADDRESS_REFUSED` naming the field.
 */
export function checkServerAddresses(
  outbound: Pick<OutboundClient, 'checkUrl'>,
  server: oauth.AuthorizationServer,
): void {
  for (const field of SERVER_ADDRESS_FIELDS) {
    const value: unknown = server[field];
    if (value === undefined && field === 'registration_endpoint') continue;
    try {
      if (typeof value !== 'string') throw new Error('not a string');
      outbound.checkUrl(value);
    } catch (cause) {
      throw new OAuthError(
        OAuthErrorCode.ADDRESS_REFUSED,
        `the authorization server's metadata gives an address for ${field} that is not allowed: it must be an https:// address`,
        { field: ['input', 'connectionId'], cause },
      );
    }
  }
}

/** Step 3: the authorization server's metadata, RFC 8414 first, then OpenID discovery. */
async function fetchServerMetadata(fetch: OAuthFetch, issuer: string): Promise<oauth.AuthorizationServer> {
  const server = await findServerMetadata(fetch, issuer);
  if (server !== null) return server;
  throw new OAuthError(
    OAuthErrorCode.AUTHORIZATION_SERVER_UNAVAILABLE,
    `no authorization-server metadata was found for ${new URL(issuer).host}`,
    { field: ['input', 'connectionId'] },
  );
}

/**
 * The issuer a 2025-03-26 server's metadata names, when it is on the MCP server's origin (seen:
 * `https://host/oauth` served at `https://host/.well-known/oauth-authorization-server`). That
 * revision knows no issuer beforehand, only the origin; the metadata is then checked against the
 * issuer it names, so an issuer on another origin is refused. Reads a clone of the answer.
 */
async function issuerOnOrigin(res: Response, origin: string): Promise<URL> {
  const body: unknown = await res
    .clone()
    .json()
    .catch(() => null);
  const issuer = isObject(body) && typeof body.issuer === 'string' ? body.issuer : '';
  const url = URL.canParse(issuer) ? new URL(issuer) : null;
  if (url === null || url.origin !== origin) throw new Error('the issuer is not on the server origin');
  return url;
}

/** Step 3, null when no address has metadata. Throws when metadata exists but cannot be used. */
async function findServerMetadata(
  fetch: OAuthFetch,
  issuer: string,
  anyIssuerOnOrigin = false,
): Promise<oauth.AuthorizationServer | null> {
  const expected = new URL(issuer);
  for (const url of authorizationServerMetadataUrls(issuer)) {
    let server: oauth.AuthorizationServer;
    try {
      const res = await fetch(url, { method: 'GET', headers: { accept: 'application/json' } });
      server = await oauth.processDiscoveryResponse(
        anyIssuerOnOrigin ? await issuerOnOrigin(res, expected.origin) : expected,
        res,
      );
    } catch {
      continue;
    }
    if (typeof server.authorization_endpoint !== 'string' || typeof server.token_endpoint !== 'string') {
      throw new OAuthError(
        OAuthErrorCode.AUTHORIZATION_SERVER_UNAVAILABLE,
        `the authorization server ${expected.host} lists no authorization or token endpoint`,
        { field: ['input', 'connectionId'] },
      );
    }
    const responseTypes = server.response_types_supported;
    if (
      !supportsS256(server.code_challenge_methods_supported) ||
      (Array.isArray(responseTypes) && !responseTypes.includes('code'))
    ) {
      throw new OAuthError(
        OAuthErrorCode.FLOW_UNSUPPORTED,
        `the authorization server ${expected.host} does not offer the authorization code flow with PKCE S256`,
        { field: ['input', 'connectionId'] },
      );
    }
    return server;
  }
  return null;
}

/**
 * Protocol 2025-03-26 (basic/authorization.mdx, "Server Metadata Discovery" and "Fallbacks for
 * Servers without Metadata Discovery"), for a server that answers 401 but publishes no
 * protected-resource metadata: the authorization server is the MCP server's origin (its path
 * discarded); its RFC 8414 metadata is read from there, else the default endpoints `/authorize`,
 * `/token` and `/register` at that origin are used. Every address still passes the outbound rule.
 */
async function legacyTarget(
  fetch: OAuthFetch,
  endpointUrl: string,
  challenge: BearerChallenge | null,
): Promise<AuthorizationTarget> {
  const origin = new URL(endpointUrl).origin;
  // Metadata that exists but cannot be used (no PKCE S256, no endpoints) throws: it is an answer.
  const server = (await findServerMetadata(fetch, origin, true)) ?? {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
  };
  return {
    resource: endpointUrl,
    resourceMetadataUrl: null,
    issuer: server.issuer,
    server,
    scope: selectScopes(challenge?.scope ?? null, undefined),
    challenge,
  };
}

/** Steps 1–3 (or the 2025-03-26 fallbacks). Throws `OAuthError`. */
export async function discoverAuthorization(
  outbound: OutboundClient,
  fetch: OAuthFetch,
  endpointUrl: string,
): Promise<AuthorizationTarget> {
  const { unauthorized, challenge } = await probe(outbound, endpointUrl);
  let found: { url: string; metadata: Record<string, unknown> };
  try {
    found = await fetchResourceMetadata(fetch, endpointUrl, challenge);
  } catch (err) {
    // A 401 that names no resource metadata, from a server that has none: a 2025-03-26 server.
    const legacy =
      err instanceof OAuthError &&
      err.code === OAuthErrorCode.OAUTH_NOT_ADVERTISED &&
      unauthorized &&
      challenge?.resourceMetadata == null;
    if (!legacy) throw err;
    const target = await legacyTarget(fetch, endpointUrl, challenge);
    checkServerAddresses(outbound, target.server);
    return target;
  }
  const { url, metadata } = found;
  const servers = (metadata.authorization_servers as unknown[]).filter(
    (s): s is string => typeof s === 'string',
  );
  const issuer = servers.find((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'https:' || u.protocol === 'http:';
    } catch {
      return false;
    }
  });
  if (issuer === undefined) {
    throw new OAuthError(
      OAuthErrorCode.AUTHORIZATION_SERVER_UNAVAILABLE,
      `the protected-resource metadata at ${hostOf(url)} names no usable authorization server`,
      { field: ['input', 'connectionId'] },
    );
  }
  const server = await fetchServerMetadata(fetch, issuer);
  checkServerAddresses(outbound, server);
  return {
    resource: metadata.resource as string,
    resourceMetadataUrl: url,
    issuer: server.issuer,
    server,
    scope: selectScopes(challenge?.scope ?? null, metadata.scopes_supported),
    challenge,
  };
}
