/**
 * Key origins (pure): a connection's key goes only where its owner sent it (issue 11, DESIGN.md
 * rule 15).
 *
 * When a key (an API key, or a key in a named header) is given, the origins it is given for are
 * recorded with it: scheme, host and port of the MCP endpoint, or for OpenAPI of the `baseUrl`
 * override, else of every base address the description resolves to at that moment. Afterwards:
 * - an update after which the key would go to an origin not recorded needs the key again;
 * - discovery holds an operation whose base has an origin not recorded, for review
 *   ({@link HOLD_CODES}), and holds an operation whose base cannot be called at all until an
 *   admin sets `baseUrl`;
 * - a call never attaches the key to a request for an origin not recorded.
 *
 * An OAuth credential is bound the same way, to the `resource` it was issued for (see
 * `oauth.service.ts`, `#usableCredential`).
 *
 * Nothing here reads the database, the network or the clock.
 */
import { Memo } from '../memo.js';

/** Why discovery holds an operation until its condition clears; the next discovery then releases it. */
export const HOLD_CODES = ['KEY_ORIGIN_NOT_GIVEN', 'BASE_ADDRESS_UNCALLABLE'] as const;
export type HoldCode = (typeof HOLD_CODES)[number];

export interface Hold {
  code: HoldCode;
  /** For the admin: which origin, and what to do. */
  detail: string;
}

/** Credential kinds whose secret is a key the service sends as it is (OAuth is bound by its resource). */
export function isKeyCredential(kind: string): boolean {
  return kind === 'BEARER' || kind === 'HEADER';
}

/**
 * `https://host:port` of an absolute http(s) address (the port only when it is not the scheme's
 * default, host lower case, as WHATWG `URL.origin`), or `null` for anything else.
 */
export function originOf(url: string | null | undefined): string | null {
  if (url == null || url === '') return null;
  // Every MCP call asks this of its endpoint, twice: parse each such address once.
  return url.length > KNOWN_ORIGIN_MAX_CHARS ? parseOrigin(url) : knownOrigins.get(url);
}

/** Addresses whose origin is kept (the table is emptied when full), up to this length. */
const KNOWN_ORIGINS_KEPT = 512;
const KNOWN_ORIGIN_MAX_CHARS = 512;
const knownOrigins = new Memo(KNOWN_ORIGINS_KEPT, parseOrigin);

function parseOrigin(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  return parsed.origin;
}

/** The distinct origins of `urls`, sorted; an address that has none is left out. */
export function originsOf(urls: Iterable<string | null | undefined>): string[] {
  const out = new Set<string>();
  for (const url of urls) {
    const origin = originOf(url);
    if (origin !== null) out.add(origin);
  }
  return [...out].sort();
}

/**
 * The origins of `urls` that the key was not given for, sorted. With nothing recorded (`null`),
 * every origin is uncovered; an address without an origin is uncovered as itself.
 */
export function uncoveredOrigins(recorded: readonly string[] | null, urls: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const url of urls) {
    const origin = originOf(url) ?? url;
    if (!(recorded ?? []).includes(origin)) out.add(origin);
  }
  return [...out].sort();
}

/** True when a request to `url` may carry the key given for `recorded`. */
export function mayCarryKey(recorded: readonly string[] | null, url: string): boolean {
  const origin = originOf(url);
  return origin !== null && recorded !== null && recorded.includes(origin);
}

/** Where a connection's source sends its calls, once an update is applied. */
export interface SourceAddresses {
  kind: 'MCP' | 'OPENAPI';
  endpointUrl: string | null;
  baseUrl: string | null;
  /**
   * OpenAPI without an override: the base address of every operation the description gives, or
   * `null` when the description could not be read.
   */
  describedBases: readonly string[] | null;
}

/**
 * The origins a key of this source would go to: the MCP endpoint's, the override's, or the
 * description's bases'. `null` when that cannot be known (the description could not be read).
 */
export function keyTargets(source: SourceAddresses): string[] | null {
  if (source.kind === 'MCP') return originsOf([source.endpointUrl]);
  if (source.baseUrl !== null) return originsOf([source.baseUrl]);
  return source.describedBases === null ? null : originsOf(source.describedBases);
}

/** What discovery knows about one operation's base address. */
export interface BaseFacts {
  /** The base address the operation's calls go to (OpenAPI), or the MCP endpoint. */
  base: string;
  /** Why the description's base is a placeholder (see `convert.ts`), when it is one. */
  placeholder: string | null;
  /** Why the outbound policy refuses the base (such as plain `http`), when it does. */
  refused: string | null;
}

/**
 * Why discovery must hold an operation, in {@link HOLD_CODES} order; empty when it may follow the
 * usual rule (new `READ` operations start enabled).
 *
 * @param keyOrigins the origins the connection's key was given for, or `null` when it has no key.
 */
export function holdsFor(facts: BaseFacts, keyOrigins: readonly string[] | null): Hold[] {
  const holds: Hold[] = [];
  if (keyOrigins !== null && !mayCarryKey(keyOrigins, facts.base)) {
    const origin = originOf(facts.base) ?? facts.base;
    const given = keyOrigins.length > 0 ? keyOrigins.join(', ') : 'no origin';
    holds.push({
      code: 'KEY_ORIGIN_NOT_GIVEN',
      detail: `calls go to ${origin}, but the key was given for ${given}; give the credential again to send it there`,
    });
  }
  const why = facts.placeholder ?? facts.refused;
  if (why !== null) {
    holds.push({
      code: 'BASE_ADDRESS_UNCALLABLE',
      detail: `no callable base address (${why}); set the connection's baseUrl to the API's https:// address`,
    });
  }
  return holds;
}
