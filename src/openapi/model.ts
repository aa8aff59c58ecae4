/**
 * What converting an OpenAPI description produces (operations, skipped ones, diagnostics), and the
 * limits conversion keeps. Types and constants only; `convert.ts` re-exports them.
 */
import { MAX_OPERATIONS_PER_CONNECTION } from '../limits.js';
import type { HttpMethod, JsonObject, OpenApiBinding, Risk } from '../operations/types.js';
import type { UrlPolicy } from '../http/url-policy.js';

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
export const MAX_NAME_LENGTH = 64;

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
  /**
   * What the argument check takes instead of `inputSchema` (DESIGN.md rule 17): the same fields,
   * with every option of each union (as `anyOf`) and `null` in nullable enums, without
   * descriptions. Absent when it would accept exactly what `inputSchema` does.
   */
  checkSchema?: JsonObject;
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
  /**
   * The outbound policy (plain data, so it crosses to the worker): a base address is reported as
   * not callable only when this policy would refuse its calls. Default: https to public hosts only.
   */
  urlPolicy?: UrlPolicy;
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
