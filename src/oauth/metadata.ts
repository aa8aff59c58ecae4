/**
 * The pure rules of OAuth discovery for an MCP server (protocol 2025-06-18, basic/authorization.mdx):
 * where to look for metadata, whether a protected resource covers our endpoint, which scopes to
 * ask for, and how our client authenticates at the token endpoint.
 */

/** Client authentication methods we can use at the token endpoint, in order of preference. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** RFC 8414 §2: when `token_endpoint_auth_methods_supported` is omitted, the default is this. */
const DEFAULT_AUTH_METHODS: readonly string[] = ['client_secret_basic'];

function pathOf(url: URL): string {
  return url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
}

/**
 * RFC 9728 §3.1 well-known addresses of the protected-resource metadata of an endpoint, to probe
 * in order when the 401 names none: the path-aware form first (`/.well-known/oauth-protected-
 * resource/mcp` for `/mcp`), then the root form.
 */
export function protectedResourceMetadataUrls(endpointUrl: string): string[] {
  const url = new URL(endpointUrl);
  const path = pathOf(url);
  const urls = [];
  if (path !== '') urls.push(`${url.origin}/.well-known/oauth-protected-resource${path}`);
  urls.push(`${url.origin}/.well-known/oauth-protected-resource`);
  return urls;
}

/**
 * Where an issuer's metadata may be, in order: RFC 8414 (`oauth-authorization-server`, with the
 * path inserted after the well-known segment), then OpenID Connect Discovery, in both its
 * path-inserted and path-appended forms.
 */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = pathOf(url);
  if (path === '') {
    return [
      `${url.origin}/.well-known/oauth-authorization-server`,
      `${url.origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

/**
 * Whether the resource a server's metadata names (RFC 9728 `resource`) covers our endpoint: same
 * scheme, host and port, and the endpoint's path is the resource's path or below it, on a segment
 * boundary. A resource with a fragment covers nothing (RFC 8707 §2).
 */
export function resourceCoversEndpoint(resource: string, endpointUrl: string): boolean {
  let r: URL;
  let e: URL;
  try {
    r = new URL(resource);
    e = new URL(endpointUrl);
  } catch {
    return false;
  }
  if (r.hash !== '' || resource.includes('#')) return false;
  if (r.origin !== e.origin) return false;
  if (r.search !== '' && r.search !== e.search) return false;
  const rp = pathOf(r);
  const ep = pathOf(e);
  return rp === '' || ep === rp || ep.startsWith(`${rp}/`);
}

/** RFC 6749 §3.3 scope-token characters (NQCHAR without space). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** Scopes kept from servers' answers: a longer request is refused rather than sent. */
export const MAX_SCOPE_CHARS = 2_000;
/** Distinct scope tokens kept. */
export const MAX_SCOPE_TOKENS = 64;

/**
 * The union of space-separated scope lists, in first-seen order, keeping only well-formed scope
 * tokens. Null when nothing is left, or when the union passes `MAX_SCOPE_TOKENS` tokens or
 * `MAX_SCOPE_CHARS` characters (a hostile server's step-up demand must not grow without bound).
 */
export function mergeScopes(...lists: (string | null | undefined)[]): string | null {
  const tokens = new Set<string>();
  for (const list of lists) {
    if (typeof list !== 'string') continue;
    for (const token of list.split(/[ \t]+/)) if (token !== '' && SCOPE_TOKEN.test(token)) tokens.add(token);
  }
  if (tokens.size === 0) return null;
  const joined = [...tokens].join(' ');
  return tokens.size > MAX_SCOPE_TOKENS || joined.length > MAX_SCOPE_CHARS ? null : joined;
}

/**
 * Scopes to request: those the 401 challenge asks for, else the protected resource's
 * `scopes_supported`, else none (the authorization server then applies its default).
 */
export function selectScopes(challengeScope: string | null, resourceScopes: unknown): string | null {
  if (challengeScope !== null && challengeScope.trim() !== '') return challengeScope.trim();
  if (Array.isArray(resourceScopes)) {
    const scopes = resourceScopes.filter((s): s is string => typeof s === 'string' && SCOPE_TOKEN.test(s));
    if (scopes.length > 0) return [...new Set(scopes)].join(' ');
  }
  return null;
}

/**
 * How our client authenticates at the token endpoint, given what the server supports.
 * - A client we register ourselves (`hasSecret` unknown yet): `client_secret_basic`, else
 *   `client_secret_post`, else `none` (a public client with PKCE).
 * - An operator-given client with a secret: `client_secret_basic`, else `client_secret_post`;
 *   null when the server supports neither.
 * - An operator-given client without a secret: `none`.
 */
export function chooseAuthMethod(
  supported: unknown,
  client: 'register' | 'secret' | 'public',
): TokenEndpointAuthMethod | null {
  const list = Array.isArray(supported)
    ? supported.filter((m): m is string => typeof m === 'string')
    : DEFAULT_AUTH_METHODS;
  if (client === 'public') return 'none';
  if (list.includes('client_secret_basic')) return 'client_secret_basic';
  if (list.includes('client_secret_post')) return 'client_secret_post';
  if (client === 'register' && list.includes('none')) return 'none';
  return null;
}

/** Whether the server's metadata allows PKCE with S256. An absent list is taken as allowing it. */
export function supportsS256(codeChallengeMethods: unknown): boolean {
  return !Array.isArray(codeChallengeMethods) || codeChallengeMethods.includes('S256');
}
