/**
 * Small helpers over an untrusted parsed description (own properties only, prototype-free maps),
 * and recognising its version. Pure.
 */
import { AppError } from '../errors.js';
import { type DescriptionVersion } from './model.js';

// ---------------------------------------------------------------------------------------------
// Small helpers over untrusted data

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads only own properties: `obj.constructor` on a plain object is a function, not the document's. */
export function own(obj: Obj, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function ownString(obj: Obj, key: string): string | undefined {
  const value = own(obj, key);
  return typeof value === 'string' ? value : undefined;
}

/** A map keyed by names from the document: no prototype, so `__proto__` is just a key. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A web page (documentation, a login page) where a description was expected. */
const HTML_PAGE = /^\s*<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i;

export function describeKind(value: unknown): string {
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
