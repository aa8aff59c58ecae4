/**
 * The compiler's recursive descent over one schema (pure: no I/O): a node of any kind
 * ({@link compileNode}), unions (`oneOf` as `anyOf`, null options in the dialect's way, several
 * types split), objects (properties renamed, strict mode's closed objects and nullable optional
 * properties, maps, the nesting cap), arrays (a permissive `items` where there is none), and the
 * nodes a typed dialect declares as JSON text. Leaves are scalar.ts, descriptions describe.ts.
 *
 * Kept whole on purpose: these functions call one another (an object's property may be a union of
 * objects), so splitting them across modules would make an import cycle. Each stays under 80 lines.
 */
import type { JsonObject, JsonValue } from '../../../operations/types.js';
import { isObject } from '../../../operations/types.js';
import { joinDescription, mergeAll, typeList } from '../normalize.js';
import { mergeShapes, type ObjectShape, type PropShape, type Shape } from '../shape.js';
import { type Ctx, LeaveOut, type Out } from './context.js';
import { describe, finish, keywordNote } from './describe.js';
import { renameAll } from './names.js';
import { listOf } from './root.js';
import { compileScalar, jsonType } from './scalar.js';

const JSON_TEXT_NOTE = 'Give the value as JSON text.';

/** One node, any kind. `depth` counts enclosing objects (the root object is 1). */
function compileNode(node: JsonObject, ctx: Ctx, depth: number): Out {
  if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) {
    const options = [...listOf(node.anyOf), ...listOf(node.oneOf)].filter((o): o is JsonObject =>
      isObject(o),
    );
    if (options.length > 0) return compileUnion(node, options, ctx, depth);
  }

  let types = typeList(node.type);
  if (types.length === 0) types = inferredTypes(node);
  const nullable =
    types.includes('null') ||
    node.nullable === true ||
    (Array.isArray(node.enum) && node.enum.includes(null));
  const nonNull = types.filter((t) => t !== 'null');
  if (types.length === 0) return permissive(node, ctx);
  if (nonNull.length === 0) {
    // Only null: the value must be null.
    return finish(node, { type: 'null' }, null, ctx, [], false);
  }
  if (nonNull.length > 1) {
    const { description, ...typed } = node;
    const split = nonNull.map((t): JsonObject => ({ ...typed, type: t }));
    const out = compileUnion(description === undefined ? {} : { description }, split, ctx, depth);
    return nullable ? makeNullable(out, ctx) : out;
  }
  const type = nonNull[0]!;
  let out: Out;
  if (type === 'object') out = compileObject(node, ctx, depth + 1, false);
  else if (type === 'array') out = compileArray(node, ctx, depth);
  else out = compileScalar(node, type, ctx);
  if (nullable && !out.permissive) out = makeNullable(out, ctx);
  return out;
}

function inferredTypes(node: JsonObject): string[] {
  if (isObject(node.properties) || node.additionalProperties !== undefined || Array.isArray(node.required))
    return ['object'];
  if (node.items !== undefined || Array.isArray(node.prefixItems)) return ['array'];
  const values = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : null;
  if (values) return [...new Set(values.map(jsonType))];
  return [];
}

/** A node that allows any value; what its keywords meant (`not`, `default`, …) is described. */
function permissive(node: JsonObject, ctx: Ctx, note?: string): Out {
  const notes: string[] = [];
  for (const key in node) {
    if (key === 'description' || key === 'title' || key === 'type' || key === 'nullable') continue;
    const n = keywordNote(key, node[key]!);
    if (n) notes.push(n);
  }
  const description = describe(node, ctx, notes, note);
  if (ctx.profile.typed) {
    const schema: JsonObject = { type: 'string' };
    schema.description = joinDescription(description, `${JSON_TEXT_NOTE} Any JSON value is accepted.`);
    return { schema, shape: { k: 'json' }, permissive: true };
  }
  const schema: JsonObject = {};
  if (description) schema.description = description;
  return { schema, shape: null, permissive: true };
}

/** A value the dialect cannot type (a map, a deep object): a string of JSON text, or as it is. */
function asJsonText(node: JsonObject, ctx: Ctx, what: string): Out {
  const schema: JsonObject = { type: 'string' };
  const description = describe(node, ctx, [], undefined);
  schema.description = joinDescription(description, `${JSON_TEXT_NOTE} (${what})`);
  return { schema, shape: { k: 'json' }, permissive: false };
}

function compileUnion(node: JsonObject, options: JsonObject[], ctx: Ctx, depth: number): Out {
  const { anyOf: _a, oneOf: _o, ...base } = node;
  const structural = Object.keys(base).some(
    (k) => k !== 'description' && k !== 'title' && k !== 'default' && k !== 'nullable',
  );
  const { description: _d, title: _t, ...baseStructure } = base;
  const parts = options.map((o) => (structural ? mergeAll([baseStructure, o]) : o));
  const nullOptions = parts.filter(
    (p) =>
      (typeList(p.type).length === 1 && p.type === 'null') ||
      (Array.isArray(p.type) && p.type.length === 1 && p.type[0] === 'null'),
  );
  const rest = parts.filter((p) => !nullOptions.includes(p));
  const nullable = nullOptions.length > 0 || base.nullable === true;
  if (rest.length === 0) return finish(base, { type: 'null' }, null, ctx, [], false);
  if (rest.length === 1) {
    const only = { ...rest[0]! };
    if (typeof base.description === 'string')
      only.description = joinDescription(
        base.description,
        typeof only.description === 'string' ? only.description : '',
      );
    const out = compileNode(only, ctx, depth);
    return nullable && !out.permissive ? makeNullable(out, ctx) : out;
  }
  const compiled = rest.map((o) => compileNode(o, ctx, depth));
  if (compiled.some((c) => c.permissive || c.shape?.k === 'json')) {
    // One option allows anything, or is JSON text that a string option could be mistaken for.
    return permissive(base, ctx);
  }
  const shape = unionShape(compiled);
  const schema: JsonObject = { anyOf: compiled.map((c) => c.schema) };
  const description = describe(base, ctx, [], undefined);
  if (description) schema.description = description;
  const out: Out = { schema, shape, permissive: false };
  return nullable ? makeNullable(out, ctx) : out;
}

/**
 * One shape for the options of a union: their renamings merged, and the tool left out
 * (`IRREVERSIBLE`) when two options would map one declared name back to different names.
 */
function unionShape(compiled: readonly Out[]): Shape | null {
  let shape: Shape | null = null;
  for (const c of compiled) {
    const merged = mergeShapes(shape, c.shape);
    if (merged === 'conflict')
      throw new LeaveOut('IRREVERSIBLE', 'two options of one of its unions rename a property differently');
    shape = merged;
  }
  if (shape?.k === 'obj') {
    // An option whose own names need no mapping has no shape: its names must mean themselves.
    for (const c of compiled) {
      if (!isObject(c.schema.properties)) continue;
      for (const declared of Object.keys(c.schema.properties)) {
        const own = c.shape?.k === 'obj' ? (c.shape.props[declared]?.name ?? declared) : declared;
        const merged = shape.props[declared];
        if (merged && merged.name !== own)
          throw new LeaveOut(
            'IRREVERSIBLE',
            'two options of one of its unions rename a property differently',
          );
      }
    }
  }
  return shape;
}

/** The same node, also allowing null, in the dialect's way. */
function makeNullable(out: Out, ctx: Ctx): Out {
  const s = out.schema;
  if (ctx.profile.openApiNullable) {
    s.nullable = true;
    return out;
  }
  if (Array.isArray(s.anyOf)) {
    if (!s.anyOf.some((o) => isObject(o) && o.type === 'null')) s.anyOf = [...s.anyOf, { type: 'null' }];
    return out;
  }
  if (Array.isArray(s.enum) && ctx.profile.enumValues !== 'any') {
    // The dialect's enums hold no null: the null goes beside the enum.
    const { description, ...rest } = s;
    const schema: JsonObject = { anyOf: [rest, { type: 'null' }] };
    if (description !== undefined) schema.description = description;
    return { ...out, schema };
  }
  const types = typeList(s.type);
  if (types.length > 0 && !types.includes('null')) s.type = [...types, 'null'];
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
  if (s.const !== undefined) {
    s.enum = [s.const, null];
    delete s.const;
  }
  return out;
}

/**
 * An object node. `root` is the tool's own parameters (never free-form, never JSON text).
 * OpenAI strict mode: every object closed and every property required (see {@link compileProperties}).
 */
export function compileObject(node: JsonObject, ctx: Ctx, depth: number, root: boolean): Out {
  const { profile } = ctx;
  const props = isObject(node.properties) ? node.properties : {};
  const names = Object.keys(props);
  const additional = node.additionalProperties;
  if (!root && names.length === 0) return compileFreeForm(node, ctx, depth);
  if (!root && depth > profile.maxObjectDepth)
    return asJsonText(node, ctx, `nested deeper than ${profile.maxObjectDepth} levels`);

  const required = new Set(listOf(node.required).filter((r): r is string => typeof r === 'string'));
  const declaredNames = renameAll(names, profile);
  const compiled = compileProperties(props, declaredNames, required, ctx, depth);
  const { properties } = compiled;
  let { changed } = compiled;
  const schema: JsonObject = { type: 'object', properties };
  const declaredRequired = profile.strict
    ? Object.keys(properties)
    : names.flatMap((n, i) => (required.has(n) ? [declaredNames[i]!] : []));
  if (declaredRequired.length > 0 || profile.strict) schema.required = declaredRequired;
  const rest = declareAdditional(schema, additional, ctx, depth);
  if (rest) changed = true;
  const shape: ObjectShape | null = changed
    ? { k: 'obj', props: compiled.shapeProps, ...(rest ? { rest } : {}) }
    : null;
  return finish(node, schema, shape, ctx, ['properties', 'required', 'type', 'additionalProperties'], root);
}

/** An object without properties: closed (no keys), free-form, or a map of one value schema. */
function compileFreeForm(node: JsonObject, ctx: Ctx, depth: number): Out {
  const { profile } = ctx;
  const additional = node.additionalProperties;
  const open = additional === undefined || additional === true || isObject(additional);
  if (!open) return finish(node, { type: 'object', properties: {} }, null, ctx, [], false);
  // A free-form object or a map: typed dialects cannot say "any keys".
  if (profile.typed) return asJsonText(node, ctx, 'a JSON object');
  if (isObject(additional) && profile.keep.has('additionalProperties')) {
    const values = compileNode(additional, ctx, depth);
    const schema: JsonObject = { type: 'object', additionalProperties: values.schema };
    const shape: Shape | null = values.shape
      ? { k: 'obj', props: Object.create(null) as Record<string, PropShape>, rest: values.shape }
      : null;
    return finish(node, schema, shape, ctx, ['additionalProperties'], false);
  }
  return finish(node, { type: 'object' }, null, ctx, [], false);
}

/** An object's properties under their declared names, and how to map each back. */
function compileProperties(
  props: JsonObject,
  declaredNames: readonly string[],
  required: ReadonlySet<string>,
  ctx: Ctx,
  depth: number,
): { properties: JsonObject; shapeProps: Record<string, PropShape>; changed: boolean } {
  const { profile } = ctx;
  const properties: JsonObject = {};
  const shapeProps = Object.create(null) as Record<string, PropShape>;
  let changed = false;
  Object.keys(props).forEach((name, i) => {
    const declared = declaredNames[i]!;
    const child = props[name];
    let out = compileNode(isObject(child) ? child : {}, ctx, depth);
    let dropNull = false;
    if (profile.strict && !required.has(name)) {
      // Strict mode lists every property as required: the model writes null for one it leaves out.
      // So a null there always means "not given", even where the canonical schema takes null.
      if (!out.permissive || out.shape?.k === 'json') out = makeNullable(out, ctx);
      dropNull = true;
      out.schema.description = joinDescription(out.schema.description, 'Optional: null means not given.');
    }
    properties[declared] = out.schema;
    ctx.properties++;
    ctx.chars += declared.length;
    if (declared !== name || out.shape !== null || dropNull) changed = true;
    shapeProps[declared] = { name, shape: out.shape, dropNull };
  });
  return { properties, shapeProps, changed };
}

/**
 * `additionalProperties` on a compiled object with properties, as the dialect says it; the shape
 * of the values of other keys when they need mapping back.
 */
function declareAdditional(
  schema: JsonObject,
  additional: JsonValue | undefined,
  ctx: Ctx,
  depth: number,
): Shape | undefined {
  const { profile } = ctx;
  if (profile.strict || (additional === false && profile.keep.has('additionalProperties'))) {
    schema.additionalProperties = false;
    return undefined;
  }
  if (isObject(additional) && profile.keep.has('additionalProperties')) {
    const values = compileNode(additional, ctx, depth);
    schema.additionalProperties = values.schema;
    return values.shape ?? undefined;
  }
  // Open (or a map) where the dialect has no word for it: the declared object lists its
  // properties only; other keys still pass the canonical check.
  return undefined;
}

function compileArray(node: JsonObject, ctx: Ctx, depth: number): Out {
  const { profile } = ctx;
  const items = node.items;
  if (!isObject(items) || Object.keys(items).every((k) => k === 'description' || k === 'title')) {
    if (profile.typed) return asJsonText(node, ctx, 'a JSON array');
    const any = isObject(items) ? permissive(items, ctx).schema : {};
    return finish(node, { type: 'array', items: any }, null, ctx, ['items', 'prefixItems'], false);
  }
  const inner = compileNode(items, ctx, depth);
  const schema: JsonObject = { type: 'array', items: inner.schema };
  return finish(
    node,
    schema,
    inner.shape ? { k: 'arr', items: inner.shape } : null,
    ctx,
    ['items', 'prefixItems'],
    false,
  );
}
