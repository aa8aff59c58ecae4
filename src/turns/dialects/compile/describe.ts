/**
 * Keyword removal into descriptions (pure: no I/O): {@link finish} copies onto a compiled node the
 * keywords its dialect keeps, and writes what each removed one meant into the node's description
 * (`format: email`, `pattern: ^[A-Z]{3}$`, `at least 1`, `one of: …`), bounded in length. The
 * canonical argument check still enforces every removed keyword.
 */
import type { JsonObject, JsonValue } from '../../../operations/types.js';
import { joinDescription } from '../normalize.js';
import type { Shape } from '../shape.js';
import type { Ctx, Out } from './context.js';

/** Enum values quoted in a description when the enum itself is not declared. */
const DESCRIBED_ENUM_CHARS = 2_000;
/** The longest part of a description this compiler adds to one node. */
const ADDED_DESCRIPTION_CHARS = 2_400;

/** An enum in words, its values quoted up to {@link DESCRIBED_ENUM_CHARS} characters. */
export function enumNote(values: JsonValue[]): string {
  let text = '';
  let shown = 0;
  for (const v of values) {
    const part = JSON.stringify(v);
    if (text.length + part.length > DESCRIBED_ENUM_CHARS) break;
    text += (shown > 0 ? ', ' : '') + part;
    shown++;
  }
  return shown === values.length ? `one of: ${text}` : `one of ${values.length} values: ${text}, …`;
}

/**
 * The node's kept keywords copied onto `schema` (besides those already `handled`), and the
 * dropped ones described. `description` is written last.
 */
export function finish(
  node: JsonObject,
  schema: JsonObject,
  shape: Shape | null,
  ctx: Ctx,
  handled: readonly string[],
  root: boolean,
  notes: string[] = [],
): Out {
  const { profile } = ctx;
  for (const key in node) {
    if (handled.includes(key) || key === 'type' || key === 'description' || key === 'nullable') continue;
    if (key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'properties' || key === 'items')
      continue;
    const v = node[key]!;
    if (profile.keep.has(key) && KEPT_VALUE[key]?.(v) !== false) {
      if (key === 'title' && root) continue;
      schema[key] = v;
      continue;
    }
    const note = keywordNote(key, v);
    if (note) notes.push(note);
  }
  const description = describe(node, ctx, notes, undefined);
  if (description) schema.description = description;
  return { schema, shape, permissive: false };
}

/** Values a kept keyword may have; another value is described instead. */
const KEPT_VALUE: Record<string, (v: JsonValue) => boolean> = {
  pattern: (v) => typeof v === 'string',
  title: (v) => typeof v === 'string',
  minimum: (v) => typeof v === 'number',
  maximum: (v) => typeof v === 'number',
  exclusiveMinimum: (v) => typeof v === 'number',
  exclusiveMaximum: (v) => typeof v === 'number',
  multipleOf: (v) => typeof v === 'number' && v > 0,
  minLength: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxLength: (v) => Number.isInteger(v) && (v as number) >= 0,
  minItems: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxItems: (v) => Number.isInteger(v) && (v as number) >= 0,
  minProperties: (v) => Number.isInteger(v) && (v as number) >= 0,
  maxProperties: (v) => Number.isInteger(v) && (v as number) >= 0,
  uniqueItems: (v) => typeof v === 'boolean',
};

/** What a dropped keyword meant, in words; null for keywords that constrain nothing. */
export function keywordNote(key: string, v: JsonValue): string | null {
  const n = typeof v === 'number' ? v : null;
  switch (key) {
    case 'format':
      return typeof v === 'string' ? `format: ${v}` : null;
    case 'pattern':
      return typeof v === 'string' ? `pattern: ${oneLine(v, 300)}` : null;
    case 'minLength':
      return n === null ? null : `at least ${n} character${n === 1 ? '' : 's'}`;
    case 'maxLength':
      return n === null ? null : `at most ${n} character${n === 1 ? '' : 's'}`;
    case 'minimum':
      return n === null ? null : `at least ${n}`;
    case 'maximum':
      return n === null ? null : `at most ${n}`;
    case 'exclusiveMinimum':
      return n === null ? null : `more than ${n}`;
    case 'exclusiveMaximum':
      return n === null ? null : `less than ${n}`;
    case 'multipleOf':
      return n === null ? null : `a multiple of ${n}`;
    case 'minItems':
      return n === null ? null : `at least ${n} item${n === 1 ? '' : 's'}`;
    case 'maxItems':
      return n === null ? null : `at most ${n} item${n === 1 ? '' : 's'}`;
    case 'uniqueItems':
      return v === true ? 'items must be unique' : null;
    case 'minProperties':
      return n === null ? null : `at least ${n} key${n === 1 ? '' : 's'}`;
    case 'maxProperties':
      return n === null ? null : `at most ${n} key${n === 1 ? '' : 's'}`;
    case 'const':
      return `must be ${oneLine(JSON.stringify(v), 300)}`;
    case 'default':
      return `default: ${oneLine(JSON.stringify(v), 200)}`;
    case 'enum':
      return Array.isArray(v) ? enumNote(v) : null;
    case 'not':
      return 'some values are excluded (see the tool description)';
    case 'propertyNames':
      return 'key names are restricted';
    case 'patternProperties':
      return 'keys matching patterns take their own values';
    case 'dependentRequired':
      return 'some fields require others';
    default:
      return null;
  }
}

/** The node's own description with the notes of what was not declared, bounded. */
export function describe(
  node: JsonObject,
  _ctx: Ctx,
  notes: string[],
  extra: string | undefined,
): string | null {
  let added = notes.join('; ');
  if (extra) added = added ? `${added}; ${extra}` : extra;
  if (added.length > ADDED_DESCRIPTION_CHARS) added = `${added.slice(0, ADDED_DESCRIPTION_CHARS)}…`;
  const own = typeof node.description === 'string' ? node.description : '';
  if (!added) return own || null;
  return joinDescription(own, `(${added})`);
}

/** `text` on one line, cut to `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
