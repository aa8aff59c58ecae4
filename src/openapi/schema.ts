/**
 * Schema normalisation: a description's JSON Schemas (references, compositions, nullable forms,
 * 2.0 and 3.x dialects) → bounded, self-contained input schemas. Every walk is bounded by a level or
 * a composition depth; shared and cyclic subtrees are converted once per level. Pure.
 */
import type { JsonObject, JsonValue, NestedNames } from '../operations/types.js';
import { type Obj, dict, isObj, own } from './document.js';
import { assignNames, toOneLine } from './naming.js';
import { emptyView, MAX_CHECK_VARIANTS, mergeInto, product, unionOptions, type View } from './schema-view.js';
import { lookupRef, MISSING } from './refs.js';
import { copyKeywords, JSON_TYPES } from './schema-keywords.js';

export { MAX_CHECK_VARIANTS } from './schema-view.js';

// ---------------------------------------------------------------------------------------------
// Schemas

/** The converted form of one schema, with what its parent needs to know about it. */
export interface Converted {
  schema: JsonObject;
  /** Nodes in `schema`, counting shared subtrees once per place. */
  size: number;
  /** Renames inside, when any name had to be made to fit. */
  names: NestedNames | undefined;
  /** Whether it lists children, so it can be cut to a free-form object or array. */
  container: boolean;
  /**
   * Declared schemas: whether the argument check accepts more than this (a union narrowed to its
   * first option, a nullable enum without `null`, here or below). Absent means no.
   */
  narrowed?: boolean;
}

/** A child slot of an emitted object, kept so that the node budget can cut it afterwards. */
export interface Slot {
  converted: Converted;
  /** The property name, or `items`/`additionalProperties` when `property` is false. */
  key: string;
  property: boolean;
}

export interface Limits {
  maxOperations: number;
  maxProperties: number;
  maxDepth: number;
  maxEnumValues: number;
  maxDescriptionLength: number;
  maxSchemaNodes: number;
  maxTotalSchemaNodes: number;
  maxCompositionDepth: number;
  maxDiagnostics: number;
}

export class Converter {
  readonly diagnostics: string[] = [];
  private readonly seenDiagnostics = new Set<string>();
  private omittedDiagnostics = 0;
  private readonly refs = new Map<string, unknown>();
  private readonly views = new Map<object, View>();
  private readonly converted = new Map<object, (Converted | undefined)[]>();
  private readonly lines = new Map<string, string>();
  /** Counts cut cycles and depth limits; a view whose expansion moved it is not memoised. */
  private cuts = 0;

  private readonly variantMemo = new Map<object, View[]>();

  /**
   * @param check the argument check's converter (DESIGN.md rule 17): every option of a union is
   *   kept (as `anyOf`, each under the same budgets), `null` joins a nullable enum, and no
   *   description is copied (a check needs none). Otherwise the declared one: the first option.
   */
  constructor(
    readonly root: Obj,
    readonly limits: Limits,
    readonly check = false,
  ) {}

  diag(message: string): void {
    if (this.seenDiagnostics.has(message)) return;
    this.seenDiagnostics.add(message);
    if (this.diagnostics.length < this.limits.maxDiagnostics) this.diagnostics.push(message);
    else this.omittedDiagnostics++;
  }

  finishDiagnostics(): string[] {
    if (this.omittedDiagnostics > 0)
      this.diagnostics.push(`${this.omittedDiagnostics} more diagnostics left out`);
    return this.diagnostics;
  }

  /** `toOneLine` at the description limit, remembered: large descriptions repeat the same texts. */
  line(text: string): string {
    let line = this.lines.get(text);
    if (line === undefined) {
      line = toOneLine(text, this.limits.maxDescriptionLength);
      this.lines.set(text, line);
    }
    return line;
  }

  /** Follows a local reference (`#/...`, JSON-pointer and URI escapes); `MISSING` with a diagnostic otherwise. */
  resolve(ref: string): unknown {
    const cached = this.refs.get(ref);
    if (cached !== undefined) return cached;
    const target = lookupRef(this.root, ref, (message) => this.diag(message));
    this.refs.set(ref, target);
    return target;
  }

  /** Follows `$ref` chains of non-schema objects (parameters, request bodies, path items). */
  deref(value: unknown, what: string): Obj | undefined {
    let node = value;
    for (let hops = 0; isObj(node); hops++) {
      const ref = own(node, '$ref');
      if (typeof ref !== 'string') return node;
      if (hops >= this.limits.maxCompositionDepth) {
        this.diag(`${what}: $ref chain "${ref}" is too long or circular; left out`);
        return undefined;
      }
      node = this.resolve(ref);
      if (node === MISSING) return undefined;
    }
    return undefined;
  }

  // --- flattening ------------------------------------------------------------------------------

  view(raw: unknown): View {
    return isObj(raw) ? (this.views.get(raw) ?? this.expand(raw, new Set(), 0)) : emptyView();
  }

  /**
   * Flattens `$ref`, `allOf` and the first `oneOf`/`anyOf` option into one level. `active` holds
   * the schemas being flattened on this level, so a cycle through them ends with a diagnostic.
   * Views whose expansion cut nothing are memoised, which also keeps shared YAML subtrees linear.
   * The result may be memoised: callers must not change it.
   */
  private expand(raw: Obj, active: Set<object>, hops: number): View {
    const memo = this.views.get(raw);
    if (memo !== undefined) return memo;
    if (active.has(raw)) {
      this.cuts++;
      this.diag('a schema refers to itself through $ref/allOf; the cycle was cut');
      return emptyView();
    }
    if (hops >= this.limits.maxCompositionDepth) {
      this.cuts++;
      this.diag(
        `a schema nests $ref/allOf/oneOf/anyOf more than ${this.limits.maxCompositionDepth} deep; replaced by an empty schema`,
      );
      return emptyView();
    }
    const cutsBefore = this.cuts;
    const { view, members, unions } = this.ownView(raw);
    // The declared schema takes the first option of each union.
    view.narrowed ||= unions.length > 0;
    const all = unions.length === 0 ? members : [...(members ?? []), ...unions.map((o) => o[0])];
    if (all !== null && all.length > 0) {
      active.add(raw);
      for (const member of all) {
        if (isObj(member)) mergeInto(view, this.expand(member, active, hops + 1));
      }
      active.delete(raw);
    }
    if (this.cuts === cutsBefore) this.views.set(raw, view);
    return view;
  }

  /**
   * The check's flattening: one view per combination of union options (`$ref`, `allOf` and the
   * options of `oneOf`/`anyOf` merged as `expand` merges the first). Past `MAX_CHECK_VARIANTS`
   * combinations the schema is left free (`{}`): a check may accept too much, never refuse what the
   * description accepts. Bounded like `expand`; results that cut nothing are memoised.
   */
  variants(raw: unknown, active: Set<object> = new Set(), hops = 0): View[] {
    if (!isObj(raw)) return [emptyView()];
    const memo = this.variantMemo.get(raw);
    if (memo !== undefined) return memo;
    if (active.has(raw) || hops >= this.limits.maxCompositionDepth) {
      this.cuts++;
      return [emptyView()];
    }
    const cutsBefore = this.cuts;
    const { view, members, unions } = this.ownView(raw);
    let out: View[] = [view];
    active.add(raw);
    for (const member of members ?? []) {
      if (isObj(member)) out = product(out, this.variants(member, active, hops + 1));
    }
    for (const options of unions) {
      const alternatives: View[] = [];
      for (const option of options) {
        if (!isObj(option)) continue;
        alternatives.push(...this.variants(option, active, hops + 1));
        if (alternatives.length > MAX_CHECK_VARIANTS) break;
      }
      out = product(out, alternatives);
    }
    active.delete(raw);
    if (this.cuts === cutsBefore) this.variantMemo.set(raw, out);
    return out;
  }

  /**
   * The keywords written on this node itself, in one pass over its own keys (this runs once per
   * schema node of the document), and the schemas it merges in: its `$ref` target, its `allOf`
   * members and the first `oneOf`/`anyOf` options, in that order.
   */
  private ownView(raw: Obj): { view: View; members: unknown[] | null; unions: unknown[][] } {
    const view = emptyView();
    view.sources.push(raw);
    let type: unknown;
    let nullable = false;
    let ref: unknown;
    let allOf: unknown;
    let oneOf: unknown;
    let anyOf: unknown;
    for (const key of Object.keys(raw)) {
      const value = raw[key];
      switch (key) {
        case 'type':
          type = value;
          break;
        case 'nullable':
          nullable = value === true;
          break;
        case 'properties':
          if (isObj(value)) {
            view.properties = new Map();
            for (const name of Object.keys(value)) view.properties.set(name, [value[name]]);
          }
          break;
        case 'required':
          if (Array.isArray(value) && value.length > 0) {
            view.required = new Set();
            for (const name of value) if (typeof name === 'string') view.required.add(name);
          }
          break;
        case 'items':
          if (isObj(value)) view.items = [value];
          else if (Array.isArray(value))
            this.diag('tuple "items" (an array of schemas) is not supported; items are left free');
          break;
        case 'additionalProperties':
          if (isObj(value)) view.additional = [value];
          view.closed = value === false;
          break;
        case 'readOnly':
          view.readOnly = value === true;
          break;
        case '$ref':
          ref = value;
          break;
        case 'allOf':
          allOf = value;
          break;
        case 'oneOf':
          oneOf = value;
          break;
        case 'anyOf':
          anyOf = value;
          break;
      }
    }
    if (type !== undefined) view.types = this.types(type, nullable);
    else view.nullable = nullable;
    let members: unknown[] | null = null;
    if (typeof ref === 'string') {
      const target = this.resolve(ref);
      if (target !== MISSING) members = [target];
    }
    if (Array.isArray(allOf)) (members ??= []).push(...allOf);
    const unions: unknown[][] = [];
    for (const union of [unionOptions(oneOf), unionOptions(anyOf)]) {
      if (union === null) continue;
      view.nullable ||= union.nullable;
      if (union.options.length === 1) (members ??= []).push(union.options[0]);
      else unions.push(union.options);
    }
    return { view, members, unions };
  }

  private types(type: unknown, nullable: boolean): string[] | null {
    const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
    const valid: string[] = [];
    for (const t of types) {
      if (typeof t !== 'string') continue;
      // Swagger 2's `file` is not JSON Schema; outside a form body a file is sent as text.
      const mapped = t === 'file' ? 'string' : t;
      if (JSON_TYPES.has(mapped)) {
        if (!valid.includes(mapped)) valid.push(mapped);
      } else this.diag(`unknown schema type ${JSON.stringify(t)} was ignored`);
    }
    // OpenAPI 3.0 writes a null option as `nullable: true` next to the type.
    if (nullable && valid.length > 0 && !valid.includes('null')) valid.push('null');
    return valid.length > 0 ? valid : null;
  }

  // --- emitting ----------------------------------------------------------------------------

  /** Converts one raw schema at `level` (the input schema is level 1); memoised per node and level. */
  convert(raw: unknown, level: number): Converted {
    if (!isObj(raw)) return leaf({});
    let key: object = raw;
    // A bare reference converts like its target, so every `$ref` to one schema shares one result.
    const ref = own(raw, '$ref');
    if (typeof ref === 'string' && Object.keys(raw).length === 1) {
      const target = this.resolve(ref);
      if (isObj(target)) key = target;
    }
    let byLevel = this.converted.get(key);
    const memo = byLevel?.[level];
    if (memo !== undefined) return memo;
    const result = this.check
      ? this.emitVariants(this.variants(raw), level)
      : this.emit(this.view(raw), level);
    if (byLevel === undefined) {
      byLevel = [];
      this.converted.set(key, byLevel);
    }
    byLevel[level] = result;
    return result;
  }

  /** Converts the schemas that `allOf` merged under one property name. */
  convertAll(raws: readonly unknown[], level: number): Converted {
    if (raws.length === 1) return this.convert(raws[0], level);
    if (this.check) {
      let views = [emptyView()];
      for (const raw of raws) views = product(views, this.variants(raw));
      return this.emitVariants(views, level);
    }
    const view = emptyView();
    for (const raw of raws) mergeInto(view, this.view(raw));
    return this.emit(view, level);
  }

  /** The check's form of a schema with several variants: `anyOf` of each, emitted on its own. */
  private emitVariants(views: readonly View[], level: number): Converted {
    if (views.length === 1) return this.emit(views[0] as View, level);
    if (views.length > MAX_CHECK_VARIANTS) return leaf({});
    const options = views.map((v) => this.emit(v, level));
    let size = 1;
    for (const o of options) size += o.size;
    return { schema: { anyOf: options.map((o) => o.schema) }, size, names: undefined, container: true };
  }

  emit(view: View, level: number): Converted {
    const schema: JsonObject = {};
    let types = view.types;
    const properties = view.properties !== null && view.properties.size > 0 ? view.properties : null;
    const listsProperties = properties !== null || view.closed;
    const additional = view.additional;
    const items = view.items;
    if (types === null) {
      if (listsProperties || additional !== null) types = ['object'];
      else if (items !== null) types = ['array'];
    }
    if (view.nullable && types !== null && !types.includes('null')) types = [...types, 'null'];
    if (types !== null) schema.type = types.length === 1 ? (types[0] as string) : [...types];
    copyKeywords(this, view.sources, schema);
    // A nullable enum takes `null` (DESIGN.md rule 17); the declared one keeps the description's list.
    const takesNull = view.nullable || types?.includes('null') === true;
    const nullableEnum = takesNull && Array.isArray(schema.enum) && !schema.enum.includes(null);
    if (this.check && nullableEnum) schema.enum = [...(schema.enum as JsonValue[]), null];
    let narrowed = !this.check && (view.narrowed || nullableEnum);
    const isObject = types === null || types.includes('object');
    const isArray = types === null || types.includes('array');
    const hasChildren = (isObject && (listsProperties || additional !== null)) || (isArray && items !== null);
    if (!hasChildren) return narrowed ? { ...leaf(schema), narrowed } : leaf(schema);
    if (level > this.limits.maxDepth) return leaf(cutSchema(schema));

    let size = 1;
    let names: NestedNames | undefined;
    const slots: Slot[] = [];
    if (isObject && listsProperties) {
      const fields = properties === null ? [] : this.selectProperties(view, 'an object');
      const schemaNames = assignNames(fields.map((f) => f.wire));
      const out = dict<JsonValue>();
      const required: string[] = [];
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i] as SelectedProperty;
        const name = schemaNames[i] as string;
        const child = this.convertAll(field.schemas, level + 1);
        out[name] = child.schema;
        if (field.required) required.push(name);
        size += child.size;
        if (name !== field.wire || child.names !== undefined) {
          const entry: { wireName: string; nested?: NestedNames } = { wireName: field.wire };
          if (child.names !== undefined) entry.nested = child.names;
          names ??= {};
          names.properties ??= dict();
          names.properties[name] = entry;
        }
        slots.push({ converted: child, key: name, property: true });
        narrowed ||= child.narrowed === true;
      }
      schema.properties = out;
      if (required.length > 0) schema.required = required;
      schema.additionalProperties = false;
    } else if (isObject && additional !== null) {
      const child = this.convertAll(additional, level + 1);
      schema.additionalProperties = child.schema;
      size += child.size;
      if (child.names !== undefined) names = { additionalProperties: child.names };
      slots.push({ converted: child, key: 'additionalProperties', property: false });
      narrowed ||= child.narrowed === true;
    }
    if (isArray && items !== null) {
      const child = this.convertAll(items, level + 1);
      schema.items = child.schema;
      size += child.size;
      if (child.names !== undefined) names = { ...names, items: child.names };
      slots.push({ converted: child, key: 'items', property: false });
      narrowed ||= child.narrowed === true;
    }
    if (size > this.limits.maxSchemaNodes) {
      size = this.fitSize(size, slots, schema, names);
      if (names !== undefined && Object.keys(names).length === 0) names = undefined;
    }
    return narrowed
      ? { schema, size, names, container: true, narrowed }
      : { schema, size, names, container: true };
  }

  /**
   * Cuts the largest child containers of `schema` to free-form until it fits the node budget, and
   * drops the renames below them, which no longer apply.
   */
  fitSize(
    size: number,
    slots: Slot[],
    schema: JsonObject,
    names: NestedNames | undefined,
    budget: number = this.limits.maxSchemaNodes,
  ): number {
    const largest = slots
      .filter((s) => s.converted.container && s.converted.size > 1)
      .sort((a, b) => b.converted.size - a.converted.size);
    for (const slot of largest) {
      if (size <= budget) break;
      const cut = cutSchema(slot.converted.schema);
      if (slot.property) {
        (schema.properties as Record<string, JsonValue>)[slot.key] = cut;
        const entry = names?.properties?.[slot.key];
        if (entry !== undefined) delete entry.nested;
      } else {
        schema[slot.key] = cut;
        if (names !== undefined) delete names[slot.key as 'items' | 'additionalProperties'];
      }
      size -= slot.converted.size - 1;
    }
    this.diag(
      budget < this.limits.maxSchemaNodes
        ? `the input schemas together were larger than ${this.limits.maxTotalSchemaNodes} nodes; the largest parts of later ones became free-form`
        : `a schema was larger than ${this.limits.maxSchemaNodes} nodes; its largest parts became free-form`,
    );
    return size;
  }

  /** Properties to keep: not `readOnly`, required ones first, then document order, at most `maxProperties`. */
  selectProperties(view: View, where: string): SelectedProperty[] {
    const required: SelectedProperty[] = [];
    const optional: SelectedProperty[] = [];
    if (view.properties === null) return required;
    for (const [wire, schemas] of view.properties) {
      let readOnly = false;
      for (const schema of schemas) readOnly ||= this.view(schema).readOnly;
      if (readOnly) continue;
      const isRequired = view.required !== null && view.required.has(wire);
      (isRequired ? required : optional).push({ wire, schemas, required: isRequired });
    }
    const all = required.length === 0 ? optional : required.concat(optional);
    if (all.length > this.limits.maxProperties) {
      this.diag(
        `${where} has ${all.length} properties; the first ${this.limits.maxProperties} were kept (required ones first)`,
      );
      return all.slice(0, this.limits.maxProperties);
    }
    return all;
  }
}

interface SelectedProperty {
  wire: string;
  schemas: unknown[];
  required: boolean;
}

export function leaf(schema: JsonObject): Converted {
  return { schema, size: 1, names: undefined, container: false };
}

/** The free-form form of an object or array: its type (and description) without children. */
function cutSchema(schema: JsonObject): JsonObject {
  const cut: JsonObject = {};
  if (schema.type !== undefined) cut.type = schema.type;
  if (schema.description !== undefined) cut.description = schema.description;
  return cut;
}
