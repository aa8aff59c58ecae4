/**
 * Operation keys and connection slugs (pure).
 *
 * A key is `connector.<connection slug>.<operation>`. Each part is lower case, camelCase is split
 * into snake_case, and every run of other characters becomes one `_` (tool contract, "Names and
 * keys"; DESIGN.md, Operation). A key is computed once, when the operation is first found, and then
 * stored: nothing here is ever used to recompute the key of an existing operation.
 */
import { firstFree, withoutMarks } from '../names.js';

/** Prefix of every operation key. */
export const KEY_PREFIX = 'connector';

/** Slug used when a connection name has no letter or digit that survives normalisation. */
export const FALLBACK_CONNECTION_SLUG = 'connection';

/** Operation part used when an operation name has no letter or digit that survives normalisation. */
export const FALLBACK_OPERATION_PART = 'operation';

/**
 * Longest slug {@link slugify} makes. The slug column holds 64 characters; this leaves room for the
 * `_2`, `_3`… that make a slug unique in its workspace.
 */
export const MAX_SLUG_LENGTH = 48;

/**
 * Longest operation part of a key. With `connector.`, a 64-character slug and a clash suffix, a key
 * stays within the 300 characters of the key column, so a long tool name cannot fail a discovery.
 */
export const MAX_OPERATION_PART_LENGTH = 200;

/**
 * The snake_case form of `raw`, or `''` when nothing survives:
 * - compatibility-decomposed with combining marks dropped, so `Café` → `cafe` and `ﬁle` → `file`;
 * - a lower-case letter or digit followed by a capital starts a new word (`listPets` → `list_pets`);
 * - in a run of capitals, the last one starts a new word when a lower-case letter follows it
 *   (`getHTTPResponse` → `get_http_response`);
 * - lower-cased; every run of characters other than `a-z0-9` becomes one `_`; leading and trailing
 *   `_` are trimmed.
 *
 * The result only ever contains `[a-z0-9_]`, never `__`, and never starts or ends with `_`, so
 * applying it twice gives the same result.
 */
export function snakePart(raw: string): string {
  return withoutMarks(raw)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * The slug of a connection name, by the same rules as a key part, cut to {@link MAX_SLUG_LENGTH}, or
 * `connection` when nothing survives (a name made only of punctuation or non-Latin script).
 * Uniqueness in the workspace is the caller's job: pass the result to {@link assignKey} with the
 * workspace's slugs.
 */
export function slugify(name: string): string {
  return cut(snakePart(name), MAX_SLUG_LENGTH) || FALLBACK_CONNECTION_SLUG;
}

/**
 * The base key of an operation, before any clash suffix: `connector.<slug>.<operation>`, the
 * operation part cut to {@link MAX_OPERATION_PART_LENGTH}. The slug is normalised again but not cut:
 * that changes nothing for a stored slug (even one with a clash suffix past 48 characters) and keeps
 * `.` out of the parts for any other input.
 */
export function operationKey(connectionSlug: string, operationName: string): string {
  const slug = snakePart(connectionSlug) || FALLBACK_CONNECTION_SLUG;
  const operation = cut(snakePart(operationName), MAX_OPERATION_PART_LENGTH) || FALLBACK_OPERATION_PART;
  return `${KEY_PREFIX}.${slug}.${operation}`;
}

/** The first `max` characters of a snake part, without the `_` the cut may leave at the end. */
function cut(part: string, max: number): string {
  return part.length <= max ? part : part.slice(0, max).replace(/_+$/, '');
}

/**
 * `base` when it is free, otherwise the first of `base_2`, `base_3`… that is not in `taken`.
 * The caller adds the result to its own set before assigning the next key.
 */
export function assignKey(base: string, taken: ReadonlySet<string>): string {
  return firstFree(base, (key) => taken.has(key));
}
