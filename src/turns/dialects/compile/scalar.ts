/**
 * Leaf nodes of the compiler (pure: no I/O): a string, number, integer or boolean schema, with its
 * `enum`, `const` and `format` kept where the dialect takes them (within its caps) and described
 * where it does not.
 */
import type { JsonObject, JsonValue } from '../../../operations/types.js';
import { enumWithinCaps, valueText } from './caps.js';
import type { Ctx, Out } from './context.js';
import { enumNote, finish } from './describe.js';

/** Whether an enum or const value is of the node's `type` (an integer is a number too). */
export function fitsType(v: JsonValue, type: string): boolean {
  const t = jsonType(v);
  return t === type || (t === 'integer' && type === 'number');
}

/** The JSON Schema type of a value. */
export function jsonType(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** A string, number, integer or boolean node: its enum, const and format as the dialect takes them. */
export function compileScalar(node: JsonObject, type: string, ctx: Ctx): Out {
  const { profile } = ctx;
  const schema: JsonObject = { type };
  const handled: string[] = [];
  const notes: string[] = [];
  if (Array.isArray(node.enum)) {
    handled.push('enum');
    const values = node.enum.filter((v) => v !== null && typeof v !== 'object' && fitsType(v, type));
    const fits =
      values.length > 0 &&
      values.every((v) =>
        profile.enumValues === 'any'
          ? true
          : profile.enumValues === 'strings'
            ? typeof v === 'string'
            : typeof v === 'string' || typeof v === 'number',
      ) &&
      !(profile.noEmptyEnumValue && values.includes('')) &&
      enumWithinCaps(values, ctx);
    if (fits) {
      schema.enum = values;
      if (profile.caps) {
        ctx.enumValues += values.length;
        ctx.chars += values.reduce<number>((n, v) => n + valueText(v).length, 0);
      }
    } else {
      notes.push(enumNote(node.enum));
    }
  }
  if (node.const !== undefined) {
    handled.push('const');
    const v = node.const;
    if (
      profile.keep.has('const') &&
      (profile.caps === null || ctx.chars + valueText(v).length <= profile.caps.chars)
    ) {
      schema.const = v;
      ctx.chars += valueText(v).length;
    } else if (
      profile.enumValues !== 'any' &&
      (typeof v === 'string'
        ? !(profile.noEmptyEnumValue && v === '')
        : profile.enumValues === 'strings-numbers' && typeof v === 'number')
    ) {
      schema.enum = [v];
    } else notes.push(`must be ${JSON.stringify(v)}`);
  }
  if (typeof node.format === 'string') {
    handled.push('format');
    const allowed = profile.formats?.[type];
    if (profile.keep.has('format') && (allowed === undefined || allowed.has(node.format)))
      schema.format = node.format;
    else notes.push(`format: ${node.format}`);
  }
  return finish(node, schema, null, ctx, handled, false, notes);
}
