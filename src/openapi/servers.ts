/**
 * Base addresses: the connection's override, the description's servers (2.0 `host`/`basePath`/
 * `schemes`, 3.x `servers` with variables), relative addresses resolved against the description's
 * own, and placeholders that cannot be called. Pure.
 */
import { AppError } from '../errors.js';
import { type DescriptionVersion } from './model.js';
import { type Obj, isObj, own, ownString } from './document.js';
import { type Converter } from './schema.js';
import { type CompiledUrlPolicy, judgeUrl, type UrlFormProblem, urlForm } from '../http/url-policy.js';

// ---------------------------------------------------------------------------------------------
// Base address

function trimSlash(url: URL): string {
  const text = `${url.origin}${url.pathname}${url.search}`;
  return text.endsWith('/') ? text.slice(0, -1) : text;
}

/** The `baseUrl` override's problems, as the conversion words them (the form is `urlForm`'s). */
const BASE_URL_PROBLEMS: Record<UrlFormProblem, (got: string) => string> = {
  INVALID: (got) => `baseUrl must be an absolute https:// address; got ${got}.`,
  SCHEME: (got) => `baseUrl must be an https:// address; got ${got}.`,
  HTTP: (got) => `baseUrl must be an https:// address; got ${got}.`,
  CREDENTIALS: () => 'baseUrl must not contain credentials or a fragment.',
  FRAGMENT: () => 'baseUrl must not contain credentials or a fragment.',
};

/**
 * The `baseUrl` override without its trailing slash, once `http/url-policy.ts#urlForm` (the rule
 * the save-time check uses too) finds it of the right form: absolute `https://`, no credentials, no
 * fragment. Throws `BASE_URL_INVALID` otherwise.
 */
export function normalizeBaseUrl(baseUrl: string): string {
  const form = urlForm(baseUrl, { httpsOnly: true });
  if (!form.ok)
    throw new AppError('BASE_URL_INVALID', BASE_URL_PROBLEMS[form.problem](JSON.stringify(baseUrl)));
  return trimSlash(form.url);
}

function httpUrl(text: string, against: string | null): URL | null {
  try {
    const url = against === null ? new URL(text) : new URL(text, against);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/**
 * Why the description's own base address cannot be called, or `null`: a placeholder host such as
 * Azure's `x-ms-parameterized-host` with `host: azure.local`, or an address that the outbound rule
 * (`http/url-policy.ts#judgeUrl`, the one that decides every call) refuses under `policy`, such as
 * plain `http` to a host that is not allow-listed.
 */
export function uncallableBase(root: Obj, base: string | null, policy: CompiledUrlPolicy): string | null {
  if (base === null) return null;
  const placeholder = placeholderBase(root, base, true);
  if (placeholder !== null) return placeholder;
  const verdict = judgeUrl(base, policy);
  if (verdict.ok) return null;
  switch (verdict.reason) {
    case 'HTTP':
      return `the description offers only ${JSON.stringify(base)}, which is not https (plain http is allowed only for hosts in OUTBOUND_ALLOW_HOSTS)`;
    case 'ADDRESS':
      return `${JSON.stringify(base)} is a ${verdict.range ?? 'non-public'} address, which calls refuse unless the host is in OUTBOUND_ALLOW_HOSTS`;
    default:
      return `${JSON.stringify(base)} is not an address calls can use`;
  }
}

/**
 * Why an operation's base address is a placeholder, or `null`. The document's own base is one when
 * the host is parameterized (`x-ms-parameterized-host`); any base is one when its host is a name
 * reserved for examples, tests or the local network (`.example`, `.invalid`, `.test`, `.local`).
 * Plain `http` is left to the outbound policy, which allows it for listed hosts.
 */
export function placeholderBase(root: Obj, base: string, fromDocument: boolean): string | null {
  if (fromDocument && isObj(own(root, 'x-ms-parameterized-host')))
    return `the host is parameterized (x-ms-parameterized-host) and ${JSON.stringify(base)} is a placeholder`;
  let host: string;
  try {
    host = new URL(base).hostname;
  } catch {
    return null;
  }
  if (/\.(local|example|invalid|test)$/i.test(host)) return `${JSON.stringify(base)} is a placeholder host`;
  return null;
}

export function documentBase(
  c: Converter,
  root: Obj,
  version: DescriptionVersion,
  descriptionUrl: string | null,
): string | null {
  if (version !== 'swagger-2.0') {
    const fromServers = serverBase(c, own(root, 'servers'), descriptionUrl, 'servers');
    if (fromServers !== null) return fromServers;
    // Without servers, OpenAPI 3 says the server is "/", relative to where the description lives.
    const fallback = descriptionUrl === null ? null : httpUrl('/', descriptionUrl);
    return fallback === null ? null : trimSlash(fallback);
  }
  const described = descriptionUrl === null ? null : httpUrl(descriptionUrl, null);
  const hostValue = ownString(root, 'host');
  const host = hostValue ?? described?.host;
  if (host === undefined || host === '') return null;
  const schemes = own(root, 'schemes');
  const listed = Array.isArray(schemes) ? schemes.filter((s): s is string => typeof s === 'string') : [];
  // Without `schemes`, Swagger 2 uses the scheme the description was served with.
  const scheme = listed.includes('https')
    ? 'https'
    : listed.includes('http')
      ? 'http'
      : (described?.protocol.slice(0, -1) ?? 'https');
  const basePathValue = ownString(root, 'basePath') ?? '';
  const basePath = basePathValue.startsWith('/') ? basePathValue : `/${basePathValue}`;
  const url = httpUrl(`${scheme}://${host}${basePath}`, null);
  if (url === null) {
    c.diag(
      `host ${JSON.stringify(host)} with basePath ${JSON.stringify(basePathValue)} is not a valid address`,
    );
    return null;
  }
  return trimSlash(url);
}

/**
 * The base address among the URLs a `servers` list resolves to (in document order): the first
 * `https` one, else the first. One pure rule, so that whoever asks which origin an operation's
 * credential goes to gets the same answer as the call.
 */
export function chooseServer(urls: readonly string[]): string | null {
  return urls.find((u) => u.startsWith('https://')) ?? urls[0] ?? null;
}

/** The chosen server of a `servers` list (see `chooseServer`), each resolved with its variables' defaults. */
export function serverBase(
  c: Converter,
  servers: unknown,
  descriptionUrl: string | null,
  where: string,
): string | null {
  if (!Array.isArray(servers) || servers.length === 0) return null;
  const urls: string[] = [];
  servers.forEach((server: unknown, i) => {
    const url = resolveServer(c, server, descriptionUrl, where, i);
    if (url !== null) urls.push(url);
  });
  return chooseServer(urls);
}

/** `servers[i].url` with its variables replaced by their defaults, resolved against the description's address. */
function resolveServer(
  c: Converter,
  server: unknown,
  descriptionUrl: string | null,
  where: string,
  i: number,
): string | null {
  const template = isObj(server) ? ownString(server, 'url') : undefined;
  if (server === undefined || !isObj(server) || template === undefined) {
    c.diag(`${where}: servers[${i}] has no "url"; ignored`);
    return null;
  }
  const variables = own(server, 'variables');
  const unresolved: string[] = [];
  const text = template.replace(/\{([^{}]*)\}/g, (_match, name: string) => {
    const variable = isObj(variables) ? own(variables, name) : undefined;
    const value = isObj(variable) ? own(variable, 'default') : undefined;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    unresolved.push(name);
    return '';
  });
  if (unresolved.length > 0) {
    c.diag(`${where}: server variable {${unresolved[0]}} has no default; servers[${i}] ignored`);
    return null;
  }
  const url = httpUrl(text, descriptionUrl);
  if (url === null) {
    const why =
      descriptionUrl === null && httpUrl(text, 'https://relative.invalid') !== null
        ? 'is relative and the description has no address'
        : 'is not an http(s) address';
    c.diag(`${where}: server URL ${JSON.stringify(template)} ${why}; ignored`);
    return null;
  }
  return trimSlash(url);
}
