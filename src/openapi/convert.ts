/**
 * OpenAPI 3.0/3.1 and Swagger 2.0 descriptions → operations, as the tool contract page says.
 *
 * Pure: no I/O, no clock, no ORM. The document may be hostile (cycles, shared subtrees from YAML
 * aliases, 10,000-level nesting, `__proto__` keys), so every walk here is bounded by a level or a
 * composition depth, every lookup by key checks own properties, and every map built from document
 * keys has no prototype.
 */
import { AppError } from '../errors.js';
import { riskFromMethod } from '../operations/risk.js';
import type { HttpMethod, OpenApiBinding } from '../operations/types.js';
import {
  type ConversionResult,
  type ConvertOptions,
  type ConvertedOperation,
  type DescriptionVersion,
  DEFAULT_MAX_COMPOSITION_DEPTH,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_DESCRIPTION_LENGTH,
  DEFAULT_MAX_DIAGNOSTICS,
  DEFAULT_MAX_ENUM_VALUES,
  DEFAULT_MAX_OPERATIONS,
  DEFAULT_MAX_PROPERTIES,
  DEFAULT_MAX_SCHEMA_NODES,
  DEFAULT_MAX_TOTAL_SCHEMA_NODES,
  type SkippedOperation,
} from './model.js';
import { type Obj, describeKind, detectVersion, isObj, own, ownString } from './document.js';
import { nameFromMethodAndPath, numbered, toOneLine, truncate } from './naming.js';
import { Converter, type Limits } from './schema.js';
import { compileUrlPolicy, type UrlPolicy } from '../http/url-policy.js';
import { documentBase, normalizeBaseUrl, placeholderBase, serverBase, uncallableBase } from './servers.js';
import {
  type CheckBudget,
  MAX_TOTAL_CHECK_SCHEMA_CHARS,
  METHODS,
  OperationBuilder,
  type OperationContext,
  assemble,
} from './parameters.js';

/** Without a policy, conversion judges base addresses as production does: https and public only. */
const STRICT_URL_POLICY: UrlPolicy = { allowHosts: [], allowLoopback: false };

export * from './model.js';
export { detectVersion } from './document.js';
export { fitName, toOneLine } from './naming.js';
export { chooseServer, normalizeBaseUrl } from './servers.js';

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
  const limits = limitsOf(options);
  const override = baseUrl === null ? null : normalizeBaseUrl(baseUrl);
  const paths = own(root, 'paths');
  if (paths !== undefined && !isObj(paths)) {
    throw new AppError(
      'DESCRIPTION_INVALID',
      `"paths" must be an object of path items; found ${describeKind(paths)}.`,
    );
  }
  const c = new Converter(root, limits);
  // The argument check's own converter: every option of a union (DESIGN.md rule 17).
  const checker: CheckBudget = {
    converter: new Converter(root, limits, true),
    charsLeft: MAX_TOTAL_CHECK_SCHEMA_CHARS,
  };
  const vendorPaths = own(root, 'x-ms-paths');
  if (isObj(vendorPaths) && Object.keys(vendorPaths).length > 0)
    c.diag(
      `x-ms-paths holds ${Object.keys(vendorPaths).length} path items; vendor extensions are not part of OpenAPI and were ignored`,
    );
  const rootBase = override ?? documentBase(c, root, version, descriptionUrl);
  if (override === null) {
    const why = uncallableBase(root, rootBase, compileUrlPolicy(options.urlPolicy ?? STRICT_URL_POLICY));
    if (why !== null)
      c.diag(
        `no callable base address: ${why}; an operator must set the connection's baseUrl to the API's https:// address`,
      );
  }

  const walk: Walk = {
    c,
    checker,
    builder: new OperationBuilder(c, version),
    limits,
    version,
    root,
    descriptionUrl,
    override,
    rootBase,
    operations: [],
    skipped: [],
    names: new Set<string>(),
    missingBase: null,
    schemaNodesLeft: limits.maxTotalSchemaNodes,
  };
  const { pathItemsSeen, methodsSeen } = walkPaths(walk, paths ?? {});
  const { operations, skipped, missingBase } = walk;
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

function limitsOf(options: ConvertOptions): Limits {
  return {
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
}

/** What the walk over the paths carries from one operation to the next, and collects. */
interface Walk {
  c: Converter;
  checker: CheckBudget;
  builder: OperationBuilder;
  limits: Limits;
  version: DescriptionVersion;
  root: Obj;
  descriptionUrl: string | null;
  override: string | null;
  rootBase: string | null;
  operations: ConvertedOperation[];
  skipped: SkippedOperation[];
  names: Set<string>;
  /** The first operation found without a base address. */
  missingBase: string | null;
  schemaNodesLeft: number;
}

/** Every method of every path item, in document order; methods not taken are reported once each. */
function walkPaths(walk: Walk, pathItems: Obj): { pathItemsSeen: number; methodsSeen: number } {
  const { c } = walk;
  let pathItemsSeen = 0;
  let methodsSeen = 0;
  const notTaken = new Map<string, string[]>();
  for (const path of Object.keys(pathItems)) {
    const pathItem = c.deref(pathItems[path], `path ${JSON.stringify(path)}`);
    if (pathItem === undefined) {
      c.diag(`path ${JSON.stringify(path)} is not an object; ignored`);
      continue;
    }
    pathItemsSeen++;
    for (const key of Object.keys(pathItem)) {
      if (!Object.hasOwn(METHODS, key)) {
        if (Object.hasOwn(NOT_TAKEN, key)) {
          const where = notTaken.get(key);
          if (where === undefined) notTaken.set(key, [path]);
          else where.push(path);
        }
        continue;
      }
      methodsSeen++;
      convertOperation(walk, pathItem, path, key);
    }
  }
  for (const [method, where] of notTaken) c.diag(notTakenLine(method, where));
  return { pathItemsSeen, methodsSeen };
}

/** One operation: named, then skipped (with why), left without a base, or converted. */
function convertOperation(walk: Walk, pathItem: Obj, path: string, key: string): void {
  const { c, limits, override, operations, skipped, names } = walk;
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
    return;
  }
  if (own(op, 'deprecated') === true) {
    skipped.push({ name, method, path, reason: 'DEPRECATED' });
    return;
  }
  if (operations.length >= limits.maxOperations) {
    skipped.push({ name, method, path, reason: 'LIMIT' });
    return;
  }
  const ctx: OperationContext = { method, path, label, op, pathItem };
  const built = walk.builder.build(ctx);
  if ('skip' in built) {
    skipped.push({ name, method, path, reason: built.skip });
    return;
  }
  const ownBase =
    override !== null || walk.version === 'swagger-2.0'
      ? null
      : (serverBase(c, own(op, 'servers'), walk.descriptionUrl, label) ??
        serverBase(c, own(pathItem, 'servers'), walk.descriptionUrl, label));
  const opBase = override ?? ownBase ?? walk.rootBase;
  if (opBase === null) {
    walk.missingBase ??= label;
    return;
  }
  // Every operation keeps at least its top-level fields, whatever the budget left.
  const budget = Math.min(limits.maxSchemaNodes, Math.max(walk.schemaNodesLeft, limits.maxProperties + 1));
  const { inputSchema, fields, size, checkSchema } = assemble(c, label, built.fields, budget, walk.checker);
  walk.schemaNodesLeft -= size;
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
  if (checkSchema !== undefined) converted.checkSchema = checkSchema;
  const placeholder = override === null ? placeholderBase(walk.root, opBase, ownBase === null) : null;
  if (placeholder !== null) converted.basePlaceholder = placeholder;
  operations.push(converted);
}

/**
 * Methods a path item may hold that the contract does not take as operations ("one operation per
 * get, put, post, patch and delete"), with why: each is reported, never dropped silently.
 */
const NOT_TAKEN: Record<string, string> = {
  head: 'HEAD asks for what GET answers, without the body',
  options: 'OPTIONS asks which methods and headers the server allows',
  trace: 'TRACE echoes the request back',
};

/** Paths named in a "not taken" diagnostic; the rest are counted. */
const NOT_TAKEN_PATHS_LISTED = 3;

function notTakenLine(method: string, paths: readonly string[]): string {
  const listed = paths.slice(0, NOT_TAKEN_PATHS_LISTED).map((p) => JSON.stringify(p));
  const more = paths.length - listed.length;
  const n = paths.length;
  return (
    `${n} ${method} operation${n === 1 ? ' was' : 's were'} not taken (${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}): ` +
    `operations are made from get, put, post, patch and delete only, and ${NOT_TAKEN[method] ?? method}`
  );
}

/** One line saying why a description gave no operation. */
export function emptyReason(
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
