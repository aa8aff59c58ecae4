/**
 * The model's arguments, written against a compiled schema, mapped back to canonical ones (pure,
 * issue 26): renamed properties get their canonical names, JSON text declared for a value the
 * dialect cannot type is parsed, and a strict-mode `null` for a property that was optional (and
 * does not take `null` canonically) is dropped. Nothing else is changed: the canonical argument
 * check runs on the result and enforces everything the compiled schema only described.
 *
 * A mapping that cannot be reversed refuses the call (the caller answers REJECTED): JSON text that
 * does not parse, or two keys that map to one canonical name. A WRITE is therefore never sent with
 * arguments other than what the model wrote, read through the declared schema.
 */
import type { JsonObject, JsonValue } from '../../operations/types.js';
import { isObject } from '../../operations/types.js';
import type { Shape } from './shape.js';

export type Decoded =
  { ok: true; args: JsonObject; changed: boolean } | { ok: false; field: string; problem: string };

class Irreversible extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** Decodes `args` through `shape`; `shape` null: the arguments are canonical as they are. */
export function decodeArguments(shape: Shape | null, args: JsonObject): Decoded {
  if (shape === null) return { ok: true, args, changed: false };
  const state = { changed: false };
  try {
    const out = decode(shape, args, '', state);
    if (!isObject(out)) return { ok: false, field: '(root)', problem: 'must be an object' };
    return { ok: true, args: out, changed: state.changed };
  } catch (err) {
    if (err instanceof Irreversible) return { ok: false, field: err.field || '(root)', problem: err.problem };
    throw err;
  }
}

function decode(shape: Shape, value: JsonValue, path: string, state: { changed: boolean }): JsonValue {
  switch (shape.k) {
    case 'json': {
      if (typeof value !== 'string') return value;
      try {
        state.changed = true;
        return JSON.parse(value) as JsonValue;
      } catch {
        throw new Irreversible(path, 'must be JSON text (it was declared as a string holding JSON)');
      }
    }
    case 'arr': {
      if (!Array.isArray(value)) return value;
      return value.map((item, i) => decode(shape.items, item, `${path}[${i}]`, state));
    }
    case 'obj': {
      if (!isObject(value)) return value;
      const out: JsonObject = {};
      const from: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const key of Object.keys(value)) {
        const v = value[key] as JsonValue;
        const prop = Object.hasOwn(shape.props, key) ? shape.props[key] : undefined;
        const field = path ? `${path}.${key}` : key;
        if (prop === undefined) {
          take(out, from, key, key, shape.rest ? decode(shape.rest, v, field, state) : v, field);
          continue;
        }
        if (v === null && prop.dropNull) {
          state.changed = true;
          continue;
        }
        if (prop.name !== key) state.changed = true;
        take(out, from, prop.name, key, prop.shape ? decode(prop.shape, v, field, state) : v, field);
      }
      return out;
    }
  }
}

function take(
  out: JsonObject,
  from: Record<string, string>,
  name: string,
  key: string,
  value: JsonValue,
  field: string,
): void {
  if (Object.hasOwn(out, name)) {
    throw new Irreversible(field, `names the same field as "${from[name]}"; give it once`);
  }
  from[name] = key;
  // A key such as "__proto__" is set as an own property, never through the prototype.
  Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
}
