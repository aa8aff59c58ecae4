/**
 * OpenAPI 3.0/3.1 and Swagger 2.0 descriptions → operations, as the tool contract page says.
 *
 * Pure: no I/O, no clock, no ORM. The document may be hostile (cycles, shared subtrees from YAML
 * aliases, 10,000-level nesting, `__proto__` keys), so every walk here is bounded by a level or a
 * composition depth, every lookup by key checks own properties, and every map built from document
 * keys has no prototype.
 */
import { AppError } from '../errors.js';
import type {
  FieldBinding,
  FieldLocation,
  HttpMethod,
  JsonObject,
  JsonValue,
  NestedNames,
  OpenApiBinding,
  Risk,
} from '../operations/types.js';
import { MAX_OPERATIONS_PER_CONNECTION } from '../limits.js';
import { riskFromMethod } from '../operations/risk.js';

/** At most this many operations per description; the rest are skipped as `LIMIT`. */
export const DEFAULT_MAX_OPERATIONS = MAX_OPERATIONS_PER_CONNECTION;
/** Objects keep at most this many properties: required ones first, then document order. */
export const DEFAULT_MAX_PROPERTIES = 64;
/** Levels of objects and arrays that may list children, the input schema itself being level 1. */
export const DEFAULT_MAX_DEPTH = 5;
/** Enums keep their first values up to this count. */
export const DEFAULT_MAX_ENUM_VALUES = 200;
/** Operation descriptions (and property descriptions) are one line of at most this many characters. */
export const DEFAULT_MAX_DESCRIPTION_LENGTH = 400;
/**
 * Upper bound on the nodes of one input schema. Shared and self-referencing schemas can multiply
 * (64 properties over 5 levels is 10^9 nodes); past this size the largest sub-objects become
 * free-form, so what a model receives stays readable and the work stays bounded.
 */
export const DEFAULT_MAX_SCHEMA_NODES = 2_000;
/**
 * Upper bound on the nodes of all input schemas of one description together. Operations that
 * share one large schema (through `$ref` or YAML aliases) are converted once but stored, declared
 * and compared once per operation: 300 × 2,000 nodes is tens of megabytes of JSON. The largest
 * descriptions we know (Kubernetes, Stripe) stay under 9,000; past the budget, the operations
 * that come later in the document get free-form parts, as with `maxSchemaNodes`.
 */
export const DEFAULT_MAX_TOTAL_SCHEMA_NODES = 20_000;
/** Nested `$ref`/`allOf`/`oneOf`/`anyOf` hops within one schema level before giving up with `{}`. */
export const DEFAULT_MAX_COMPOSITION_DEPTH = 32;
/** Diagnostics kept per conversion; one more line says how many were left out. */
export const DEFAULT_MAX_DIAGNOSTICS = 200;

/** Property names of input schemas, the rule of the major model APIs. */
export const PROPERTY_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_NAME_LENGTH = 64;

/** Header parameters that the transport or the credentials set; never input fields. */
export const EXCLUDED_HEADER_PARAMETERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'accept',
  'user-agent',
]);

export type DescriptionVersion = 'openapi-3.0' | 'openapi-3.1' | 'swagger-2.0';

/**
 * Why an operation was not converted:
 * - `LIMIT`: it came after the first `maxOperations` operations.
 * - `DEPRECATED`: it is marked `deprecated: true`.
 * - `UNSUPPORTED_BODY`: its only bodies are neither JSON nor a URL-encoded form (multipart,
 *   octet-stream, XML, Swagger `type: file`).
 * - `INVALID`: the operation is not an object.
 */
export type SkipReason = 'LIMIT' | 'DEPRECATED' | 'UNSUPPORTED_BODY' | 'INVALID';

export interface SkippedOperation {
  /** The name the operation would have had; skipped operations keep their name reserved. */
  name: string;
  method: HttpMethod;
  path: string;
  reason: SkipReason;
}

export interface ConvertedOperation {
  /** `operationId`, or method and path (`get /pets/{id}` → `get_pets_id`); unique in the description. */
  name: string;
  /** The summary as one line, or `null`. */
  title: string | null;
  /** Summary and description as one plain line of at most 400 characters; never empty. */
  description: string;
  /** JSON Schema, `type: object`, `additionalProperties: false`. */
  inputSchema: JsonObject;
  risk: Risk;
  /** OpenAPI has no tool annotations; the risk comes from the method. */
  annotations: JsonObject | null;
  binding: OpenApiBinding;
  /**
   * Why the base address is a placeholder that cannot be called (Azure's `x-ms-parameterized-host`,
   * a reserved name such as `*.local`); absent when it is not one, or with a `baseUrl` override.
   * Discovery holds such operations until an admin sets `baseUrl`.
   */
  basePlaceholder?: string;
}

export interface ConversionResult {
  version: DescriptionVersion;
  /** In document order. */
  operations: ConvertedOperation[];
  /** In document order, each with its reason. */
  skipped: SkippedOperation[];
  /** What was dropped or guessed, for people reading the discovery run; never fatal. */
  diagnostics: string[];
  /** Why no operation came out, when none did (for `EMPTY_TOOL_LIST`); otherwise `null`. */
  emptyReason: string | null;
}

export interface ConvertOptions {
  maxOperations?: number;
  maxProperties?: number;
  maxDepth?: number;
  maxEnumValues?: number;
  maxDescriptionLength?: number;
  maxSchemaNodes?: number;
  maxTotalSchemaNodes?: number;
  maxCompositionDepth?: number;
  maxDiagnostics?: number;
}

// ---------------------------------------------------------------------------------------------
// Small helpers over untrusted data

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads only own properties: `obj.constructor` on a plain object is a function, not the document's. */
function own(obj: Obj, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function ownString(obj: Obj, key: string): string | undefined {
  const value = own(obj, key);
  return typeof value === 'string' ? value : undefined;
}

/** A map keyed by names from the document: no prototype, so `__proto__` is just a key. */
function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A web page (documentation, a login page) where a description was expected. */
const HTML_PAGE = /^\s*<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/**
 * Which description this is. Throws `DESCRIPTION_INVALID`, saying what was found, for anything
 * that is not an object with `openapi: 3.0.x`, `openapi: 3.1.x` or `swagger: "2.0"`.
 */
export function detectVersion(document: unknown): DescriptionVersion {
  if (typeof document === 'string' && HTML_PAGE.test(document)) {
    throw new AppError(
      'DESCRIPTION_INVALID',
      'The address gave an HTML page, not an OpenAPI description: point descriptionUrl at the JSON or YAML file itself (often …/openapi.json or …/swagger.json, not the documentation page).',
    );
  }
  if (!isObj(document)) {
    throw new AppError(
      'DESCRIPTION_INVALID',
      `The description must be a JSON or YAML object with an "openapi" or "swagger" field; found ${describeKind(document)}.`,
    );
  }
  const openapi = own(document, 'openapi');
  const swagger = own(document, 'swagger');
  if (typeof openapi === 'string') {
    if (/^3\.0\.\d+$/.test(openapi)) return 'openapi-3.0';
    if (/^3\.1\.\d+$/.test(openapi)) return 'openapi-3.1';
  }
  // Unquoted `swagger: 2.0` in YAML is the number 2; it still means Swagger 2.0.
  if (swagger === '2.0' || swagger === 2) return 'swagger-2.0';
  let found: string;
  if (openapi !== undefined) found = `"openapi": ${JSON.stringify(openapi) ?? describeKind(openapi)}`;
  else if (swagger !== undefined) found = `"swagger": ${JSON.stringify(swagger) ?? describeKind(swagger)}`;
  else {
    const keys = Object.keys(document).slice(0, 8);
    found =
      keys.length > 0
        ? `no "openapi" or "swagger" field (top-level keys: ${keys.join(', ')})`
        : 'an empty object';
  }
  throw new AppError(
    'DESCRIPTION_INVALID',
    `Only OpenAPI 3.0.x, OpenAPI 3.1.x and Swagger "2.0" descriptions are supported; found ${found}.`,
  );
}

// ---------------------------------------------------------------------------------------------
// Text

/** Anything `toOneLine` would change: tags, entities, control characters, whitespace other than single spaces. */
const NEEDS_CLEANING =
  // eslint-disable-next-line no-control-regex
  /[<&\u0000-\u001f\u007f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}|^ | $/;
const BLOCK_TAG = /^<\/?(?:br|p|div|li|ul|ol|tr|td|th|table|h[1-6]|hr|pre|blockquote|dd|dt|dl)\b/i;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** One plain line: HTML tags, line breaks and control characters removed, cut to `max` characters. */
export function toOneLine(text: string, max: number = DEFAULT_MAX_DESCRIPTION_LENGTH): string {
  // Most descriptions are plain already; skip the three rewrites for them.
  if (!NEEDS_CLEANING.test(text)) return truncate(text, max);
  let s = text.replace(/<\/?[A-Za-z][^<>]*>/g, (tag) => (BLOCK_TAG.test(tag) ? ' ' : ''));
  s = s.replace(/&(#\d{1,6}|#x[0-9a-f]{1,6}|[a-z]{2,5});/gi, (match, entity: string) => {
    if (entity.startsWith('#')) {
      const code =
        entity[1] === 'x' || entity[1] === 'X'
          ? parseInt(entity.slice(2), 16)
          : parseInt(entity.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return ENTITIES[entity.toLowerCase()] ?? match;
  });
  // eslint-disable-next-line no-control-regex
  s = s.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
  return truncate(s, max);
}

function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = s.slice(0, max - 1);
  // Never leave half of a surrogate pair.
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/** Makes a name fit `PROPERTY_NAME_PATTERN`; names that already fit are kept as they are. */
export function fitName(name: string): string {
  if (PROPERTY_NAME_PATTERN.test(name)) return name;
  const fitted = name
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_NAME_LENGTH);
  return fitted.length > 0 ? fitted : 'field';
}

/** `base`, or `base_2`, `base_3`… whichever is free, kept within 64 characters. */
function numbered(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = base.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * Schema names for wire names, in priority order: names that already fit keep themselves, then
 * the others are made to fit and numbered on a clash.
 */
function assignNames(wireNames: readonly string[]): string[] {
  const taken = new Set<string>();
  const result = new Array<string>(wireNames.length);
  wireNames.forEach((wire, i) => {
    if (PROPERTY_NAME_PATTERN.test(wire) && !taken.has(wire)) {
      taken.add(wire);
      result[i] = wire;
    }
  });
  wireNames.forEach((wire, i) => {
    if (result[i] !== undefined) return;
    const name = numbered(fitName(wire), taken);
    taken.add(name);
    result[i] = name;
  });
  return result;
}

function nameFromMethodAndPath(method: string, path: string): string {
  const tail = path
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return tail.length > 0 ? `${method}_${tail}` : method;
}

// ---------------------------------------------------------------------------------------------
// Schemas

const JSON_TYPES: ReadonlySet<string> = new Set([
  'string',
  'number',
  'integer',
  'boolean',
  'array',
  'object',
  'null',
]);

/** Keywords copied when their value is a non-negative integer. */
const COUNT_KEYWORDS = [
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;

/**
 * A schema with `$ref`, `allOf`, `oneOf` and `anyOf` flattened into one level. Children stay raw
 * (unresolved) so that each is converted at its own level. Collections are `null` until a member
 * fills them: most schemas are leaves, and these are built once per node of large documents.
 */
interface View {
  /** `null` when no member constrains the type. */
  types: string[] | null;
  properties: Map<string, unknown[]> | null;
  required: Set<string> | null;
  items: unknown[] | null;
  additional: unknown[] | null;
  /** `additionalProperties: false`: an object with no listed properties is then the empty object. */
  closed: boolean;
  readOnly: boolean;
  /** Where keywords come from; the first that has one wins: the node, its reference, its members. */
  sources: Obj[];
}

function emptyView(): View {
  return {
    types: null,
    properties: null,
    required: null,
    items: null,
    additional: null,
    closed: false,
    readOnly: false,
    sources: [],
  };
}

/** The converted form of one schema, with what its parent needs to know about it. */
interface Converted {
  schema: JsonObject;
  /** Nodes in `schema`, counting shared subtrees once per place. */
  size: number;
  /** Renames inside, when any name had to be made to fit. */
  names: NestedNames | undefined;
  /** Whether it lists children, so it can be cut to a free-form object or array. */
  container: boolean;
}

/** A child slot of an emitted object, kept so that the node budget can cut it afterwards. */
interface Slot {
  converted: Converted;
  /** The property name, or `items`/`additionalProperties` when `property` is false. */
  key: string;
  property: boolean;
}

interface Limits {
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

const MISSING = Symbol('missing');

class Converter {
  readonly diagnostics: string[] = [];
  private readonly seenDiagnostics = new Set<string>();
  private omittedDiagnostics = 0;
  private readonly refs = new Map<string, unknown>();
  private readonly views = new Map<object, View>();
  private readonly converted = new Map<object, (Converted | undefined)[]>();
  private readonly lines = new Map<string, string>();
  /** Counts cut cycles and depth limits; a view whose expansion moved it is not memoised. */
  private cuts = 0;

  constructor(
    readonly root: Obj,
    readonly limits: Limits,
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
    const target = this.lookup(ref);
    this.refs.set(ref, target);
    return target;
  }

  private lookup(ref: string): unknown {
    if (!ref.startsWith('#')) {
      this.diag(`$ref "${ref}" is not local (only "#/..." is followed); it was replaced by an empty schema`);
      return MISSING;
    }
    let pointer: string;
    try {
      pointer = decodeURIComponent(ref.slice(1));
    } catch {
      this.diag(`$ref "${ref}" is not a valid URI fragment; it was replaced by an empty schema`);
      return MISSING;
    }
    if (pointer === '') return this.root;
    if (!pointer.startsWith('/')) {
      this.diag(`$ref "${ref}" is not a JSON pointer; it was replaced by an empty schema`);
      return MISSING;
    }
    let node: unknown = this.root;
    for (const raw of pointer.slice(1).split('/')) {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) {
        node = node[Number(token)];
      } else if (isObj(node) && Object.hasOwn(node, token)) {
        node = node[token];
      } else {
        this.diag(`$ref "${ref}" points to nothing; it was replaced by an empty schema`);
        return MISSING;
      }
    }
    return node;
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
    const { view, members } = this.ownView(raw);
    if (members !== null) {
      active.add(raw);
      for (const member of members) {
        if (isObj(member)) mergeInto(view, this.expand(member, active, hops + 1));
      }
      active.delete(raw);
    }
    if (this.cuts === cutsBefore) this.views.set(raw, view);
    return view;
  }

  /**
   * The keywords written on this node itself, in one pass over its own keys (this runs once per
   * schema node of the document), and the schemas it merges in: its `$ref` target, its `allOf`
   * members and the first `oneOf`/`anyOf` options, in that order.
   */
  private ownView(raw: Obj): { view: View; members: unknown[] | null } {
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
    let members: unknown[] | null = null;
    if (typeof ref === 'string') {
      const target = this.resolve(ref);
      if (target !== MISSING) members = [target];
    }
    if (Array.isArray(allOf)) (members ??= []).push(...allOf);
    if (Array.isArray(oneOf) && oneOf.length > 0) (members ??= []).push(oneOf[0]);
    if (Array.isArray(anyOf) && anyOf.length > 0) (members ??= []).push(anyOf[0]);
    return { view, members };
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
    const result = this.emit(this.view(raw), level);
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
    const view = emptyView();
    for (const raw of raws) mergeInto(view, this.view(raw));
    return this.emit(view, level);
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
    if (types !== null) schema.type = types.length === 1 ? (types[0] as string) : [...types];
    this.copyKeywords(view.sources, schema);
    const isObject = types === null || types.includes('object');
    const isArray = types === null || types.includes('array');
    const hasChildren = (isObject && (listsProperties || additional !== null)) || (isArray && items !== null);
    if (!hasChildren) return leaf(schema);
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
    }
    if (isArray && items !== null) {
      const child = this.convertAll(items, level + 1);
      schema.items = child.schema;
      size += child.size;
      if (child.names !== undefined) names = { ...names, items: child.names };
      slots.push({ converted: child, key: 'items', property: false });
    }
    if (size > this.limits.maxSchemaNodes) {
      size = this.fitSize(size, slots, schema, names);
      if (names !== undefined && Object.keys(names).length === 0) names = undefined;
    }
    return { schema, size, names, container: true };
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

  /**
   * A numeric bound, or `undefined`. A bound beyond ±2^53 (OpenAI's `seed`:
   * `maximum: 9223372036854775807`) was already rounded when the document was parsed, so it may sit
   * on the wrong side of the declared limit: it is dropped, never rounded.
   */
  private bound(value: unknown, keyword: string): number | undefined {
    const n = finite(value);
    if (n === undefined || Math.abs(n) <= Number.MAX_SAFE_INTEGER) return n;
    this.diag(`a ${keyword} beyond ±2^53 cannot be represented exactly; it was dropped`);
    return undefined;
  }

  private copyKeywords(sources: readonly Obj[], schema: JsonObject): void {
    const kw = gatherKeywords(sources);
    if (typeof kw.description === 'string') {
      const line = this.line(kw.description);
      if (line.length > 0) schema.description = line;
    }
    if (typeof kw.format === 'string') schema.format = kw.format;
    if (Array.isArray(kw.enum)) {
      const values = this.enumValues(kw.enum);
      if (values.length > 0) schema.enum = values;
    }
    if (kw.const !== undefined) {
      const json = toJson(kw.const);
      if (json !== undefined) schema.const = json;
    }
    if (kw.default !== undefined) {
      const json = toJson(kw.default);
      if (json !== undefined) schema.default = json;
    }
    const minimum = this.bound(kw.minimum, 'minimum');
    const maximum = this.bound(kw.maximum, 'maximum');
    // OpenAPI 3.0 and Swagger 2 write exclusive bounds as booleans beside the bound.
    if (kw.exclusiveMinimum === true && minimum !== undefined) schema.exclusiveMinimum = minimum;
    else {
      if (minimum !== undefined) schema.minimum = minimum;
      const value = this.bound(kw.exclusiveMinimum, 'exclusiveMinimum');
      if (value !== undefined) schema.exclusiveMinimum = value;
    }
    if (kw.exclusiveMaximum === true && maximum !== undefined) schema.exclusiveMaximum = maximum;
    else {
      if (maximum !== undefined) schema.maximum = maximum;
      const value = this.bound(kw.exclusiveMaximum, 'exclusiveMaximum');
      if (value !== undefined) schema.exclusiveMaximum = value;
    }
    const multipleOf = finite(kw.multipleOf);
    if (multipleOf !== undefined && multipleOf > 0) schema.multipleOf = multipleOf;
    for (const key of COUNT_KEYWORDS) {
      const value = kw[key];
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) schema[key] = value;
    }
    if (kw.uniqueItems === true) schema.uniqueItems = true;
    if (typeof kw.pattern === 'string') {
      if (isValidPattern(kw.pattern)) schema.pattern = kw.pattern;
      else this.diag(`pattern ${JSON.stringify(kw.pattern)} is not a valid regular expression; left out`);
    }
  }

  /** The first `maxEnumValues` distinct JSON values. */
  private enumValues(enumValues: readonly unknown[]): JsonValue[] {
    const values: JsonValue[] = [];
    const seen = new Set<unknown>();
    for (const value of enumValues) {
      const json = toJson(value);
      if (json === undefined) continue;
      const id = typeof json === 'object' && json !== null ? JSON.stringify(json) : json;
      if (seen.has(id)) continue;
      seen.add(id);
      values.push(json);
      if (values.length >= this.limits.maxEnumValues) break;
    }
    if (enumValues.length > this.limits.maxEnumValues) {
      this.diag(`an enum with ${enumValues.length} values kept its first ${this.limits.maxEnumValues}`);
    }
    return values;
  }
}

/** Keywords copied from a schema to its converted form. */
const KEYWORDS = [
  'description',
  'format',
  'enum',
  'const',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'uniqueItems',
  ...COUNT_KEYWORDS,
] as const;
const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);

/** The copied keywords of the sources, the first source that has one winning, in one pass over their keys. */
function gatherKeywords(sources: readonly Obj[]): Partial<Record<(typeof KEYWORDS)[number], unknown>> {
  const found: Partial<Record<string, unknown>> = {};
  for (const source of sources) {
    for (const key of Object.keys(source)) {
      if (KEYWORD_SET.has(key) && found[key] === undefined) found[key] = source[key];
    }
  }
  return found;
}

interface SelectedProperty {
  wire: string;
  schemas: unknown[];
  required: boolean;
}

function leaf(schema: JsonObject): Converted {
  return { schema, size: 1, names: undefined, container: false };
}

/** The free-form form of an object or array: its type (and description) without children. */
function cutSchema(schema: JsonObject): JsonObject {
  const cut: JsonObject = {};
  if (schema.type !== undefined) cut.type = schema.type;
  if (schema.description !== undefined) cut.description = schema.description;
  return cut;
}

/** Merges `from` (which may be memoised and is not changed) into `into` (a view being built). */
function mergeInto(into: View, from: View): void {
  if (from.types !== null) {
    if (into.types === null) into.types = [...from.types];
    else {
      const other = from.types;
      const both = into.types.filter(
        (t) => other.includes(t) || (t === 'number' && other.includes('integer')),
      );
      // Disagreeing types cannot both hold; leave the type free rather than refuse every value.
      into.types = both.length > 0 ? both : null;
    }
  }
  if (from.properties !== null) {
    into.properties ??= new Map();
    for (const [name, schemas] of from.properties) {
      const existing = into.properties.get(name);
      if (existing === undefined) into.properties.set(name, [...schemas]);
      else for (const s of schemas) if (!existing.includes(s)) existing.push(s);
    }
  }
  if (from.required !== null) {
    into.required ??= new Set();
    for (const name of from.required) into.required.add(name);
  }
  if (from.items !== null) {
    into.items ??= [];
    for (const s of from.items) if (!into.items.includes(s)) into.items.push(s);
  }
  if (from.additional !== null) {
    into.additional ??= [];
    for (const s of from.additional) if (!into.additional.includes(s)) into.additional.push(s);
  }
  into.closed ||= from.closed;
  into.readOnly ||= from.readOnly;
  for (const source of from.sources) into.sources.push(source);
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function isValidPattern(pattern: string): boolean {
  try {
    // Validators of JSON Schema compile patterns as Unicode regular expressions.
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

const MAX_JSON_VALUE_NODES = 1_000;
const MAX_JSON_VALUE_DEPTH = 16;

/** A bounded copy of an enum, const or default value as plain JSON; `undefined` when it is not JSON. */
function toJson(value: unknown): JsonValue | undefined {
  let budget = MAX_JSON_VALUE_NODES;
  const copy = (v: unknown, depth: number): JsonValue | undefined => {
    if (--budget < 0 || depth > MAX_JSON_VALUE_DEPTH) return undefined;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
    if (Array.isArray(v)) {
      const out: JsonValue[] = [];
      for (const item of v) {
        const c = copy(item, depth + 1);
        if (c === undefined) return undefined;
        out.push(c);
      }
      return out;
    }
    if (isObj(v)) {
      const out = dict<JsonValue>();
      for (const key of Object.keys(v)) {
        const c = copy(v[key], depth + 1);
        if (c === undefined) return undefined;
        out[key] = c;
      }
      return out;
    }
    return undefined;
  };
  return copy(value, 0);
}

// ---------------------------------------------------------------------------------------------
// Base address

function trimSlash(url: URL): string {
  const text = `${url.origin}${url.pathname}${url.search}`;
  return text.endsWith('/') ? text.slice(0, -1) : text;
}

/** Validates the `baseUrl` override: absolute `https://`, no credentials, no fragment. */
export function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new AppError(
      'BASE_URL_INVALID',
      `baseUrl must be an absolute https:// address; got ${JSON.stringify(baseUrl)}.`,
    );
  }
  if (url.protocol !== 'https:') {
    throw new AppError(
      'BASE_URL_INVALID',
      `baseUrl must be an https:// address; got ${JSON.stringify(baseUrl)}.`,
    );
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') {
    throw new AppError('BASE_URL_INVALID', 'baseUrl must not contain credentials or a fragment.');
  }
  return trimSlash(url);
}

function httpUrl(text: string, against: string | null): URL | null {
  try {
    const url = against === null ? new URL(text) : new URL(text, against);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Operations

const METHODS: Record<string, HttpMethod> = {
  get: 'GET',
  put: 'PUT',
  post: 'POST',
  delete: 'DELETE',
  patch: 'PATCH',
};
const PLACEMENTS: ReadonlySet<string> = new Set(['path', 'query', 'header', 'cookie', 'body', 'formData']);
const LOCATION_ORDER: Record<FieldLocation, number> = { path: 0, query: 1, header: 2, body: 3 };
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** One candidate top-level field before names are assigned. */
interface Field {
  wire: string;
  in: FieldLocation;
  required: boolean;
  style?: FieldBinding['style'];
  explode?: boolean;
  /** Produces the schema; called only for fields that are kept. */
  convert: () => Converted;
}

type BodyChoice =
  { kind: 'none' } | { kind: 'unsupported'; found: string } | { kind: 'json' | 'form'; contentType: string };

function mediaType(value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase();
}

function isJsonMedia(type: string): boolean {
  return (
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'text/json' ||
    type === '*/*' ||
    type === 'application/*'
  );
}

/** JSON wins when several types are offered; a form only when no JSON type is. */
function chooseBody(types: readonly string[]): BodyChoice {
  if (types.length === 0) return { kind: 'none' };
  const media = types.map(mediaType);
  const exact = media.indexOf('application/json');
  const json = exact >= 0 ? exact : media.findIndex(isJsonMedia);
  if (json >= 0) {
    const type = media[json] as string;
    return { kind: 'json', contentType: type.includes('*') ? 'application/json' : type };
  }
  if (media.includes('application/x-www-form-urlencoded')) {
    return { kind: 'form', contentType: 'application/x-www-form-urlencoded' };
  }
  return { kind: 'unsupported', found: media.join(', ') };
}

/** The OpenAPI 3 query/form styles the request builder knows. */
const QUERY_STYLES: ReadonlySet<string> = new Set(['form', 'spaceDelimited', 'pipeDelimited', 'deepObject']);

/** Style and explode for a query parameter or form property, left out when they are the default. */
function styleOf(style: unknown, explode: unknown): Pick<Field, 'style' | 'explode'> {
  const s =
    typeof style === 'string' && QUERY_STYLES.has(style) ? (style as NonNullable<Field['style']>) : 'form';
  const e = typeof explode === 'boolean' ? explode : s === 'form';
  if (s === 'form' && e) return {};
  return { style: s, explode: e };
}

/** Swagger 2 `collectionFormat` of an array parameter as an OpenAPI 3 style; csv is its default. */
function collectionStyle(param: Obj, diag: (m: string) => void): Pick<Field, 'style' | 'explode'> {
  if (own(param, 'type') !== 'array') return {};
  const format = own(param, 'collectionFormat') ?? 'csv';
  switch (format) {
    case 'multi':
      return {};
    case 'ssv':
      return { style: 'spaceDelimited', explode: false };
    case 'pipes':
      return { style: 'pipeDelimited', explode: false };
    case 'csv':
      return { style: 'form', explode: false };
    default:
      diag(`collectionFormat ${JSON.stringify(format)} is not supported; values are sent comma-separated`);
      return { style: 'form', explode: false };
  }
}

interface OperationContext {
  method: HttpMethod;
  path: string;
  label: string;
  op: Obj;
  pathItem: Obj;
}

class OperationBuilder {
  constructor(
    private readonly c: Converter,
    private readonly version: DescriptionVersion,
  ) {}

  /** Parameters from the path item and the operation; operation-level ones override by name and place. */
  parameters(ctx: OperationContext): Obj[] {
    const byKey = new Map<string, Obj>();
    for (const source of [own(ctx.pathItem, 'parameters'), own(ctx.op, 'parameters')]) {
      if (source === undefined) continue;
      if (!Array.isArray(source)) {
        this.c.diag(`${ctx.label}: "parameters" is not an array; ignored`);
        continue;
      }
      for (const entry of source) {
        const param = this.c.deref(entry, ctx.label);
        if (param === undefined) continue;
        const name = ownString(param, 'name');
        const place = ownString(param, 'in');
        if (name === undefined || place === undefined || !PLACEMENTS.has(place)) {
          this.c.diag(`${ctx.label}: a parameter without a valid "name" and "in" was ignored`);
          continue;
        }
        // Header names are case-insensitive; the rest are not.
        const key = `${place}\u0000${place === 'header' ? name.toLowerCase() : name}`;
        byKey.delete(key);
        byKey.set(key, param);
      }
    }
    return [...byKey.values()];
  }

  /** The fields, body encoding and skip reason of one operation. */
  build(
    ctx: OperationContext,
  ):
    | { skip: SkipReason }
    | { fields: Field[]; bodyEncoding: 'json' | 'form' | null; contentType?: string; wholeBody: boolean } {
    const fields: Field[] = [];
    const params = this.parameters(ctx);
    const bodyParams: Obj[] = [];
    const formParams: Obj[] = [];
    for (const param of params) {
      const name = ownString(param, 'name') as string;
      const place = ownString(param, 'in') as string;
      if (place === 'cookie') continue;
      if (place === 'body') {
        bodyParams.push(param);
        continue;
      }
      if (place === 'formData') {
        formParams.push(param);
        continue;
      }
      if (place === 'header') {
        if (EXCLUDED_HEADER_PARAMETERS.has(name.toLowerCase())) continue;
        if (!HEADER_NAME.test(name)) {
          this.c.diag(
            `${ctx.label}: header parameter ${JSON.stringify(name)} is not a valid header name; left out`,
          );
          continue;
        }
      }
      fields.push(this.parameterField(ctx, param, name, place as FieldLocation));
    }
    this.reconcilePath(ctx, fields);

    if (this.version === 'swagger-2.0') {
      const consumes = own(ctx.op, 'consumes') ?? own(this.c.root, 'consumes');
      const types = Array.isArray(consumes) ? consumes.filter((t): t is string => typeof t === 'string') : [];
      if (bodyParams.length > 0) {
        if (formParams.length > 0)
          this.c.diag(`${ctx.label}: both "body" and "formData" parameters; formData ignored`);
        const choice =
          types.length === 0
            ? ({ kind: 'json', contentType: 'application/json' } as const)
            : chooseBody(types);
        if (choice.kind === 'unsupported' || choice.kind === 'none') {
          return this.unsupported(ctx, types.join(', '));
        }
        const param = bodyParams[0] as Obj;
        return this.withBody(
          ctx.label,
          fields,
          own(param, 'schema'),
          own(param, 'required') === true,
          choice.kind,
          choice.contentType,
        );
      }
      if (formParams.length > 0) {
        const media = types.map(mediaType);
        // formData is a form by definition, whatever else `consumes` lists; multipart alone is not sent.
        const form = media.length === 0 || media.includes('application/x-www-form-urlencoded');
        if (formParams.some((p) => own(p, 'type') === 'file')) return this.unsupported(ctx, 'a file upload');
        if (!form) return this.unsupported(ctx, `form data as ${types.join(', ')}`);
        for (const param of formParams) {
          const name = ownString(param, 'name') as string;
          fields.push({
            wire: name,
            in: 'body',
            required: own(param, 'required') === true,
            ...collectionStyle(param, (m) => this.c.diag(`${ctx.label}: ${m}`)),
            convert: () => this.c.convert(param, 2),
          });
        }
        return { fields, bodyEncoding: 'form', wholeBody: false };
      }
      return { fields, bodyEncoding: null, wholeBody: false };
    }

    const requestBody = own(ctx.op, 'requestBody');
    if (requestBody === undefined) return { fields, bodyEncoding: null, wholeBody: false };
    const body = this.c.deref(requestBody, ctx.label);
    const content = body === undefined ? undefined : own(body, 'content');
    if (body === undefined || !isObj(content)) {
      this.c.diag(`${ctx.label}: requestBody has no "content"; treated as no body`);
      return { fields, bodyEncoding: null, wholeBody: false };
    }
    const mediaTypes = Object.keys(content);
    const choice = chooseBody(mediaTypes);
    if (choice.kind === 'none') return { fields, bodyEncoding: null, wholeBody: false };
    if (choice.kind === 'unsupported') return this.unsupported(ctx, choice.found);
    const key =
      mediaTypes.find((t) => mediaType(t) === choice.contentType) ??
      mediaTypes.find((t) => isJsonMedia(mediaType(t)));
    const media = key === undefined ? undefined : own(content, key);
    const schema = isObj(media) ? own(media, 'schema') : undefined;
    const encoding = isObj(media) ? own(media, 'encoding') : undefined;
    return this.withBody(
      ctx.label,
      fields,
      schema,
      own(body, 'required') === true,
      choice.kind,
      choice.contentType,
      choice.kind === 'form' && isObj(encoding) ? encoding : undefined,
    );
  }

  private unsupported(ctx: OperationContext, found: string): { skip: SkipReason } {
    this.c.diag(`${ctx.label}: skipped, its body is neither JSON nor a URL-encoded form (${found})`);
    return { skip: 'UNSUPPORTED_BODY' };
  }

  private parameterField(ctx: OperationContext, param: Obj, name: string, place: FieldLocation): Field {
    const required = place === 'path' || own(param, 'required') === true;
    let style: Pick<Field, 'style' | 'explode'> = {};
    let raw: unknown = param;
    if (this.version !== 'swagger-2.0') {
      raw = own(param, 'schema');
      const content = own(param, 'content');
      if (raw === undefined && isObj(content)) {
        const first = Object.keys(content)[0];
        const media = first === undefined ? undefined : own(content, first);
        raw = isObj(media) ? own(media, 'schema') : undefined;
      }
      if (place === 'query') style = styleOf(own(param, 'style'), own(param, 'explode'));
    } else if (place === 'query') {
      style = collectionStyle(param, (m) => this.c.diag(`${ctx.label}: ${m}`));
    }
    const description = ownString(param, 'description');
    return {
      wire: name,
      in: place,
      required,
      ...style,
      convert: () => {
        const converted = this.c.convert(raw, 2);
        if (description === undefined || converted.schema.description !== undefined) return converted;
        const line = toOneLine(description, this.c.limits.maxDescriptionLength);
        if (line.length === 0) return converted;
        // Converted schemas are shared between operations: copy before adding to one.
        return { ...converted, schema: { ...converted.schema, description: line } };
      },
    };
  }

  /** Path parameters must match the template's `{placeholders}` one to one. */
  private reconcilePath(ctx: OperationContext, fields: Field[]): void {
    const placeholders = new Set<string>();
    for (const match of ctx.path.matchAll(/\{([^{}]+)\}/g)) placeholders.add(match[1] as string);
    for (let i = fields.length - 1; i >= 0; i--) {
      const field = fields[i] as Field;
      if (field.in === 'path' && !placeholders.has(field.wire)) {
        this.c.diag(
          `${ctx.label}: path parameter ${JSON.stringify(field.wire)} is not in the path; left out`,
        );
        fields.splice(i, 1);
      }
    }
    for (const name of placeholders) {
      if (fields.some((f) => f.in === 'path' && f.wire === name)) continue;
      this.c.diag(`${ctx.label}: {${name}} is in the path but not declared; added as a required string`);
      fields.push({ wire: name, in: 'path', required: true, convert: () => leaf({ type: 'string' }) });
    }
  }

  private withBody(
    label: string,
    fields: Field[],
    rawSchema: unknown,
    bodyRequired: boolean,
    kind: 'json' | 'form',
    contentType: string,
    encoding?: Obj,
  ): { fields: Field[]; bodyEncoding: 'json' | 'form' | null; contentType?: string; wholeBody: boolean } {
    const view = this.c.view(rawSchema);
    const isObject =
      ((view.properties !== null && view.properties.size > 0) || view.closed) &&
      (view.types === null || view.types.includes('object'));
    const extra = kind === 'json' && contentType !== 'application/json' ? { contentType } : {};
    if (!isObject) {
      fields.push({
        wire: 'body',
        in: 'body',
        required: bodyRequired,
        convert: () => this.c.convert(rawSchema, 2),
      });
      return { fields, bodyEncoding: kind, ...extra, wholeBody: true };
    }
    const properties = this.c.selectProperties(view, `${label}: the request body`);
    // A closed object without properties (Stripe's GET bodies) means there is nothing to send.
    if (properties.length === 0) return { fields, bodyEncoding: null, wholeBody: false };
    for (const property of properties) {
      const enc = encoding === undefined ? undefined : own(encoding, property.wire);
      fields.push({
        wire: property.wire,
        in: 'body',
        required: property.required,
        ...(isObj(enc) ? styleOf(own(enc, 'style'), own(enc, 'explode')) : {}),
        convert: () => this.c.convertAll(property.schemas, 2),
      });
    }
    return { fields, bodyEncoding: kind, ...extra, wholeBody: false };
  }
}

/** Builds the input schema and the field bindings from the candidate fields. */
function assemble(
  c: Converter,
  label: string,
  candidates: Field[],
  budget: number,
): { inputSchema: JsonObject; fields: FieldBinding[]; size: number } {
  // Required first, then document order; at most maxProperties.
  const ordered = candidates.filter((f) => f.required).concat(candidates.filter((f) => !f.required));
  if (ordered.length > c.limits.maxProperties) {
    c.diag(
      `${label}: ${ordered.length} input fields; the first ${c.limits.maxProperties} were kept (required ones first)`,
    );
  }
  const kept = ordered.slice(0, c.limits.maxProperties);
  // Parameters keep their names before body fields; path before query before header.
  const priority = kept
    .map((field, index) => ({ field, index }))
    .sort((a, b) => LOCATION_ORDER[a.field.in] - LOCATION_ORDER[b.field.in] || a.index - b.index);
  const assigned = assignNames(priority.map((p) => p.field.wire));
  const nameOf = new Map<Field, string>();
  priority.forEach((p, i) => nameOf.set(p.field, assigned[i] as string));

  const properties = dict<JsonValue>();
  const required: string[] = [];
  const bindings: FieldBinding[] = [];
  const slots: Slot[] = [];
  let size = 1;
  for (const field of kept) {
    const name = nameOf.get(field) as string;
    const converted = field.convert();
    properties[name] = converted.schema;
    if (field.required) required.push(name);
    const binding: FieldBinding = { name, in: field.in, wireName: field.wire };
    if (converted.names !== undefined) binding.nested = converted.names;
    if (field.required) binding.required = true;
    if (field.style !== undefined) binding.style = field.style;
    if (field.explode !== undefined) binding.explode = field.explode;
    bindings.push(binding);
    size += converted.size;
    slots.push({ converted, key: name, property: true });
  }
  const inputSchema: JsonObject = { type: 'object', properties };
  if (size > budget) {
    size = c.fitSize(size, slots, inputSchema, undefined, budget);
    // A field cut to free-form has no nested names left to map.
    for (const binding of bindings) {
      const slot = slots.find((s) => s.key === binding.name);
      if (slot !== undefined && properties[binding.name] !== slot.converted.schema) delete binding.nested;
    }
  }
  if (required.length > 0) inputSchema.required = required;
  inputSchema.additionalProperties = false;
  return { inputSchema, fields: bindings, size };
}

/**
 * Converts a parsed description into operations.
 *
 * @param document the parsed JSON/YAML description (see `loadDescription`).
 * @param descriptionUrl the address it was fetched from, if any: relative server URLs resolve
 *   against it, and it is the base address of last resort.
 * @param baseUrl the connection's override, which must be `https://`; it replaces every server.
 * The operations' schemas may share subtrees (each referenced schema is converted once per level):
 * treat the result as read-only, or serialise it before changing it.
 *
 * @throws AppError `DESCRIPTION_INVALID` (not a supported description, `paths` not an object),
 *   `BASE_URL_INVALID` (override not an absolute https address) or `BASE_URL_MISSING` (an
 *   operation has no base address from the override, its servers, `host` or the description's address).
 */
export function convertDescription(
  document: unknown,
  descriptionUrl: string | null,
  baseUrl: string | null,
  options: ConvertOptions = {},
): ConversionResult {
  const version = detectVersion(document);
  const root = document as Obj;
  const limits: Limits = {
    maxOperations: options.maxOperations ?? DEFAULT_MAX_OPERATIONS,
    maxProperties: options.maxProperties ?? DEFAULT_MAX_PROPERTIES,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    maxEnumValues: options.maxEnumValues ?? DEFAULT_MAX_ENUM_VALUES,
    maxDescriptionLength: options.maxDescriptionLength ?? DEFAULT_MAX_DESCRIPTION_LENGTH,
    maxSchemaNodes: options.maxSchemaNodes ?? DEFAULT_MAX_SCHEMA_NODES,
    maxTotalSchemaNodes: options.maxTotalSchemaNodes ?? DEFAULT_MAX_TOTAL_SCHEMA_NODES,
    maxCompositionDepth: options.maxCompositionDepth ?? DEFAULT_MAX_COMPOSITION_DEPTH,
    maxDiagnostics: options.maxDiagnostics ?? DEFAULT_MAX_DIAGNOSTICS,
  };
  const override = baseUrl === null ? null : normalizeBaseUrl(baseUrl);
  const paths = own(root, 'paths');
  if (paths !== undefined && !isObj(paths)) {
    throw new AppError(
      'DESCRIPTION_INVALID',
      `"paths" must be an object of path items; found ${describeKind(paths)}.`,
    );
  }
  const c = new Converter(root, limits);
  const builder = new OperationBuilder(c, version);
  const vendorPaths = own(root, 'x-ms-paths');
  if (isObj(vendorPaths) && Object.keys(vendorPaths).length > 0)
    c.diag(
      `x-ms-paths holds ${Object.keys(vendorPaths).length} path items; vendor extensions are not part of OpenAPI and were ignored`,
    );
  let pathItemsSeen = 0;
  let methodsSeen = 0;
  const rootBase = override ?? documentBase(c, root, version, descriptionUrl);
  if (override === null) {
    const why = uncallableBase(root, rootBase);
    if (why !== null)
      c.diag(
        `no callable base address: ${why}; an operator must set the connection's baseUrl to the API's https:// address`,
      );
  }

  const operations: ConvertedOperation[] = [];
  const skipped: SkippedOperation[] = [];
  const names = new Set<string>();
  let missingBase: string | null = null;
  let schemaNodesLeft = limits.maxTotalSchemaNodes;

  const pathItems: Obj = paths ?? {};
  for (const path of Object.keys(pathItems)) {
    const pathItem = c.deref(pathItems[path], `path ${JSON.stringify(path)}`);
    if (pathItem === undefined) {
      c.diag(`path ${JSON.stringify(path)} is not an object; ignored`);
      continue;
    }
    pathItemsSeen++;
    for (const key of Object.keys(pathItem)) {
      if (!Object.hasOwn(METHODS, key)) continue;
      methodsSeen++;
      const method = METHODS[key] as HttpMethod;
      const op = pathItem[key];
      const operationId = isObj(op) ? ownString(op, 'operationId')?.trim() : undefined;
      const name = numbered(
        operationId !== undefined && operationId !== '' ? operationId : nameFromMethodAndPath(key, path),
        names,
      );
      names.add(name);
      const label = `${method} ${path}`;
      if (!isObj(op)) {
        c.diag(`${label}: the operation is not an object; skipped`);
        skipped.push({ name, method, path, reason: 'INVALID' });
        continue;
      }
      if (own(op, 'deprecated') === true) {
        skipped.push({ name, method, path, reason: 'DEPRECATED' });
        continue;
      }
      if (operations.length >= limits.maxOperations) {
        skipped.push({ name, method, path, reason: 'LIMIT' });
        continue;
      }
      const ctx: OperationContext = { method, path, label, op, pathItem };
      const built = builder.build(ctx);
      if ('skip' in built) {
        skipped.push({ name, method, path, reason: built.skip });
        continue;
      }
      const ownBase =
        override !== null || version === 'swagger-2.0'
          ? null
          : (serverBase(c, own(op, 'servers'), descriptionUrl, label) ??
            serverBase(c, own(pathItem, 'servers'), descriptionUrl, label));
      const opBase = override ?? ownBase ?? rootBase;
      if (opBase === null) {
        missingBase ??= label;
        continue;
      }
      // Every operation keeps at least its top-level fields, whatever the budget left.
      const budget = Math.min(limits.maxSchemaNodes, Math.max(schemaNodesLeft, limits.maxProperties + 1));
      const { inputSchema, fields, size } = assemble(c, label, built.fields, budget);
      schemaNodesLeft -= size;
      const binding: OpenApiBinding = {
        method,
        path,
        baseUrl: opBase,
        bodyEncoding: built.bodyEncoding,
        wholeBody: built.wholeBody,
        fields,
      };
      if (built.contentType !== undefined) binding.contentType = built.contentType;
      const summary = ownString(op, 'summary');
      const title = summary === undefined ? '' : toOneLine(summary, limits.maxDescriptionLength);
      const converted: ConvertedOperation = {
        name,
        title: title === '' ? null : title,
        description: describeOperation(op, label, limits.maxDescriptionLength),
        inputSchema,
        risk: riskFromMethod(method),
        annotations: null,
        binding,
      };
      const placeholder = override === null ? placeholderBase(root, opBase, ownBase === null) : null;
      if (placeholder !== null) converted.basePlaceholder = placeholder;
      operations.push(converted);
    }
  }
  if (missingBase !== null) {
    throw new AppError(
      'BASE_URL_MISSING',
      `The description gives no base address for ${missingBase} (no servers, no host) and was not fetched from an address; set the connection's baseUrl to the API's https:// address.`,
    );
  }
  return {
    version,
    operations,
    skipped,
    diagnostics: c.finishDiagnostics(),
    emptyReason:
      operations.length > 0
        ? null
        : emptyReason(
            pathItemsSeen,
            methodsSeen,
            skipped,
            isObj(vendorPaths) ? Object.keys(vendorPaths).length : 0,
          ),
  };
}

/**
 * Why the description's own base address cannot be called, or `null`: plain `http` (calls need
 * `https`), or a placeholder host such as Azure's `x-ms-parameterized-host` with `host: azure.local`.
 */
function uncallableBase(root: Obj, base: string | null): string | null {
  if (base === null) return null;
  const placeholder = placeholderBase(root, base, true);
  if (placeholder !== null) return placeholder;
  if (/^https?:\/\/localhost(?:[:/]|$)/i.test(base)) return `${JSON.stringify(base)} is a placeholder host`;
  if (base.startsWith('http://'))
    return `the description offers only ${JSON.stringify(base)}, which is not https`;
  return null;
}

/**
 * Why an operation's base address is a placeholder, or `null`. The document's own base is one when
 * the host is parameterized (`x-ms-parameterized-host`); any base is one when its host is a name
 * reserved for examples, tests or the local network (`.example`, `.invalid`, `.test`, `.local`).
 * Plain `http` is left to the outbound policy, which allows it for listed hosts.
 */
function placeholderBase(root: Obj, base: string, fromDocument: boolean): string | null {
  if (fromDocument && isObj(own(root, 'x-ms-parameterized-host')))
    return `the host is parameterized (x-ms-parameterized-host) and ${JSON.stringify(base)} is a placeholder`;
  let host: string;
  try {
    host = new URL(base).hostname;
  } catch {
    return null;
  }
  if (/\.(local|example|invalid|test)$/i.test(host)) return `${JSON.stringify(base)} is a placeholder host`;
  return null;
}

/** One line saying why a description gave no operation. */
function emptyReason(
  pathItems: number,
  methods: number,
  skipped: readonly SkippedOperation[],
  vendorPaths: number,
): string {
  const vendor =
    vendorPaths > 0 ? ` (its ${vendorPaths} x-ms-paths items are a vendor extension and are not read)` : '';
  if (pathItems === 0) return `the description has no paths${vendor}`;
  if (methods === 0)
    return `its ${pathItems} path item${pathItems === 1 ? ' has' : 's have'} no operations (no get, put, post, patch or delete)${vendor}`;
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
  const parts = [...counts].map(([reason, n]) => `${n} ${reason.toLowerCase()}`);
  return `all ${methods} operations were skipped (${parts.join(', ')})${vendor}`;
}

function describeOperation(op: Obj, label: string, max: number): string {
  const summary = toOneLine(ownString(op, 'summary') ?? '', Number.MAX_SAFE_INTEGER);
  const description = toOneLine(ownString(op, 'description') ?? '', Number.MAX_SAFE_INTEGER);
  let text: string;
  if (summary === '' || description.startsWith(summary)) text = description;
  else if (description === '') text = summary;
  else text = `${summary}${/[.!?:;]$/.test(summary) ? '' : '.'} ${description}`;
  // Both parts are clean already; cleaning again would take a decoded `<c>` for a tag.
  return truncate(text === '' ? label : text, max);
}

function documentBase(
  c: Converter,
  root: Obj,
  version: DescriptionVersion,
  descriptionUrl: string | null,
): string | null {
  if (version !== 'swagger-2.0') {
    const fromServers = serverBase(c, own(root, 'servers'), descriptionUrl, 'servers');
    if (fromServers !== null) return fromServers;
    // Without servers, OpenAPI 3 says the server is "/", relative to where the description lives.
    const fallback = descriptionUrl === null ? null : httpUrl('/', descriptionUrl);
    return fallback === null ? null : trimSlash(fallback);
  }
  const described = descriptionUrl === null ? null : httpUrl(descriptionUrl, null);
  const hostValue = ownString(root, 'host');
  const host = hostValue ?? described?.host;
  if (host === undefined || host === '') return null;
  const schemes = own(root, 'schemes');
  const listed = Array.isArray(schemes) ? schemes.filter((s): s is string => typeof s === 'string') : [];
  // Without `schemes`, Swagger 2 uses the scheme the description was served with.
  const scheme = listed.includes('https')
    ? 'https'
    : listed.includes('http')
      ? 'http'
      : (described?.protocol.slice(0, -1) ?? 'https');
  const basePathValue = ownString(root, 'basePath') ?? '';
  const basePath = basePathValue.startsWith('/') ? basePathValue : `/${basePathValue}`;
  const url = httpUrl(`${scheme}://${host}${basePath}`, null);
  if (url === null) {
    c.diag(
      `host ${JSON.stringify(host)} with basePath ${JSON.stringify(basePathValue)} is not a valid address`,
    );
    return null;
  }
  return trimSlash(url);
}

/**
 * The base address among the URLs a `servers` list resolves to (in document order): the first
 * `https` one, else the first. One pure rule, so that whoever asks which origin an operation's
 * credential goes to gets the same answer as the call.
 */
export function chooseServer(urls: readonly string[]): string | null {
  return urls.find((u) => u.startsWith('https://')) ?? urls[0] ?? null;
}

/** The chosen server of a `servers` list (see `chooseServer`), each resolved with its variables' defaults. */
function serverBase(
  c: Converter,
  servers: unknown,
  descriptionUrl: string | null,
  where: string,
): string | null {
  if (!Array.isArray(servers) || servers.length === 0) return null;
  const urls: string[] = [];
  servers.forEach((server: unknown, i) => {
    const url = resolveServer(c, server, descriptionUrl, where, i);
    if (url !== null) urls.push(url);
  });
  return chooseServer(urls);
}

/** `servers[i].url` with its variables replaced by their defaults, resolved against the description's address. */
function resolveServer(
  c: Converter,
  server: unknown,
  descriptionUrl: string | null,
  where: string,
  i: number,
): string | null {
  const template = isObj(server) ? ownString(server, 'url') : undefined;
  if (server === undefined || !isObj(server) || template === undefined) {
    c.diag(`${where}: servers[${i}] has no "url"; ignored`);
    return null;
  }
  const variables = own(server, 'variables');
  const unresolved: string[] = [];
  const text = template.replace(/\{([^{}]*)\}/g, (_match, name: string) => {
    const variable = isObj(variables) ? own(variables, name) : undefined;
    const value = isObj(variable) ? own(variable, 'default') : undefined;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    unresolved.push(name);
    return '';
  });
  if (unresolved.length > 0) {
    c.diag(`${where}: server variable {${unresolved[0]}} has no default; servers[${i}] ignored`);
    return null;
  }
  const url = httpUrl(text, descriptionUrl);
  if (url === null) {
    const why =
      descriptionUrl === null && httpUrl(text, 'https://relative.invalid') !== null
        ? 'is relative and the description has no address'
        : 'is not an http(s) address';
    c.diag(`${where}: server URL ${JSON.stringify(template)} ${why}; ignored`);
    return null;
  }
  return trimSlash(url);
}
