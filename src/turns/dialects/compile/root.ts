/**
 * The root of a compiled schema (pure: no I/O): every model API takes one plain object schema as a
 * tool's parameters, so a root `anyOf`/`oneOf` of objects is merged into one object (properties
 * united, `required` what every option requires) with the options named in the description, and a
 * root that is not an object schema is refused (`UNSUPPORTED_SCHEMA`).
 */
import type { JsonObject, JsonValue } from '../../../operations/types.js';
import { isObject } from '../../../operations/types.js';
import { joinDescription, typeList } from '../normalize.js';
import type { LeftOutCode } from './context.js';
import { oneLine } from './describe.js';

/**
 * The root as one plain object schema: `anyOf`/`oneOf` options that are objects merged into it.
 * Each option's own required list still holds through the canonical check.
 */
export function rootObject(
  schema: JsonObject,
): { ok: true; schema: JsonObject } | { ok: false; code: LeftOutCode; reason: string } {
  const { anyOf, oneOf, ...base } = schema;
  const options = [...listOf(anyOf), ...listOf(oneOf)];
  let merged: JsonObject = base;
  if (options.length > 0) {
    const objects = options.filter((o) => isObjectSchema(o));
    if (objects.length !== options.length && !isObjectSchema(base)) {
      return {
        ok: false,
        code: 'UNSUPPORTED_SCHEMA',
        reason: 'its input schema is a union of non-object schemas',
      };
    }
    const properties: JsonObject = { ...(isObject(base.properties) ? base.properties : {}) };
    for (const o of objects) {
      if (!isObject(o.properties)) continue;
      for (const name in o.properties) {
        const p = o.properties[name] as JsonObject;
        properties[name] = properties[name] === undefined ? p : { anyOf: [properties[name]!, p] };
      }
    }
    const requiredByAll = objects
      .map((o) => new Set(listOf(o.required).filter((r): r is string => typeof r === 'string')))
      .reduce<Set<string> | null>(
        (acc, s) => (acc === null ? s : new Set([...acc].filter((r) => s.has(r)))),
        null,
      );
    const required = [...new Set([...listOf(base.required), ...(requiredByAll ?? [])])];
    const forms = objects
      .map((o, i) => {
        const names = isObject(o.properties) ? Object.keys(o.properties) : [];
        const req = listOf(o.required).filter((r): r is string => typeof r === 'string');
        const what = typeof o.description === 'string' ? o.description : names.join(', ') || 'no fields';
        return `(${i + 1}) ${oneLine(what, 160)}${req.length > 0 ? ` [requires ${req.join(', ')}]` : ''}`;
      })
      .join('; ');
    merged = { ...base, type: 'object', properties };
    if (required.length > 0) merged.required = required;
    else delete merged.required;
    merged.description = joinDescription(
      base.description,
      `The arguments take one of these forms: ${forms}.`,
    );
  }
  if (!isObjectSchema(merged)) {
    return { ok: false, code: 'UNSUPPORTED_SCHEMA', reason: 'its input schema does not describe an object' };
  }
  return { ok: true, schema: merged };
}

function isObjectSchema(s: JsonValue | undefined): s is JsonObject {
  if (!isObject(s)) return false;
  const types = typeList(s.type);
  if (types.length > 0) return types.includes('object');
  return (
    s.properties !== undefined ||
    s.additionalProperties !== undefined ||
    Object.keys(s).length === 0 ||
    onlyAnnotations(s)
  );
}

function onlyAnnotations(s: JsonObject): boolean {
  return Object.keys(s).every((k) => k === 'description' || k === 'title' || k === 'required');
}

/** A keyword's list, or none. */
export function listOf(v: JsonValue | undefined): JsonValue[] {
  return Array.isArray(v) ? v : [];
}
