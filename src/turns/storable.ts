/**
 * Text that PostgreSQL can store, and the limits on a call's arguments (pure).
 *
 * PostgreSQL refuses U+0000 in `text` and `jsonb`, and `jsonb` refuses an escaped lone surrogate
 * (`"\ud800"`). The model and a tool server can send either. Records (TurnCall, ledger rows, turn
 * events) keep such text with each unstorable character replaced by U+FFFD, so that the record is
 * written instead of lost; the tool itself always receives the model's arguments unchanged.
 *
 * This is not scrubbing: secrets are removed first (`scrubSecrets`), then text is cut to its cap,
 * then made storable, as the last step before a statement.
 */

/** What stands in a record for a character PostgreSQL cannot store. */
export const REPLACEMENT = '\ufffd';

// U+0000, a high surrogate not followed by a low one, a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every NUL and lone surrogate replaced by U+FFFD. */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  return text.replace(UNSTORABLE_CHAR, REPLACEMENT);
}

/**
 * The bounded (`varchar(n)`) columns that the call records write (turn_call, turn_event,
 * ledger_entry, ledger_outcome), by column name, with their limits in characters as the migrations
 * set them. Every record field of that name is cut to fit (`storableRecordJson`), so that no value,
 * whoever sent it, can make a record unstorable. A test holds this map to the database's own.
 */
export const RECORD_COLUMN_LIMITS: Readonly<Record<string, number>> = {
  declared_name: 200,
  operation_key: 300,
  conversation_id: 200,
  traceparent: 256,
  tracestate: 512,
};

/**
 * `text` cut to at most `max` characters, the last of them `…` when it was cut. Counted in UTF-16
 * units, never fewer than PostgreSQL's characters (code points), and a surrogate pair is never
 * split.
 */
export function fitText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // the high half of a pair whose low half is cut
  return `${text.slice(0, end)}…`;
}

/**
 * One record as a JSON object: `fields` as JSON.stringify writes them (a Date as its ISO text),
 * each bounded column cut to fit (RECORD_COLUMN_LIMITS), then `raw`, JSON texts already made
 * storable, as they are. Every NUL or lone surrogate is replaced, as in any record.
 */
export function storableRecordJson(
  fields: Record<string, unknown>,
  raw: Record<string, string> = {},
): string {
  let fitted = fields;
  for (const key in fields) {
    const limit = RECORD_COLUMN_LIMITS[key];
    const value = fields[key];
    if (limit !== undefined && typeof value === 'string' && value.length > limit) {
      if (fitted === fields) fitted = { ...fields };
      fitted[key] = fitText(value, limit);
    }
  }
  let json = JSON.stringify(fitted).slice(0, -1);
  for (const key in raw) json += `${json.length > 1 ? ',' : ''}${JSON.stringify(key)}:${raw[key]}`;
  return storableJsonText(`${json}}`);
}

/*
 * In JSON.stringify's output, U+0000 is always the escape `\u0000` and a lone surrogate always the
 * escape `\udXXX` (a paired one is written as itself). An escape counts only after an even number
 * of backslashes: `\\u0000` is a backslash followed by the text "u0000".
 */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;
const MAYBE_UNSTORABLE = /\\u(?:0000|d[89a-f])/;

/**
 * JSON text from `JSON.stringify`, with every NUL and lone surrogate (in keys and values, at any
 * depth) replaced by U+FFFD. Linear in the text, no recursion; the text is returned as is (no copy)
 * when there is nothing to replace, which is nearly always.
 */
export function storableJsonText(json: string): string {
  if (!MAYBE_UNSTORABLE.test(json)) return json;
  return json.replace(UNSTORABLE_ESCAPE, '$1\\ufffd');
}

/** A JSON value serialized for a `jsonb` parameter that PostgreSQL accepts. */
export function storableJson(value: unknown): string {
  return storableJsonText(JSON.stringify(value) ?? 'null');
}

export interface ArgumentLimits {
  /** Nesting of objects and arrays; the arguments object itself is depth 1. */
  maxDepth: number;
  /** Serialized JSON, in UTF-8 bytes. */
  maxBytes: number;
}

export type ArgumentCheck =
  { ok: true; json: string } | { ok: false; reason: 'DEPTH' | 'SIZE'; message: string };

/** Nesting depth of a JSON value, without recursion (a hostile value may be thousands deep). */
function depthWithin(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return false;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return true;
}

/**
 * Checks a call's arguments against the limits before anything is recorded or sent. On success it
 * returns the serialized arguments, so the caller does not serialize them twice.
 */
export function checkArguments(args: unknown, limits: ArgumentLimits, tool: string): ArgumentCheck {
  if (!depthWithin(args, limits.maxDepth)) {
    return {
      ok: false,
      reason: 'DEPTH',
      message: `The arguments for ${tool} are nested more than ${limits.maxDepth} levels deep. Nothing was done; send flatter arguments.`,
    };
  }
  const json = JSON.stringify(args) ?? 'null';
  // A UTF-8 byte count without allocating: at most 3 bytes per UTF-16 unit.
  const bytes = json.length * 3 <= limits.maxBytes ? json.length : Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxBytes) {
    return {
      ok: false,
      reason: 'SIZE',
      message: `The arguments for ${tool} are ${bytes} bytes, over the limit of ${limits.maxBytes}. Nothing was done; send less data in one call.`,
    };
  }
  return { ok: true, json };
}

/** What a record keeps instead of arguments refused by a limit. */
export function refusedArgumentsNote(check: Extract<ArgumentCheck, { ok: false }>): {
  _refused: string;
} {
  return {
    _refused:
      check.reason === 'DEPTH' ? 'arguments nested too deep; not kept' : 'arguments too large; not kept',
  };
}
