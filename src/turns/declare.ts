/**
 * The tool list declared to the model for one turn (pure), DESIGN.md rule 5 and issue 6 item 3:
 * built-ins first, then the callable operations as `<connection>__<operation>`, then `finish_turn`
 * always last, every name matching {@link DECLARED_NAME_PATTERN} and unique within the turn. The
 * declared names map back to operation ids; the turn keeps that map to resolve calls.
 */
import { AppError } from '../errors.js';
import { firstFree, withoutMarks } from '../names.js';
import { type JsonObject } from '../operations/types.js';

/**
 * Declared names: the intersection of the model APIs' rules for tool names (issue 26,
 * docs/dialects.md): OpenAI and Anthropic take `^[a-zA-Z0-9_-]{1,64}$`, Gemini wants a letter or
 * `_` first. Every dialect, GENERIC included, declares the same names.
 */
export const DECLARED_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
export const DECLARED_NAME_MAX_LENGTH = 64;
/** Put before a declared name that would start with a digit or `-` (a slug such as `3m`). */
export const DECLARED_NAME_PREFIX = 't_';

/** Between the connection slug and the operation name in a declared name. */
export const DECLARED_NAME_SEPARATOR = '__';

/** Hex digits of the hash appended to a name cut to fit, after one `_`. */
const HASH_LENGTH = 8;

export interface DeclaredTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/** The tool the model calls to end its turn. Always declared, always last. */
export const FINISH_TURN: Readonly<DeclaredTool> = Object.freeze({
  name: 'finish_turn',
  description:
    'Call this when you have finished: you have replied to the customer and need no other tool in this turn.',
  inputSchema: Object.freeze({ type: 'object', properties: Object.freeze({}), additionalProperties: false }),
});

/** A callable operation, as the tool cache holds it. */
export interface DeclarableOperation {
  operationId: string;
  connectionSlug: string;
  /** Bare operation name. */
  name: string;
  description: string | null;
  inputSchema: JsonObject;
}

export interface DeclaredToolList {
  /** Built-ins, then connection tools, then {@link FINISH_TURN}. */
  tools: DeclaredTool[];
  /**
   * Declared name → operation id, for connection tools only. It has no prototype, so a name such as
   * `constructor` from the model resolves to nothing; after a JSON round trip (e.g. from the Turn
   * row), look names up with {@link resolveDeclaredName}.
   */
  map: Record<string, string>;
}

/**
 * The model-facing name of one operation: `<connection>__<operation>`, compatibility-decomposed with
 * combining marks dropped (`é` → `e`), every other character outside `[a-zA-Z0-9_-]` replaced by `_`
 * (one per code point), and {@link DECLARED_NAME_PREFIX} put first when it would start with a digit
 * or `-`. When that is longer than 64 characters it is cut to 55 and `_` plus the
 * 8-hex-digit FNV-1a hash of the original, unsanitised `<connection>__<operation>` is appended, so
 * two long names that share a prefix still differ. Uniqueness within a turn is
 * {@link declareTools}'s job.
 */
export function declaredName(connectionSlug: string, operationName: string): string {
  const original = `${connectionSlug}${DECLARED_NAME_SEPARATOR}${operationName}`;
  let sanitised = withoutMarks(original).replace(/[^a-zA-Z0-9_-]/gu, '_');
  if (!/^[a-zA-Z_]/.test(sanitised)) sanitised = `${DECLARED_NAME_PREFIX}${sanitised}`;
  if (sanitised.length <= DECLARED_NAME_MAX_LENGTH) return sanitised;
  return `${sanitised.slice(0, DECLARED_NAME_MAX_LENGTH - HASH_LENGTH - 1)}_${fnv1a32(original)}`;
}

/**
 * Builds the turn's tool list.
 *
 * Connection tools are ordered by connection slug, then operation name, then operation id (code unit
 * order), whatever order they come in, so the same tools give the same list and the same names on
 * every turn. Names are given in two passes: first every operation whose {@link declaredName} is free
 * keeps it, in that order; then each one left gets the first free `_2`, `_3`… suffix, cutting the
 * name so that it still fits 64 characters. Built-in names and `finish_turn` are never given out.
 *
 * Throws `AppError('INVALID_BUILT_IN_TOOLS')` when a built-in name does not match the pattern, is
 * listed twice or is `finish_turn`. That is a deployment error: check the configured list at start
 * with {@link builtInProblems} so it can never happen inside a turn.
 */
export function declareTools(input: {
  builtIns: readonly DeclaredTool[];
  operations: readonly DeclarableOperation[];
}): DeclaredToolList {
  const problems = builtInProblems(input.builtIns);
  if (problems.length > 0) {
    throw new AppError('INVALID_BUILT_IN_TOOLS', `invalid built-in tools: ${problems.join('; ')}`);
  }

  const used = new Set<string>([...input.builtIns.map((t) => t.name), FINISH_TURN.name]);
  const ordered = [...input.operations].sort(
    (a, b) =>
      compareCodeUnits(a.connectionSlug, b.connectionSlug) ||
      compareCodeUnits(a.name, b.name) ||
      compareCodeUnits(a.operationId, b.operationId),
  );

  const bases = ordered.map((op) => declaredName(op.connectionSlug, op.name));
  const names: (string | undefined)[] = bases.map((base) => {
    if (used.has(base)) return undefined;
    used.add(base);
    return base;
  });
  bases.forEach((base, i) => {
    if (names[i] !== undefined) return;
    const name = firstFree(base, (candidate) => used.has(candidate), DECLARED_NAME_MAX_LENGTH);
    used.add(name);
    names[i] = name;
  });

  const map = Object.create(null) as Record<string, string>;
  const connectionTools = ordered.map((op, i): DeclaredTool => {
    // Both passes give every index a name; the fallback only satisfies the type checker.
    const name = names[i] ?? bases[i] ?? '';
    map[name] = op.operationId;
    return { name, description: op.description ?? '', inputSchema: op.inputSchema };
  });

  return { tools: [...input.builtIns, ...connectionTools, FINISH_TURN], map };
}

/** What is wrong with a list of built-in tools, one message per problem; empty when it is fine. */
export function builtInProblems(builtIns: readonly DeclaredTool[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { name } of builtIns) {
    if (!DECLARED_NAME_PATTERN.test(name)) {
      problems.push(`"${name}" does not match ${String(DECLARED_NAME_PATTERN)}`);
    }
    // search_tools: the tool search's own tool (issue 31, src/turns/search/declare-search.ts).
    if (name === FINISH_TURN.name || name === 'search_tools') problems.push(`"${name}" is reserved`);
    if (seen.has(name)) problems.push(`"${name}" is listed twice`);
    seen.add(name);
  }
  return problems;
}

/** The operation id a declared name maps to, or `undefined`; safe for names like `__proto__`. */
export function resolveDeclaredName(map: Readonly<Record<string, string>>, name: string): string | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

const utf8 = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `text`, as 8 lower-case hex digits. Not for security. */
export function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of utf8.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(HASH_LENGTH, '0');
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
