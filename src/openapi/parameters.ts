/**
 * Parameters and bodies of one operation: path, query, header and body fields, their placement
 * and serialisation style, the body's media type, and the operation's assembled input schema. Pure.
 */
import type { FieldBinding, FieldLocation, HttpMethod, JsonObject, JsonValue } from '../operations/types.js';
import { type DescriptionVersion, EXCLUDED_HEADER_PARAMETERS, type SkipReason } from './model.js';
import { type Obj, dict, isObj, own, ownString } from './document.js';
import { assignNames, toOneLine } from './naming.js';
import { type Converted, type Converter, type Slot, leaf } from './schema.js';

// ---------------------------------------------------------------------------------------------
// Operations

export const METHODS: Record<string, HttpMethod> = {
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
  /** Produces the schema with a converter (the declared one, or the check's); only for kept fields. */
  convert: (c: Converter) => Converted;
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

export interface OperationContext {
  method: HttpMethod;
  path: string;
  label: string;
  op: Obj;
  pathItem: Obj;
}

/** One operation's fields and body encoding, or why it is skipped. */
type BuiltOperation =
  | { skip: SkipReason }
  | { fields: Field[]; bodyEncoding: 'json' | 'form' | null; contentType?: string; wholeBody: boolean };

export class OperationBuilder {
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
  build(ctx: OperationContext): BuiltOperation {
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
    return this.version === 'swagger-2.0'
      ? this.swaggerBody(ctx, fields, bodyParams, formParams)
      : this.requestBody(ctx, fields);
  }

  /** Swagger 2.0: a `body` parameter (JSON, or what `consumes` lists), or `formData` ones as a form. */
  private swaggerBody(
    ctx: OperationContext,
    fields: Field[],
    bodyParams: Obj[],
    formParams: Obj[],
  ): BuiltOperation {
    const consumes = own(ctx.op, 'consumes') ?? own(this.c.root, 'consumes');
    const types = Array.isArray(consumes) ? consumes.filter((t): t is string => typeof t === 'string') : [];
    if (bodyParams.length > 0) {
      if (formParams.length > 0)
        this.c.diag(`${ctx.label}: both "body" and "formData" parameters; formData ignored`);
      const choice =
        types.length === 0 ? ({ kind: 'json', contentType: 'application/json' } as const) : chooseBody(types);
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
          convert: (c) => c.convert(param, 2),
        });
      }
      return { fields, bodyEncoding: 'form', wholeBody: false };
    }
    return { fields, bodyEncoding: null, wholeBody: false };
  }

  /** OpenAPI 3.x: the `requestBody`'s preferred media type (JSON or a URL-encoded form). */
  private requestBody(ctx: OperationContext, fields: Field[]): BuiltOperation {
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
      convert: (c) => {
        const converted = c.convert(raw, 2);
        if (c.check || description === undefined || converted.schema.description !== undefined)
          return converted;
        const line = toOneLine(description, c.limits.maxDescriptionLength);
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
        convert: (c) => c.convert(rawSchema, 2),
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
        convert: (c) => c.convertAll(property.schemas, 2),
      });
    }
    return { fields, bodyEncoding: kind, ...extra, wholeBody: false };
  }
}

/** Builds the input schema and the field bindings from the candidate fields. */
export function assemble(
  c: Converter,
  label: string,
  candidates: Field[],
  budget: number,
  checker?: CheckBudget,
): { inputSchema: JsonObject; fields: FieldBinding[]; size: number; checkSchema?: JsonObject } {
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
    const converted = field.convert(c);
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
  const result = { inputSchema, fields: bindings, size };
  if (checker === undefined) return result;
  const checkSchema = checkSchemaOf(c, checker, kept, nameOf, slots, inputSchema);
  return checkSchema === null ? result : { ...result, checkSchema };
}

/** A check schema past this many characters is not kept: calls are checked against the declared one. */
export const MAX_CHECK_SCHEMA_CHARS = 128 * 1024; // 128 K characters
/**
 * The check schemas of one description together stay under this many characters (Stripe's come to
 * about 0.5 M); past it, later operations are checked against their declared schema.
 */
export const MAX_TOTAL_CHECK_SCHEMA_CHARS = 2 * 1024 * 1024; // 2 M characters

/** The check's converter and what is left of the description's check-schema budget. */
export interface CheckBudget {
  converter: Converter;
  charsLeft: number;
}

/**
 * The argument check's input schema (DESIGN.md rule 17): the declared fields under their declared
 * names; a field whose declared schema was narrowed (a union to its first option, a nullable enum
 * without `null`) is converted again by the check's converter, every other keeps its declared
 * schema, and so does a field the node budget cut to free-form. `null` when no field was narrowed,
 * or when the result is too large to keep.
 */
function checkSchemaOf(
  c: Converter,
  budget: CheckBudget,
  kept: readonly Field[],
  nameOf: ReadonlyMap<Field, string>,
  slots: readonly Slot[],
  declared: JsonObject,
): JsonObject | null {
  const declaredProperties = declared.properties as Record<string, JsonValue>;
  const properties = dict<JsonValue>();
  const slotOf = new Map(slots.map((s) => [s.key, s]));
  let narrowed = false;
  for (const field of kept) {
    const name = nameOf.get(field) as string;
    const slot = slotOf.get(name);
    const widen = slot?.converted.narrowed === true && declaredProperties[name] === slot.converted.schema;
    properties[name] = widen
      ? field.convert(budget.converter).schema
      : (declaredProperties[name] as JsonValue);
    narrowed ||= widen;
  }
  if (!narrowed) return null;
  const schema: JsonObject = { type: 'object', properties };
  if (declared.required !== undefined) schema.required = declared.required;
  schema.additionalProperties = false;
  const chars = JSON.stringify(schema).length;
  if (chars > MAX_CHECK_SCHEMA_CHARS) {
    c.diag(
      `a check schema over ${MAX_CHECK_SCHEMA_CHARS} characters was left out; those calls are checked against the declared schema`,
    );
    return null;
  }
  if (chars > budget.charsLeft) {
    c.diag(
      `the check schemas together were larger than ${MAX_TOTAL_CHECK_SCHEMA_CHARS} characters; later operations are checked against their declared schema`,
    );
    return null;
  }
  budget.charsLeft -= chars;
  return schema;
}
