/**
 * Which addresses the service may be told to call, checked when a connection is saved. The
 * outbound client checks again at connect time, after DNS, where a name could resolve anywhere.
 */
import { isIP } from 'node:net';
import { isAddressAllowed } from './outbound.js';

export interface UrlPolicy {
  /** Hosts (name, or name:port) allowed over http:// and to non-public addresses. */
  allowHosts: readonly string[];
  /** Dev and test: loopback hosts are allowed, over http:// too. */
  allowLoopback: boolean;
}

export type UrlCheck =
  { ok: true; url: URL } | { ok: false; code: 'URL_INVALID' | 'URL_REFUSED'; message: string };

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return LOOPBACK_NAMES.has(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h.endsWith('.localhost');
}

export function isAllowListed(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const hostPort = url.port ? `${host}:${url.port}` : host;
  return allowHosts.includes(host) || allowHosts.includes(hostPort);
}

export function checkUrl(raw: string, policy: UrlPolicy, options: { httpsOnly?: boolean } = {}): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, code: 'URL_INVALID', message: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, code: 'URL_INVALID', message: `must be an https:// address, not ${url.protocol}` };
  }
  if (url.username || url.password) {
    return {
      ok: false,
      code: 'URL_INVALID',
      message: 'must not contain a user name or password; use a credential',
    };
  }
  if (url.hash) return { ok: false, code: 'URL_INVALID', message: 'must not contain a #fragment' };
  const trusted =
    isAllowListed(url, policy.allowHosts) || (policy.allowLoopback && isLoopbackHost(url.hostname));
  // An address written into the URL can be judged now; names are judged at connect time, after DNS.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (
    !isAllowListed(url, policy.allowHosts) &&
    isIP(literal) !== 0 &&
    !isAddressAllowed(literal, policy.allowLoopback)
  ) {
    return {
      ok: false,
      code: 'URL_REFUSED',
      message:
        'points to a private, loopback, link-local or metadata address, which is refused; if it is a server of yours that the service should reach, add the host to OUTBOUND_ALLOW_HOSTS',
    };
  }
  if (url.protocol === 'http:' && (options.httpsOnly || !trusted)) {
    return {
      ok: false,
      code: 'URL_REFUSED',
      message: options.httpsOnly
        ? 'must be an https:// address'
        : 'must be an https:// address (plain http:// only for hosts in OUTBOUND_ALLOW_HOSTS)',
    };
  }
  return { ok: true, url };
}
