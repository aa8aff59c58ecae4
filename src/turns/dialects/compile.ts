/**
 * Compiles one tool's canonical input schema for one model API (pure, issue 26): what comes out is
 * a schema that API's request accepts, and a {@link Shape} that maps the model's arguments back to
 * canonical ones (decode.ts). The rules each dialect follows, with their sources, are in
 * docs/dialects.md; the independent check of the output is rules.ts.
 *
 * The steps, for every dialect but GENERIC (which is never compiled: today's output, byte for byte):
 * 1. normalize.ts: local `$ref`s inlined (a recursive one cut into a permissive schema), `allOf`
 *    merged, boolean schemas made objects.
 * 2. The root is made one plain object schema: a root `anyOf`/`oneOf` of objects is merged into one
 *    object (properties united, `required` what every option requires), the options named in the
 *    description. A root that is not an object schema cannot be declared (`UNSUPPORTED_SCHEMA`).
 * 3. Each node is rewritten for the dialect:
 *    - `oneOf` becomes `anyOf`; a `null` option, a `null` type or `nullable` becomes the dialect's
 *      way of saying null (a `null` type or option, or OpenAPI's `nullable: true` for Gemini);
 *      several types become an `anyOf` of one type each.
 *    - Keywords the dialect refuses are removed, and what they meant is written into the node's
 *      description (`format: email`, `pattern: ^[A-Z]{3}$`, `at least 1`, `one of: …`).
 *    - Property names the dialect refuses are renamed (decode.ts maps them back).
 *    - An array without `items` gets a permissive `items`.
 *    - Where the dialect needs a type on every node (OpenAI strict, Gemini `parameters`), a node
 *      that allows any value (a free-form object, a map, a cut recursion, untyped items) is declared
 *      as a string holding JSON text, which decode.ts parses back.
 *    - OpenAI strict: every object closed (`additionalProperties: false`) and every property
 *      required; an optional property becomes nullable, and a `null` from the model for it means
 *      "not given" (dropped before the call), even where the canonical schema takes `null` (strict
 *      mode has no other way to leave a property out).
 * 4. Caps: nesting, total properties, enum values and characters, per the dialect; a cap that
 *    cannot be met by describing instead of declaring leaves the tool out (`SCHEMA_TOO_LARGE`).
 *
 * The argument check always runs against the canonical schema after decoding, so everything that
 * was only described is still enforced, with a REJECTED message naming the field and the rule.
 *
 * This module is the entry point; the steps live in `compile/`: each dialect's profile
 * (`profiles.ts`), the root made one object (`root.ts`), the recursive descent over nodes
 * (`nodes.ts`, with unions, objects, strict mode and arrays), leaves (`scalar.ts`), removed
 * keywords written into descriptions (`describe.ts`), renamed properties (`names.ts`), the
 * whole-schema caps (`caps.ts`), and what they share (`context.ts`).
 */
import type { JsonObject } from '../../operations/types.js';
import { checkTotals } from './compile/caps.js';
import { type Ctx, LeaveOut, type LeftOutCode } from './compile/context.js';
import { compileObject } from './compile/nodes.js';
import { PROFILES } from './compile/profiles.js';
import { rootObject } from './compile/root.js';
import type { ToolDialect } from './dialect.js';
import { normalizeSchema } from './normalize.js';
import type { Shape } from './shape.js';

export type { LeftOutCode } from './compile/context.js';
export { keywordNote } from './compile/describe.js';
export { renameAll } from './compile/names.js';

export type CompiledSchema =
  | {
      ok: true;
      /** The schema as the dialect takes it; `null` for Gemini `parameters` when there are none. */
      schema: JsonObject | null;
      /** How to map the model's arguments back; null when they are the canonical ones as they are. */
      shape: Shape | null;
    }
  | { ok: false; code: LeftOutCode; reason: string };

/** Compiles `schema` for `dialect` (never GENERIC: that is the canonical schema as it is). */
export function compileSchema(dialect: Exclude<ToolDialect, 'GENERIC'>, schema: JsonObject): CompiledSchema {
  const profile = PROFILES[dialect];
  const normalized = normalizeSchema(schema);
  if (!normalized.ok) return normalized;
  const root = rootObject(normalized.schema);
  if (!root.ok) return root;
  const ctx: Ctx = { profile, properties: 0, enumValues: 0, chars: 0 };
  try {
    const out = compileObject(root.schema, ctx, 1, true);
    checkTotals(ctx);
    // Gemini: a function without parameters declares none (an OBJECT needs properties there).
    const none = profile.openApiNullable && Object.keys(out.schema.properties as JsonObject).length === 0;
    return { ok: true, schema: none ? null : out.schema, shape: out.shape };
  } catch (err) {
    if (err instanceof LeaveOut) return { ok: false, code: err.code, reason: err.reason };
    throw err;
  }
}
