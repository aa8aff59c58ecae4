/** Plain JSON values, as stored in jsonb columns and sent to models. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A non-null, non-array object: the first check on any JSON read from outside. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `READ` operations have no side effect; everything else is `WRITE` and leaves a ledger row. */
export const RISKS = ['READ', 'WRITE'] as const;
export type Risk = (typeof RISKS)[number];
/**
 * {@link Risk} as an enum-like object, for the decorators that need one (type-graphql's `Risk` enum,
 * MikroORM's enum column). The same values, so no cast is needed between the two.
 */
export const RiskLevel: { readonly [K in Risk]: K } = { READ: 'READ', WRITE: 'WRITE' };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type FieldLocation = 'path' | 'query' | 'header' | 'body';

/** Renames below the top level of a body field: schema name -> wire name, recursively. */
export interface NestedNames {
  properties?: Record<string, { wireName: string; nested?: NestedNames }>;
  items?: NestedNames;
  /** Renames inside the values of a map (`additionalProperties`), keyed freely. */
  additionalProperties?: NestedNames;
}

/** One input field of an OpenAPI operation: where it goes and under which real name. */
export interface FieldBinding {
  /** The property name in the input schema declared to the model. */
  name: string;
  in: FieldLocation;
  /** The real name on the wire (parameter name or body property name). */
  wireName: string;
  /** Renames inside an object or array body field, when any name had to be made to fit. */
  nested?: NestedNames;
  /** True when a call without this field is refused before any request (path fields always are). */
  required?: boolean;
  /**
   * How a query parameter or form property is serialised, as OpenAPI 3 `style`/`explode`.
   * Absent means `form` with `explode: true`: repeated keys for arrays.
   */
  style?: 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';
  explode?: boolean;
}

/** How an OpenAPI operation is called. Stored as jsonb on the Operation. */
export interface OpenApiBinding {
  method: HttpMethod;
  /** The path template from the description, such as `/pets/{petId}`. */
  path: string;
  /** Absolute base address the path is appended to. */
  baseUrl: string;
  /** `null` when the operation takes no body. */
  bodyEncoding: 'json' | 'form' | null;
  /** True when the body is not an object and the single field `body` is the whole body. */
  wholeBody: boolean;
  fields: FieldBinding[];
  /** The JSON media type to send when it is not `application/json`, such as `application/merge-patch+json`. */
  contentType?: string;
}
