/**
 * Which addresses the service may call: the one static rule (pure). It decides when a connection is
 * saved (`checkUrl`), when a request or a redirect hop is sent (`OutboundClient.checkUrl`) and when a
 * description's base address is judged callable (`openapi/servers.ts#uncallableBase`), so that an
 * operator can never save an address that every call refuses, nor be refused one calls would take.
 * Beside it, the form of an address field (`urlForm`: no fragment; `https:` only for the `baseUrl`
 * override), which the save-time check and a description's conversion both ask.
 *
 * The rule, `judgeUrl`:
 * - an absolute `http:` or `https:` URL, without a user name or password;
 * - `http:` only to an allow-listed host, or with `allowLoopback` to a loopback host (`localhost`,
 *   `*.localhost`, any loopback IP literal such as `127.0.0.2` or `[::1]`);
 * - a host written as an IP literal must be public, or loopback with `allowLoopback`, unless it is
 *   allow-listed; a loopback name counts as a loopback address (RFC 6761 reserves it).
 *
 * Host names are compared as the URL parser writes them (lower case, IDN as punycode, IPv4 in dotted
 * form, IPv6 compressed), with one trailing dot dropped. An allow-list entry `name:port` matches that
 * port only, the scheme's default port included (`example.com:80` matches `http://example.com/`).
 * Names are judged again at connect time, on the addresses DNS returns (`outbound.ts`).
 */
import ipaddr from 'ipaddr.js';
import { Memo } from '../memo.js';

export interface UrlPolicy {
  /** Hosts (`name`, `name:port`, `[v6]` or `[v6]:port`) allowed over http:// and to non-public addresses. */
  allowHosts: readonly string[];
  /** Dev and test: loopback hosts are allowed, over http:// too. */
  allowLoopback: boolean;
}

/** Why an address is refused. `ADDRESS` carries the range of the IP literal (or `loopback` for a name). */
export type UrlRefusal = 'INVALID' | 'SCHEME' | 'CREDENTIALS' | 'HTTP' | 'ADDRESS';

export type UrlVerdict =
  | { ok: true; url: URL; allowListed: boolean }
  | { ok: false; reason: UrlRefusal; url: URL | null; host: string; range?: string };

export type UrlCheck =
  { ok: true; url: URL } | { ok: false; code: 'URL_INVALID' | 'URL_REFUSED'; message: string };

/**
 * Classifies an IP address (no brackets) by the special range it falls in. `unicast` means public;
 * everything else is refused unless allowed. IPv4-mapped IPv6 addresses are `ipv4Mapped`, except
 * mapped loopback (`loopback`); the deprecated IPv4-compatible `::a.b.c.d` block is `ipv4Compatible`.
 * Returns `invalid` for a string that is not an address.
 */
export function classifyAddress(address: string): string {
  if (!ipaddr.isValid(address)) return 'invalid';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      return v6.toIPv4Address().range() === 'loopback' ? 'loopback' : 'ipv4Mapped';
    }
    const range = v6.range();
    if (range === 'unicast' && v6.parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible';
    return range;
  }
  return (parsed as ipaddr.IPv4).range();
}

/** Classification is a few microseconds; IP-literal URLs repeat on every call, so keep a few. */
const ranges = new Memo(256, classifyAddress);

/** Whether a connection to this address (no brackets) is allowed without an allow-list entry. */
export function isAddressAllowed(address: string, allowLoopback: boolean): boolean {
  const range = ranges.get(address);
  return range === 'unicast' || (allowLoopback && range === 'loopback');
}

/** Whether `text` is an IPv4 or IPv6 address written the way the URL parser leaves one (no brackets). */
function isIpLiteral(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (text.includes(':') && ipaddr.IPv6.isValid(text));
}

interface HostRule {
  host: string;
  port: string | null;
}

/** A policy with its allow-list parsed, made once per policy object. */
export interface CompiledUrlPolicy {
  readonly rules: readonly HostRule[];
  readonly allowLoopback: boolean;
}

/** A host as compared: no brackets, no trailing dot. */
function bareHost(hostname: string): string {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return bare.endsWith('.') ? bare.slice(0, -1) : bare;
}

function parseHostRule(entry: string): HostRule {
  const trimmed = entry.trim();
  const m = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(trimmed);
  let host: string | null = null;
  if (m?.[1]) {
    try {
      // The URL parser's spelling of the host, the one `judgeUrl` compares against.
      host = bareHost(new URL(`http://${m[1]}/`).hostname);
    } catch {
      host = null;
    }
  }
  const port = m?.[2] === undefined ? null : Number(m[2]);
  if (host === null || host === '' || (port !== null && port > 65_535))
    throw new TypeError(`allowHosts entry "${entry}" must be a host or host:port`);
  return { host, port: port === null ? null : String(port) };
}

const compiled = new WeakMap<UrlPolicy, CompiledUrlPolicy>();

/** Parses the allow-list once per policy object. Throws `TypeError` for an entry that is not a host. */
export function compileUrlPolicy(policy: UrlPolicy): CompiledUrlPolicy {
  let out = compiled.get(policy);
  if (out === undefined) {
    out = { rules: policy.allowHosts.map(parseHostRule), allowLoopback: policy.allowLoopback };
    compiled.set(policy, out);
  }
  return out;
}

export function defaultPort(protocol: string): string {
  return protocol === 'https:' ? '443' : '80';
}

/** Whether a host (as the URL parser or a connector spells it) and port are on the allow-list. */
export function isAllowListedHost(policy: CompiledUrlPolicy, hostname: string, port: string): boolean {
  if (policy.rules.length === 0) return false;
  const host = bareHost(hostname.toLowerCase());
  return policy.rules.some((r) => r.host === host && (r.port === null || r.port === port));
}

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The one static rule (see the module's header). Never throws. */
export function judgeUrl(input: string | URL, policy: CompiledUrlPolicy): UrlVerdict {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return { ok: false, reason: 'INVALID', url: null, host: '' };
  }
  const host = url.hostname;
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'SCHEME', url, host };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'CREDENTIALS', url, host };
  const bare = bareHost(host);
  const allowListed = isAllowListedHost(policy, bare, url.port || defaultPort(url.protocol));
  if (allowListed) return { ok: true, url, allowListed };
  const literal = isIpLiteral(bare);
  const range = literal ? ranges.get(bare) : isLoopbackName(bare) ? 'loopback' : null;
  const loopback = policy.allowLoopback && range === 'loopback';
  if (url.protocol === 'http:' && !loopback) return { ok: false, reason: 'HTTP', url, host };
  if (range !== null && range !== 'unicast' && !loopback) {
    return { ok: false, reason: 'ADDRESS', url, host: bare, range };
  }
  return { ok: true, url, allowListed };
}

const CREDENTIALS_MESSAGE = 'must not contain a user name or password; use a credential';
const HTTPS_ONLY_MESSAGE = 'must be an https:// address';

/** What is wrong with an address field's form. */
export type UrlFormProblem = 'INVALID' | 'SCHEME' | 'CREDENTIALS' | 'FRAGMENT' | 'HTTP';

export type UrlForm = { ok: true; url: URL } | { ok: false; problem: UrlFormProblem };

/**
 * The form of an address field, the one place that decides it: an absolute `http:` or `https:` URL
 * (`https:` only when `httpsOnly`, as DESIGN.md requires of the `baseUrl` override), without a user
 * name or password, without a `#fragment` (never sent, so it can only mislead). Only the form:
 * which addresses may be called is `judgeUrl`'s. Never throws.
 */
export function urlForm(text: string, options: { httpsOnly?: boolean } = {}): UrlForm {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, problem: 'INVALID' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, problem: 'SCHEME' };
  if (url.username !== '' || url.password !== '') return { ok: false, problem: 'CREDENTIALS' };
  if (url.hash) return { ok: false, problem: 'FRAGMENT' };
  if (options.httpsOnly && url.protocol === 'http:') return { ok: false, problem: 'HTTP' };
  return { ok: true, url };
}

/**
 * The save-time check of a source or base address: `judgeUrl`, with each refusal as a field
 * problem, then the field's form (`urlForm`: no `#fragment`, and `httpsOnly` for the `baseUrl`
 * override).
 */
export function checkUrl(raw: string, policy: UrlPolicy, options: { httpsOnly?: boolean } = {}): UrlCheck {
  const text = raw.trim();
  const verdict = judgeUrl(text, compileUrlPolicy(policy));
  if (!verdict.ok) {
    switch (verdict.reason) {
      case 'INVALID':
        return { ok: false, code: 'URL_INVALID', message: 'is not an absolute URL' };
      case 'SCHEME':
        return {
          ok: false,
          code: 'URL_INVALID',
          message: `must be an https:// address, not ${verdict.url?.protocol ?? ''}`,
        };
      case 'CREDENTIALS':
        return { ok: false, code: 'URL_INVALID', message: CREDENTIALS_MESSAGE };
      case 'HTTP':
        return {
          ok: false,
          code: 'URL_REFUSED',
          message: options.httpsOnly
            ? HTTPS_ONLY_MESSAGE
            : 'must be an https:// address (plain http:// only for hosts in OUTBOUND_ALLOW_HOSTS)',
        };
      case 'ADDRESS':
        return {
          ok: false,
          code: 'URL_REFUSED',
          message:
            'points to a private, loopback, link-local or metadata address, which is refused; if it is a server of yours that the service should reach, add the host to OUTBOUND_ALLOW_HOSTS',
        };
    }
  }
  const form = urlForm(text, options);
  if (form.ok) return form;
  switch (form.problem) {
    case 'FRAGMENT':
      return { ok: false, code: 'URL_INVALID', message: 'must not contain a #fragment' };
    case 'HTTP':
      return { ok: false, code: 'URL_REFUSED', message: HTTPS_ONLY_MESSAGE };
    case 'CREDENTIALS':
      return { ok: false, code: 'URL_INVALID', message: CREDENTIALS_MESSAGE };
    default:
      // INVALID and SCHEME: `judgeUrl` above refuses both first.
      return { ok: false, code: 'URL_INVALID', message: 'is not an absolute http:// or https:// URL' };
  }
}
