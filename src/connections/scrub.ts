/**
 * The one scrubbing rule for text an upstream controls (DESIGN.md rule 15). Pure: no I/O.
 *
 * A tool server, an API or an OAuth server may echo a credential it was sent (a key, a named
 * header's value, an OAuth access or refresh token, a client secret) into anything it returns:
 * server info, tool names and descriptions, schemas, error text, call results. Whatever such text
 * becomes — a stored column, an API answer, a tool declared to a model, a tool result — passes
 * through a `Scrubber` first, BEFORE any truncation, so that no cut can leave part of a secret.
 *
 * The property: no run of `FRAGMENT` (8) or more characters of a secret survives, in the secret's
 * own form or in its URL-encoded, JSON-escaped or base64 (standard or URL-safe, at any of the
 * three byte alignments) form. Every maximal run of text covered by 8-character windows of any of
 * those forms becomes `[redacted]`; partial echoes (a prefix, a middle, a suffix) are caught as
 * well as whole ones. A secret shorter than 8 characters is redacted where it occurs whole (at 4
 * characters or more; shorter ones would redact ordinary words).
 *
 * The scan is linear: a rolling hash of every 8-character window is looked up in a set, and a hit
 * is confirmed by comparing the characters. With no secrets the scrubber returns its input as is.
 */
import { firstFree } from '../names.js';

/** What replaces each run of secret text. */
export const REDACTED = '[redacted]';
/** The shortest fragment of a secret that may not survive. */
export const FRAGMENT = 8;
/** Secrets shorter than this are not scrubbed at all (they would match ordinary text). */
export const MIN_SECRET_LENGTH = 4;

export interface Scrubber {
  /** False when there is nothing to scrub; every method then returns its input unchanged. */
  readonly active: boolean;
  /** The text with every secret run replaced by `[redacted]`. */
  text(text: string): string;
  /** Whether the text holds any secret run (a name that goes on the wire must then be refused). */
  hits(text: string): boolean;
  /**
   * A deep copy of a JSON-like value with every string scrubbed, object keys included. Values that
   * hold no secret are returned as they are (same reference). Keys that collide after scrubbing get
   * `_2`, `_3`… so no value is lost.
   */
  json<T>(value: T): T;
}

/**
 * The prefilter is sized to the grams, at least 16 slots each (mostly empty, so a miss is one byte
 * read), within these bounds: a scrubber is built per call, and zeroing a fixed 64 KiB for one key
 * of 40 characters (about 300 grams, 8 KiB) cost more than scanning its answer.
 */
const MIN_FILTER_SIZE = 1 << 8;
const MAX_FILTER_SIZE = 1 << 16;
const FILTER_SLOTS_PER_GRAM = 16;
const BASE = 0x01000193; // FNV prime as the polynomial base

/** Math.imul-based polynomial hash of `s[from, from + FRAGMENT)`. */
function hashAt(s: string, from: number): number {
  let h = 0;
  for (let i = from; i < from + FRAGMENT; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

// BASE^(FRAGMENT-1) mod 2^32, to drop the outgoing character of the rolling hash.
const TOP = (() => {
  let p = 1;
  for (let i = 1; i < FRAGMENT; i++) p = Math.imul(p, BASE);
  return p;
})();

/** The secret's forms that could appear in text: as is, URL-encoded, JSON-escaped, base64. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  try {
    forms.add(encodeURIComponent(secret));
    forms.add(encodeURIComponent(secret).replace(/%20/g, '+'));
  } catch {
    // A lone surrogate has no URL encoding; the other forms still apply.
  }
  forms.add(JSON.stringify(secret).slice(1, -1));
  const bytes = Buffer.from(secret, 'utf8');
  // Inside a longer base64 text (say `Basic base64(user:key)`) the secret starts at any of three
  // byte alignments; keep only the characters that depend on the secret's bytes alone.
  for (let pad = 0; pad < 3; pad++) {
    const padded = Buffer.concat([Buffer.alloc(pad), bytes]);
    // Character k covers bits [6k, 6k + 6); the secret's bits are [8·pad, 8·(pad + n)).
    const from = Math.ceil((8 * pad) / 6);
    const to = Math.floor((8 * (pad + bytes.length)) / 6);
    for (const encoding of ['base64', 'base64url'] as const) {
      const part = padded.toString(encoding).slice(from, to);
      if (part.length >= FRAGMENT) forms.add(part);
    }
  }
  return [...forms];
}

/** A scrubber with nothing to scrub: what `makeScrubber` returns when no secret can be scrubbed. */
export const NO_SECRETS: Scrubber = {
  active: false,
  text: (text) => text,
  hits: () => false,
  json: <T>(value: T): T => value,
};

/** The smallest power of two with `FILTER_SLOTS_PER_GRAM` slots per gram, within the bounds. */
function filterSize(grams: number): number {
  let size = MIN_FILTER_SIZE;
  while (size < grams * FILTER_SLOTS_PER_GRAM && size < MAX_FILTER_SIZE) size *= 2;
  return size;
}

export function makeScrubber(secrets: readonly (string | null | undefined)[]): Scrubber {
  const { grams, wholes } = secretGrams(secrets);
  const active = grams.size > 0 || wholes.length > 0;
  // Nothing to scrub (a connection without a credential): the one shared inactive scrubber.
  if (!active) return NO_SECRETS;
  // A first, cheap look at the low bits of the hash before the map.
  const mask = filterSize(grams.size) - 1;
  const filter = new Uint8Array(mask + 1);
  for (const h of grams.keys()) filter[h & mask] = 1;
  const index: SecretIndex = { grams, wholes, filter, mask };

  const text = (input: string): string => {
    const found = secretRuns(index, input);
    return found.length === 0 ? input : redactRuns(input, found);
  };
  return {
    active,
    text,
    hits: (input) => secretRuns(index, input).length > 0,
    json: <T>(value: T): T => scrubJson(value, text) as T,
  };
}

/** Every secret's forms, as FRAGMENT-long grams by rolling hash, and as wholes when shorter. */
function secretGrams(secrets: readonly (string | null | undefined)[]): {
  grams: Map<number, string[]>;
  wholes: string[];
} {
  const grams = new Map<number, string[]>();
  const wholes: string[] = [];
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of secretForms(secret)) {
      if (form.length < FRAGMENT) {
        if (form.length >= MIN_SECRET_LENGTH) wholes.push(form);
        continue;
      }
      for (let i = 0; i + FRAGMENT <= form.length; i++) {
        const gram = form.slice(i, i + FRAGMENT);
        const h = hashAt(form, i);
        const list = grams.get(h);
        if (!list) grams.set(h, [gram]);
        else if (!list.includes(gram)) list.push(gram);
      }
    }
  }
  return { grams, wholes };
}

/** The grams by hash, with a bit filter on the hash's low bits, and the short secrets. */
interface SecretIndex {
  grams: Map<number, string[]>;
  wholes: string[];
  filter: Uint8Array;
  mask: number;
}

/** Sorted, merged [start, end) runs of secret text. */
function secretRuns({ grams, wholes, filter, mask }: SecretIndex, text: string): [number, number][] {
  const marks: [number, number][] = [];
  if (grams.size > 0 && text.length >= FRAGMENT) {
    let h = hashAt(text, 0);
    for (let i = 0; ; i++) {
      const list = filter[h & mask] === 1 ? grams.get(h) : undefined;
      if (list && list.some((g) => text.startsWith(g, i))) {
        const last = marks[marks.length - 1];
        if (last && last[1] >= i) last[1] = i + FRAGMENT;
        else marks.push([i, i + FRAGMENT]);
      }
      if (i + FRAGMENT >= text.length) break;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), TOP), BASE) + text.charCodeAt(i + FRAGMENT)) | 0;
    }
  }
  for (const whole of wholes) {
    for (let at = text.indexOf(whole); at !== -1; at = text.indexOf(whole, at + 1)) {
      marks.push([at, at + whole.length]);
    }
  }
  if (marks.length === 0) return marks;
  if (wholes.length > 0) marks.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s0, e0] of marks) {
    let s = s0;
    let e = e0;
    // Never split a surrogate pair: half of one is not valid text (PostgreSQL refuses it).
    if (s > 0 && isLow(text.charCodeAt(s)) && isHigh(text.charCodeAt(s - 1))) s--;
    if (e < text.length && isLow(text.charCodeAt(e)) && isHigh(text.charCodeAt(e - 1))) e++;
    const last = merged[merged.length - 1];
    if (last && last[1] >= s) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

function redactRuns(input: string, found: readonly [number, number][]): string {
  let out = '';
  let at = 0;
  for (const [s, e] of found) {
    out += input.slice(at, s) + REDACTED;
    at = e;
  }
  return out + input.slice(at);
}

/**
 * `value` with `text` applied to every string and key (a key made equal to another is numbered);
 * unchanged parts, and `value` itself when nothing changed, are the same objects.
 */
function scrubJson(value: unknown, text: (input: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const next = scrubJson(item, text);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  if (typeof value === 'object' && value !== null) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      let name = text(key);
      if (name !== key) {
        changed = true;
        name = firstFree(name, (taken) => Object.hasOwn(out, taken) || Object.hasOwn(value, taken));
      }
      const next = scrubJson(item, text);
      if (next !== item) changed = true;
      out[name] = next;
    }
    return changed ? out : value;
  }
  return value;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
