/**
 * Text and names of converted operations: one-line descriptions, operation and argument names that
 * fit the contract's pattern, unique within a description. Pure.
 */
import { firstFree } from '../names.js';
import { DEFAULT_MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, PROPERTY_NAME_PATTERN } from './model.js';

// ---------------------------------------------------------------------------------------------
// Text

/** Anything `toOneLine` would change: tags, entities, control characters, whitespace other than single spaces. */
const NEEDS_CLEANING =
  // eslint-disable-next-line no-control-regex
  /[<&\u0000-\u001f\u007f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}|^ | $/;
const BLOCK_TAG = /^<\/?(?:br|p|div|li|ul|ol|tr|td|th|table|h[1-6]|hr|pre|blockquote|dd|dt|dl)\b/i;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** One plain line: HTML tags, line breaks and control characters removed, cut to `max` characters. */
export function toOneLine(text: string, max: number = DEFAULT_MAX_DESCRIPTION_LENGTH): string {
  // Most descriptions are plain already; skip the three rewrites for them.
  if (!NEEDS_CLEANING.test(text)) return truncate(text, max);
  let s = text.replace(/<\/?[A-Za-z][^<>]*>/g, (tag) => (BLOCK_TAG.test(tag) ? ' ' : ''));
  s = s.replace(/&(#\d{1,6}|#x[0-9a-f]{1,6}|[a-z]{2,5});/gi, (match, entity: string) => {
    if (entity.startsWith('#')) {
      const code =
        entity[1] === 'x' || entity[1] === 'X'
          ? parseInt(entity.slice(2), 16)
          : parseInt(entity.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return ENTITIES[entity.toLowerCase()] ?? match;
  });
  // eslint-disable-next-line no-control-regex
  s = s.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
  return truncate(s, max);
}

export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = s.slice(0, max - 1);
  // Never leave half of a surrogate pair.
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/** Makes a name fit `PROPERTY_NAME_PATTERN`; names that already fit are kept as they are. */
export function fitName(name: string): string {
  if (PROPERTY_NAME_PATTERN.test(name)) return name;
  const fitted = name
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_NAME_LENGTH);
  return fitted.length > 0 ? fitted : 'field';
}

/** `base`, or `base_2`, `base_3`… whichever is free, kept within 64 characters. */
export function numbered(base: string, taken: Set<string>): string {
  return firstFree(base, (name) => taken.has(name), MAX_NAME_LENGTH);
}

/**
 * Schema names for wire names, in priority order: names that already fit keep themselves, then
 * the others are made to fit and numbered on a clash.
 */
export function assignNames(wireNames: readonly string[]): string[] {
  const taken = new Set<string>();
  const result = new Array<string>(wireNames.length);
  wireNames.forEach((wire, i) => {
    if (PROPERTY_NAME_PATTERN.test(wire) && !taken.has(wire)) {
      taken.add(wire);
      result[i] = wire;
    }
  });
  wireNames.forEach((wire, i) => {
    if (result[i] !== undefined) return;
    const name = numbered(fitName(wire), taken);
    taken.add(name);
    result[i] = name;
  });
  return result;
}

export function nameFromMethodAndPath(method: string, path: string): string {
  const tail = path
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return tail.length > 0 ? `${method}_${tail}` : method;
}
