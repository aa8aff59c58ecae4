/**
 * Round trips through a compiled declaration (issue 26 item 7): canonical arguments are written
 * the way a model would write them against the compiled schema ({@link encodeArguments}, the
 * inverse of src/turns/dialects/decode.ts, written here apart from it), checked against the
 * declared schema, then decoded and compared with what they started as.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonObject, JsonValue } from '../../src/operations/types.js';
import { isObject } from '../../src/operations/types.js';
import type { ToolDialect } from '../../src/turns/dialects/dialect.js';
import type { Shape } from '../../src/turns/dialects/shape.js';

/** `canonical` as the model writes it against the compiled schema that `shape` came with. */
export function encodeArguments(shape: Shape | null, canonical: JsonValue, strict: boolean): JsonValue {
  if (shape === null) return canonical;
  switch (shape.k) {
    case 'json':
      return JSON.stringify(canonical);
    case 'arr':
      return Array.isArray(canonical)
        ? canonical.map((v) => encodeArguments(shape.items, v, strict))
        : canonical;
    case 'obj': {
      if (!isObject(canonical)) return canonical;
      const byCanonical = new Map(
        Object.entries(shape.props).map(([declared, p]) => [p.name, { declared, p }]),
      );
      const out: JsonObject = {};
      for (const [key, value] of Object.entries(canonical)) {
        const hit = byCanonical.get(key);
        if (hit) out[hit.declared] = encodeArguments(hit.p.shape, value, strict);
        else
          out[key] = shape.rest
            ? encodeArguments(shape.rest, value, strict)
            : (value);
      }
      if (strict) {
        // Strict mode: every property is required; one the model leaves out it writes as null.
        for (const [declared, p] of Object.entries(shape.props)) {
          if (!Object.hasOwn(out, declared) && p.dropNull) out[declared] = null;
        }
      }
      return out;
    }
  }
}

/** The compiled schema as JSON Schema for Ajv (Gemini's OpenAPI `nullable` as a null type). */
export function asJsonSchema(dialect: ToolDialect, schema: JsonValue): JsonValue {
  if (dialect !== 'GEMINI') return schema;
  const walk = (node: JsonValue): JsonValue => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'nullable' || k === 'format') continue;
      out[k] =
        k === 'properties' && isObject(v)
          ? Object.fromEntries(Object.entries(v).map(([n, s]) => [n, walk(s)]))
          : walk(v);
    }
    if (node.nullable === true) {
      if (typeof out.type === 'string') out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
      if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
    }
    return out;
  };
  return walk(schema);
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });

/** Whether `value` passes `schema` (JSON Schema 2020-12; unknown keywords ignored). */
export function passes(schema: JsonValue, value: JsonValue): { ok: boolean; errors: string } {
  const validate = ajv.compile(schema as JsonObject);
  const ok = validate(value);
  return { ok, errors: ok ? '' : ajv.errorsText(validate.errors) };
}
