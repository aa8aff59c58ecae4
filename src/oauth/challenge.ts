/**
 * `WWW-Authenticate` parsing (RFC 9110 §11.6.1), pure. A header may carry several challenges, each
 * a scheme followed by a token68 or by `name=value` parameters, where a value is a token or a
 * quoted string with backslash escapes. MCP servers (protocol 2025-06-18, basic/authorization.mdx)
 * answer 401 with `Bearer resource_metadata="…"` (RFC 9728 §5.1), and may add `scope` and `error`.
 *
 * The parser is tolerant: it never throws, skips what it cannot read up to the next comma, and keeps
 * the first value of a repeated parameter. Scheme and parameter names are lower-cased.
 */

export interface AuthChallenge {
  /** Lower case, such as `bearer`. */
  scheme: string;
  /** Parameter names lower case; values as sent, unquoted and unescaped. */
  params: Record<string, string>;
  token68: string | null;
}

/** What a Bearer challenge tells an OAuth client. */
export interface BearerChallenge {
  /** Absolute `http(s)` URL of the protected-resource metadata, or null when absent or unusable. */
  resourceMetadata: string | null;
  /** Space-separated scopes the server asks for, or null. */
  scope: string | null;
  /** Such as `invalid_token` or `insufficient_scope`, or null. */
  error: string | null;
}

/** Headers longer than this are not parsed (a hostile server could send megabytes). */
export const MAX_CHALLENGE_HEADER_CHARS = 8 * 1024;

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*/;

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

/** Reads a run of token characters from `i`; returns its end. */
function tokenEnd(s: string, i: number): number {
  let j = i;
  while (j < s.length && TCHAR.test(s[j]!)) j++;
  return j;
}

/** Reads a quoted string starting at the opening quote at `i`. Null when it never closes. */
function quoted(s: string, i: number): { value: string; end: number } | null {
  let value = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '\\') {
      j++;
      if (j < s.length) value += s[j];
      continue;
    }
    if (c === '"') return { value, end: j + 1 };
    value += c;
  }
  return null;
}

function skipToComma(s: string, i: number): number {
  const next = s.indexOf(',', i);
  return next === -1 ? s.length : next + 1;
}

/** Parses every challenge of a `WWW-Authenticate` value (several headers may be joined with commas). */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  const s = header.length > MAX_CHALLENGE_HEADER_CHARS ? '' : header;
  const challenges: AuthChallenge[] = [];
  let current: AuthChallenge | null = null;
  let i = 0;
  while (i < s.length) {
    while (i < s.length && (isSpace(s[i]) || s[i] === ',')) i++;
    if (i >= s.length) break;
    const end = tokenEnd(s, i);
    if (end === i) {
      i = skipToComma(s, i);
      continue;
    }
    const name = s.slice(i, end);
    let j = end;
    while (isSpace(s[j])) j++;
    if (current !== null && s[j] === '=') {
      // An auth-param of the current challenge.
      j++;
      while (isSpace(s[j])) j++;
      let value: string;
      if (s[j] === '"') {
        const q = quoted(s, j);
        if (q === null) break; // an unterminated quote swallows the rest of the header
        value = q.value;
        j = q.end;
      } else {
        const vEnd = tokenEnd(s, j);
        value = s.slice(j, vEnd);
        j = vEnd;
      }
      const key = name.toLowerCase();
      if (!(key in current.params)) current.params[key] = value;
      i = j;
      continue;
    }
    current = { scheme: name.toLowerCase(), params: {}, token68: null };
    challenges.push(current);
    i = j;
    const m = TOKEN68.exec(s.slice(i));
    if (m) {
      let k = i + m[0].length;
      while (isSpace(s[k])) k++;
      // A token68 stands alone: what follows is the end or the next challenge, never `=value`.
      if (k >= s.length || s[k] === ',') {
        current.token68 = m[0];
        i = k;
      }
    }
  }
  return challenges;
}

function absoluteHttpUrl(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/** The first Bearer challenge of a header, or null when there is none. */
export function bearerChallenge(header: string | null | undefined): BearerChallenge | null {
  if (!header) return null;
  const bearer = parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer');
  if (!bearer) return null;
  const scope = bearer.params.scope?.trim();
  return {
    resourceMetadata: absoluteHttpUrl(bearer.params.resource_metadata),
    scope: scope ? scope : null,
    error: bearer.params.error ?? null,
  };
}
