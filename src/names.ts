/**
 * How names are made from text a person or a server gave (pure, a leaf module: it imports nothing).
 * Each rule here is the only copy: operation keys and connection slugs (`operations/keys.ts`),
 * names in converted OpenAPI schemas (`openapi/naming.ts`), names declared to a model
 * (`turns/declare.ts`) and the keys a scrub renames (`connections/scrub.ts`) all use them.
 */

/**
 * `text` compatibility-decomposed (NFKD) with its combining marks dropped: `é` → `e`, `ﬁ` → `fi`,
 * `①` → `1`. What is left of a non-Latin script is kept as it is, for the caller's own pattern.
 */
export function withoutMarks(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '');
}

/**
 * Clash numbering: `base` when it is free, otherwise the first of `base_2`, `base_3`… that is
 * free. With `maxLength`, `base` is cut so that the numbered name still fits (`base` itself is
 * returned as it is when free). The caller marks the result taken before numbering the next name.
 */
export function firstFree(base: string, isTaken: (name: string) => boolean, maxLength = Infinity): string {
  if (!isTaken(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = base.slice(0, maxLength - suffix.length) + suffix;
    if (!isTaken(candidate)) return candidate;
  }
}

/** Longest name a person gives (workspace, assistant, connection, token label, conversation id). */
export const MAX_NAME_CHARS = 200;

/**
 * What is wrong with a name a person gave, once trimmed: `EMPTY`, `TOO_LONG` (over
 * {@link MAX_NAME_CHARS} characters), or null when it is 1 to 200 characters. Each API keeps its own
 * error code for it.
 */
export function nameLengthProblem(name: string): 'EMPTY' | 'TOO_LONG' | null {
  const length = name.trim().length;
  if (length === 0) return 'EMPTY';
  return length > MAX_NAME_CHARS ? 'TOO_LONG' : null;
}
