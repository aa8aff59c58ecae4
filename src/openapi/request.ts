/**
 * An OpenAPI operation's binding and a model's arguments → the HTTP request, or a refusal.
 *
 * Pure. Only declared fields are sent, under their real wire names at every nesting level. A
 * refusal means no request may be made; its message is written for the model, naming what to fix.
 */
import type { FieldBinding, HttpMethod, NestedNames, OpenApiBinding } from '../operations/types.js';
import { FORBIDDEN_HEADER_CHARS } from '../limits.js';

export interface HttpRequest {
  method: HttpMethod;
  /** Absolute: the binding's base address, the path with its values, and the query string. */
  url: string;
  /** Header fields only; the caller adds credentials, `accept` and `content-type`. */
  headers: Record<string, string>;
  /** `null` when no body field was given. */
  body: string | null;
  /** The media type of `body`, or `null` without a body. */
  contentType: string | null;
}

export type BuildRequestResult = { ok: true; request: HttpRequest } | { ok: false; message: string };

/** Arguments nested deeper than this are refused rather than encoded. */
export const DEFAULT_MAX_ARGUMENT_DEPTH = 32;

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Refusal extends Error {}

function quoteList(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}

/**
 * Builds the request for one call.
 *
 * `args` is the model's argument object. Fields it does not declare are ignored; a path field that
 * is missing, `null` or empty, or a required field that is missing, refuses the call.
 */
export function buildRequest(binding: OpenApiBinding, args: unknown): BuildRequestResult {
  if (args !== undefined && args !== null && !isObj(args)) {
    return { ok: false, message: 'The arguments must be a JSON object with the fields of the input schema.' };
  }
  const given: Obj = args ?? {};
  const value = (field: FieldBinding): unknown =>
    Object.hasOwn(given, field.name) ? given[field.name] : undefined;

  const missing = binding.fields.filter((field) => {
    const v = value(field);
    if (field.in === 'path') return v === undefined || v === null || v === '';
    // `null` is a value only in a body; a query or header field with `null` is not sent.
    return field.required === true && (v === undefined || (v === null && field.in !== 'body'));
  });
  if (missing.length > 0) {
    const names = missing.map((f) => f.name);
    return {
      ok: false,
      message:
        `The call was not made: missing required argument${names.length > 1 ? 's' : ''} ${quoteList(names)}. ` +
        'Call the tool again with values for them.',
    };
  }

  try {
    const path = buildPath(binding, value);
    const query: string[] = [];
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    const bodyFields: { field: FieldBinding; value: unknown }[] = [];
    for (const field of binding.fields) {
      const v = value(field);
      if (v === undefined) continue;
      switch (field.in) {
        case 'path':
          break;
        case 'query':
          if (v !== null) encodeQuery(field, field.wireName, toWire(v, field.nested, 0), query);
          break;
        case 'header':
          if (v !== null) headers[field.wireName] = headerValue(field, v);
          break;
        case 'body':
          bodyFields.push({ field, value: v });
          break;
      }
    }
    const base = binding.baseUrl.endsWith('/') ? binding.baseUrl.slice(0, -1) : binding.baseUrl;
    let url = base + path;
    if (query.length > 0) url += (path.includes('?') ? '&' : '?') + query.join('&');
    const { body, contentType } = buildBody(binding, bodyFields);
    return { ok: true, request: { method: binding.method, url, headers: { ...headers }, body, contentType } };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, message: `The call was not made: ${error.message}` };
    throw error;
  }
}

/** Fills `{placeholders}` with one URL-encoded segment each: `/`, `?`, `#` and `..` cannot get through. */
function buildPath(binding: OpenApiBinding, value: (field: FieldBinding) => unknown): string {
  const byWire = new Map<string, FieldBinding>();
  for (const field of binding.fields) if (field.in === 'path') byWire.set(field.wireName, field);
  return binding.path.replace(/\{([^{}]+)\}/g, (_match, wire: string) => {
    const field = byWire.get(wire);
    if (field === undefined)
      throw new Refusal(`the operation's path needs {${wire}}, which it does not declare.`);
    const v = value(field);
    const parts = Array.isArray(v) ? v : [v];
    const segment = parts
      .map((part) => {
        if (typeof part !== 'string' && typeof part !== 'number' && typeof part !== 'boolean') {
          throw new Refusal(`"${field.name}" goes into the URL path and must be a string or a number.`);
        }
        return encodeURIComponent(String(part));
      })
      .join(',');
    // `.` and `..` survive URL encoding and would move the request to another resource.
    if (segment === '.' || segment === '..') {
      throw new Refusal(`"${field.name}" cannot be "." or "..": give the identifier itself.`);
    }
    return segment;
  });
}

function headerValue(field: FieldBinding, v: unknown): string {
  const parts = Array.isArray(v) ? v : [v];
  const text = parts
    .map((part) => {
      if (typeof part !== 'string' && typeof part !== 'number' && typeof part !== 'boolean') {
        throw new Refusal(
          `"${field.name}" is sent as an HTTP header and must be a string, a number or a boolean.`,
        );
      }
      return String(part);
    })
    .join(',');
  if (FORBIDDEN_HEADER_CHARS.test(text)) {
    throw new Refusal(`"${field.name}" is sent as an HTTP header and cannot contain line breaks.`);
  }
  return text;
}

/** Renames nested properties to their wire names; keys the binding does not rename pass as they are. */
function toWire(v: unknown, names: NestedNames | undefined, depth: number): unknown {
  if (depth > DEFAULT_MAX_ARGUMENT_DEPTH) throw new Refusal('an argument is nested too deeply.');
  if (names === undefined) return v;
  if (Array.isArray(v))
    return names.items === undefined ? v : v.map((item) => toWire(item, names.items, depth + 1));
  if (!isObj(v)) return v;
  const out = Object.create(null) as Obj;
  for (const key of Object.keys(v)) {
    const entry =
      names.properties !== undefined && Object.hasOwn(names.properties, key)
        ? names.properties[key]
        : undefined;
    if (entry !== undefined) out[entry.wireName] = toWire(v[key], entry.nested, depth + 1);
    else out[key] = toWire(v[key], names.additionalProperties, depth + 1);
  }
  return out;
}

function scalarText(v: unknown): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

const DELIMITERS = { form: ',', spaceDelimited: '%20', pipeDelimited: '|' } as const;

/** OpenAPI 3 query serialisation; default `form` with `explode: true`. */
function encodeQuery(field: FieldBinding, key: string, v: unknown, out: string[]): void {
  const style = field.style ?? 'form';
  const explode = field.explode ?? style === 'form';
  const k = encodeURIComponent(key);
  if (style === 'deepObject') {
    encodeBrackets(key, v, out, 0);
    return;
  }
  if (Array.isArray(v)) {
    if (explode) for (const item of v) out.push(`${k}=${encodeURIComponent(scalarText(item))}`);
    else out.push(`${k}=${v.map((item) => encodeURIComponent(scalarText(item))).join(DELIMITERS[style])}`);
    return;
  }
  if (isObj(v)) {
    const keys = Object.keys(v);
    if (explode) {
      for (const sub of keys)
        out.push(`${encodeURIComponent(sub)}=${encodeURIComponent(scalarText(v[sub]))}`);
    } else {
      const flat = keys.flatMap((sub) => [encodeURIComponent(sub), encodeURIComponent(scalarText(v[sub]))]);
      out.push(`${k}=${flat.join(',')}`);
    }
    return;
  }
  out.push(`${k}=${encodeURIComponent(scalarText(v))}`);
}

/**
 * Bracket notation, as Stripe and Rack read forms: `metadata[key]=v`, `expand[]=a`, and arrays of
 * objects by index (`items[0][price]=p`) so that each element's keys stay together.
 */
function encodeBrackets(key: string, v: unknown, out: string[], depth: number): void {
  if (depth > DEFAULT_MAX_ARGUMENT_DEPTH) throw new Refusal('an argument is nested too deeply.');
  if (Array.isArray(v)) {
    v.forEach((item, i) => {
      const container = Array.isArray(item) || isObj(item);
      encodeBrackets(container ? `${key}[${i}]` : `${key}[]`, item, out, depth + 1);
    });
    return;
  }
  if (isObj(v)) {
    for (const sub of Object.keys(v)) encodeBrackets(`${key}[${sub}]`, v[sub], out, depth + 1);
    return;
  }
  out.push(`${encodeBracketKey(key)}=${encodeURIComponent(scalarText(v))}`);
}

/** Encodes each part of `a[b][c]` but keeps the brackets readable, as servers expect them. */
function encodeBracketKey(key: string): string {
  const open = key.indexOf('[');
  if (open < 0) return encodeURIComponent(key);
  const head = encodeURIComponent(key.slice(0, open));
  const rest = key
    .slice(open)
    .replace(/\[([^\]]*)\]/g, (_m, part: string) => `[${encodeURIComponent(part)}]`);
  return head + rest;
}

function buildBody(
  binding: OpenApiBinding,
  fields: { field: FieldBinding; value: unknown }[],
): { body: string | null; contentType: string | null } {
  if (binding.bodyEncoding === null || fields.length === 0) return { body: null, contentType: null };
  if (binding.bodyEncoding === 'json') {
    const contentType = binding.contentType ?? 'application/json';
    const first = fields[0] as { field: FieldBinding; value: unknown };
    if (binding.wholeBody)
      return { body: JSON.stringify(toWire(first.value, first.field.nested, 0)), contentType };
    // No prototype: a wire name may be `__proto__`, and it must stay an ordinary key.
    const object = Object.create(null) as Obj;
    for (const { field, value } of fields) object[field.wireName] = toWire(value, field.nested, 0);
    return { body: JSON.stringify(object), contentType };
  }
  const out: string[] = [];
  for (const { field, value } of fields) {
    const wired = toWire(value, field.nested, 0);
    if (binding.wholeBody) {
      if (!isObj(wired)) throw new Refusal(`"${field.name}" is sent as a form and must be an object.`);
      for (const key of Object.keys(wired))
        encodeFormField({ ...field, style: 'deepObject' }, key, wired[key], out);
    } else {
      encodeFormField(field, field.wireName, wired, out);
    }
  }
  return { body: out.join('&'), contentType: 'application/x-www-form-urlencoded' };
}

/**
 * One top-level form field. Objects always use bracket notation. Arrays follow the property's
 * declared encoding: `deepObject` (Stripe) gives `expand[]=a`; the OpenAPI default, `form` with
 * `explode`, gives repeated keys (`Event=a&Event=b`, as Twilio reads them); `explode: false` gives
 * one comma-separated value (Swagger 2's default `csv`).
 */
function encodeFormField(field: FieldBinding, key: string, v: unknown, out: string[]): void {
  if (isObj(v) || (Array.isArray(v) && field.style === 'deepObject')) {
    encodeBrackets(key, v, out, 0);
    return;
  }
  encodeQuery({ ...field, style: field.style === 'deepObject' ? 'form' : field.style }, key, v, out);
}
