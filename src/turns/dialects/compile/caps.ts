/**
 * The compiler's whole-schema caps (pure: no I/O), for the dialects that have them (OpenAI strict):
 * total properties, enum values and characters of names and values, and the characters of one
 * large string enum. An enum past a cap is described instead of declared; a total past a cap
 * leaves the tool out (`SCHEMA_TOO_LARGE`). Nesting is capped where objects are compiled.
 */
import type { JsonValue } from '../../../operations/types.js';
import { type Ctx, LeaveOut } from './context.js';

/** Whether an enum can be declared within what is left of the caps (OpenAI strict). */
export function enumWithinCaps(values: JsonValue[], ctx: Ctx): boolean {
  const caps = ctx.profile.caps;
  if (!caps) return true;
  if (ctx.enumValues + values.length > caps.enumValues) return false;
  const chars = values.reduce<number>((n, v) => n + valueText(v).length, 0);
  if (
    values.length > caps.bigStringEnum.values &&
    values.every((v) => typeof v === 'string') &&
    chars > caps.bigStringEnum.chars
  )
    return false;
  return ctx.chars + chars <= caps.chars;
}

/** An enum or const value as the characters OpenAI counts. */
export function valueText(v: JsonValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The whole-schema caps, once every node is compiled: the tool is left out when one is passed. */
export function checkTotals(ctx: Ctx): void {
  const { caps } = ctx.profile;
  if (!caps) return;
  if (ctx.properties > caps.properties)
    throw new LeaveOut(
      'SCHEMA_TOO_LARGE',
      `its input schema has ${ctx.properties} properties, over the limit of ${caps.properties}`,
    );
  if (ctx.chars > caps.chars)
    throw new LeaveOut(
      'SCHEMA_TOO_LARGE',
      `its input schema's property names, enum and const values are ${ctx.chars} characters, over the limit of ${caps.chars}`,
    );
}
