/**
 * The validator's checks of an OPENAI or OPENAI_STRICT declaration (pure: no I/O): a Chat
 * Completions function tool whose `parameters` is valid JSON Schema with `items` on every array,
 * and, in strict mode, the Structured Outputs subset: closed objects, every property required, only
 * the supported keywords, types and formats, local `$ref`s alone, and the size limits measured with
 * the `$ref`s expanded. Part of the validator (`../rules.ts`), which shares no code with the
 * compiler.
 */
import {
  checkDescription,
  checkKeys,
  checkMetaSchema,
  checkName,
  isObj,
  type Obj,
  quote,
  Report,
  seg,
  Trail,
} from './common.js';
import {
  MAX_WALK_DEPTH,
  MAX_WALK_NODES,
  OPENAI_NAME_PATTERN,
  OPENAI_STRICT_LARGE_ENUM_CHARS,
  OPENAI_STRICT_LARGE_ENUM_VALUES,
  OPENAI_STRICT_MAX_DEPTH,
  OPENAI_STRICT_MAX_ENUM_VALUES,
  OPENAI_STRICT_MAX_PROPERTIES,
  OPENAI_STRICT_MAX_STRING_CHARS,
} from './table.js';
import { type At, eachChild, hasType, isContainer, refPath, resolveRef, typesOf, walk } from './walk.js';

/** Structured Outputs' supported keywords (types, `anyOf`, definitions, and the listed constraints). */
export const OPENAI_STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  // string
  'pattern',
  'format',
  // number
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  // array
  'minItems',
  'maxItems',
]);
const OPENAI_STRICT_TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
const OPENAI_STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** OPENAI and OPENAI_STRICT: a Chat Completions function tool. */
export function checkOpenAi(decl: Obj, strict: boolean, report: Report): void {
  checkKeys(decl, ['type', 'function'], 'openai.shape', '', report);
  if (decl.type !== 'function')
    report.add('openai.shape', '/type', `type is ${quote(decl.type)}, not "function"`);
  const fn = decl.function;
  if (!isObj(fn)) return report.add('openai.shape', '/function', 'function is not an object');
  checkKeys(fn, ['name', 'description', 'parameters', 'strict'], 'openai.shape', '/function', report);
  checkName(fn.name, OPENAI_NAME_PATTERN, 'openai.name', '/function/name', report);
  checkDescription(fn.description, 'openai.shape', '/function/description', report);
  if (fn.strict !== undefined && typeof fn.strict !== 'boolean')
    report.add('openai.shape', '/function/strict', 'strict is not a boolean');
  if (strict && fn.strict !== true)
    report.add('openai.strict.flag', '/function/strict', 'OPENAI_STRICT declares strict: true');
  if (!strict && fn.strict === true)
    report.add('openai.strict.flag', '/function/strict', 'OPENAI (non-strict) does not declare strict: true');

  const params = fn.parameters;
  if (params === undefined) {
    if (strict)
      report.add(
        'openai.strict.parameters',
        '/function',
        'strict mode needs parameters, even with no properties',
      );
    return;
  }
  const at = '/function/parameters';
  if (!isObj(params)) return report.add('openai.parameters.object', at, 'parameters is not an object schema');
  if (params.type !== 'object')
    report.add('openai.parameters.object', at + '/type', `type is ${quote(params.type)}, not "object"`);
  // Strict mode reports every other keyword on every subschema (`openai.strict.keyword`, below), so
  // the meta-check needs to judge only the supported ones' values: the same verdict, half the work.
  checkMetaSchema(params, 'openai.schema.valid', at, report, strict ? OPENAI_STRICT_KEYWORDS : null);
  // One walk for both modes; strict mode's findings are listed after the others, as its own pass.
  const strictReport = strict ? new Report(report.tool) : null;
  if (strictReport && params.anyOf !== undefined)
    strictReport.add('openai.strict.root-any-of', at + '/anyOf', 'the root uses anyOf');
  walk(params, at, report, (value, here) => {
    if (isObj(value) && hasType(value, 'array') && value.items === undefined)
      report.add('openai.schema.array-items', here(), 'an array schema has no items');
    if (strictReport) checkStrictNode(params, value, here, strictReport);
  });
  if (!strictReport) return;
  report.violations.push(...strictReport.violations);
  checkStrictSizes(params, at, report);
}

/** One subschema of a strict schema, on its own (the whole-schema sizes are {@link checkStrictSizes}). */
function checkStrictNode(root: Obj, value: unknown, at: At, report: Report): void {
  if (!isObj(value)) {
    return report.add(
      'openai.strict.type',
      at(),
      `a ${value === true || value === false ? 'boolean' : typeof value} schema is not supported`,
    );
  }
  for (const key in value)
    if (Object.hasOwn(value, key) && !OPENAI_STRICT_KEYWORDS.has(key))
      report.add('openai.strict.keyword', at() + seg(key), `${quote(key)} is not supported`);

  checkStrictType(value, at, report);

  if (typeof value.format === 'string' && !OPENAI_STRICT_FORMATS.has(value.format))
    report.add('openai.strict.format', at() + '/format', `format ${quote(value.format)} is not supported`);

  if (value.$ref !== undefined) checkStrictRef(root, value, at, report);

  if (hasType(value, 'object') || value.properties !== undefined) checkStrictObject(value, at, report);

  if (Array.isArray(value.enum) && value.enum.length > OPENAI_STRICT_LARGE_ENUM_VALUES) {
    const enumChars = value.enum.reduce((sum: number, v) => sum + valueChars(v), 0);
    if (value.enum.every((v) => typeof v === 'string') && enumChars > OPENAI_STRICT_LARGE_ENUM_CHARS)
      report.add(
        'openai.strict.large-enum',
        at() + '/enum',
        `a string enum of ${value.enum.length} values has ${enumChars} characters, over ${OPENAI_STRICT_LARGE_ENUM_CHARS}`,
      );
  }
}

function checkStrictType(value: Obj, at: At, report: Report): void {
  if (value.type === undefined) {
    if (
      value.anyOf === undefined &&
      value.$ref === undefined &&
      value.enum === undefined &&
      value.const === undefined
    )
      report.add('openai.strict.type', at(), 'the schema has no type');
    return;
  }
  const type = value.type;
  // One type is the usual case: no list is made for it (this runs for every node).
  if (typeof type === 'string') {
    if (!OPENAI_STRICT_TYPES.has(type))
      report.add('openai.strict.type', at() + '/type', `type ${quote(type)} is not supported`);
    return;
  }
  for (const t of typesOf(value))
    if (!OPENAI_STRICT_TYPES.has(t))
      report.add('openai.strict.type', at() + '/type', `type ${quote(t)} is not supported`);
}

function checkStrictRef(root: Obj, value: Obj, at: At, report: Report): void {
  if (typeof value.$ref !== 'string' || !resolveRef(root, value.$ref, ['$defs', 'definitions']).ok)
    report.add(
      'openai.strict.ref',
      at() + '/$ref',
      `$ref ${quote(value.$ref)} is not a local definition of this schema`,
    );
  const siblings = Object.keys(value).filter((k) => k !== '$ref');
  if (siblings.length > 0)
    report.add(
      'openai.strict.ref-siblings',
      at(),
      `$ref has sibling keywords ${siblings.map(quote).join(', ')}`,
    );
}

/** An object schema: closed, and `required` lists exactly its properties. */
function checkStrictObject(value: Obj, at: At, report: Report): void {
  if (value.additionalProperties !== false)
    report.add(
      'openai.strict.additional-properties',
      at(),
      'an object schema does not set additionalProperties: false',
    );
  const properties = isObj(value.properties) ? value.properties : {};
  const required = value.required;
  if (!Array.isArray(required))
    return report.add('openai.strict.required-all', at(), 'an object schema has no required list');
  if (listsInOrder(properties, required)) return;
  const keys = Object.keys(properties);
  const listed = new Set<unknown>(required);
  const missing = keys.filter((k) => !listed.has(k));
  const own = new Set<unknown>(keys);
  const extra = required.filter((k) => !own.has(k));
  if (missing.length > 0)
    report.add(
      'openai.strict.required-all',
      at() + '/required',
      `required misses ${missing.map(quote).join(', ')}`,
    );
  if (extra.length > 0)
    report.add(
      'openai.strict.required-all',
      at() + '/required',
      `required names ${extra.map(quote).join(', ')}, not a property`,
    );
}

/**
 * Whether `required` is the object's property names in their order: the usual case, checked
 * without making a list or a set (this runs for every object node).
 */
function listsInOrder(properties: Obj, required: unknown[]): boolean {
  let i = 0;
  for (const key in properties) {
    if (!Object.hasOwn(properties, key)) continue;
    if (required[i] !== key) return false;
    i++;
  }
  return i === required.length;
}

/** The whole-schema limits of Structured Outputs, on the schema with its `$ref`s expanded. */
function checkStrictSizes(root: Obj, at: string, report: Report): void {
  const sizes = expandedSizes(root, ['$defs', 'definitions']);
  if (sizes === null)
    return report.add(
      'common.schema.bounded',
      at,
      `following its $refs takes more than ${MAX_WALK_NODES} steps`,
    );
  if (sizes.properties > OPENAI_STRICT_MAX_PROPERTIES)
    report.add(
      'openai.strict.properties-total',
      at,
      `${sizes.properties} object properties, over ${OPENAI_STRICT_MAX_PROPERTIES}`,
    );
  if (sizes.enumValues > OPENAI_STRICT_MAX_ENUM_VALUES)
    report.add(
      'openai.strict.enum-total',
      at,
      `${sizes.enumValues} enum values, over ${OPENAI_STRICT_MAX_ENUM_VALUES}`,
    );
  if (sizes.chars > OPENAI_STRICT_MAX_STRING_CHARS)
    report.add(
      'openai.strict.string-total',
      at,
      `${sizes.chars} characters of names and values, over ${OPENAI_STRICT_MAX_STRING_CHARS}`,
    );
  if (sizes.levels > OPENAI_STRICT_MAX_DEPTH)
    report.add(
      'openai.strict.depth',
      at + sizes.deepest,
      `${sizes.levels} levels of nesting, over ${OPENAI_STRICT_MAX_DEPTH}`,
    );
}

/** Characters an enum or const value counts: a string's length, else the length of its JSON. */
function valueChars(value: unknown): number {
  return typeof value === 'string' ? value.length : quote(value).length;
}

interface ExpandedSizes {
  /** The deepest chain of object and array schemas, and where it ends (in the schema as written). */
  levels: number;
  deepest: string;
  /** Object properties, enum values, and characters of names, enum and const values. */
  properties: number;
  enumValues: number;
  chars: number;
}

/**
 * The sizes Structured Outputs limits, measured on the schema with its local `$ref`s expanded where
 * they are used (a definition used twice counts twice, and nests as deep as where it is used), a
 * cycle cut where it closes (a recursive definition counts once). A definition no `$ref` reaches
 * counts as written. Definition names count once.
 * `null` when the expansion takes more than {@link MAX_WALK_NODES} steps.
 */
function expandedSizes(root: Obj, containers: readonly string[]): ExpandedSizes | null {
  const sizes: ExpandedSizes = { levels: 0, deepest: '', properties: 0, enumValues: 0, chars: 0 };
  for (const container of containers) {
    const defs = root[container];
    if (isObj(defs)) for (const name of Object.keys(defs)) sizes.chars += name.length;
  }
  let budget = MAX_WALK_NODES;
  const expanding = new Set<string>(['#']);
  const reached = new Set<string>();
  // The node whose children are being visited, for the one closure that visits them (not one
  // closure per node): its trail, its levels and its steps from where the expansion started.
  let trail = new Trail('');
  let levels = 0;
  let steps = 0;
  const child = (value: unknown, keyword: string, key: string | number | undefined): void => {
    if (containers.includes(keyword)) return;
    const on = trail;
    const above = levels;
    const at = steps;
    on.push(keyword, key);
    go(value, on, above, at + 1);
    on.pop();
    trail = on;
    levels = above;
    steps = at;
  };
  const go = (schema: unknown, on: Trail, above: number, at: number): void => {
    if (!isObj(schema) || --budget < 0 || at > MAX_WALK_DEPTH) return;
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref, containers);
      if (target.ok && !expanding.has(target.key)) {
        reached.add(target.key);
        expanding.add(target.key);
        go(target.target, new Trail(refPath(target.key)), above, at + 1);
        expanding.delete(target.key);
      }
    }
    const here = above + (isContainer(schema) ? 1 : 0);
    if (here > sizes.levels) {
      sizes.levels = here;
      sizes.deepest = on.pointer();
    }
    const properties = schema.properties;
    if (isObj(properties))
      for (const key in properties)
        if (Object.hasOwn(properties, key)) {
          sizes.properties++;
          sizes.chars += key.length;
        }
    if (Array.isArray(schema.enum)) {
      sizes.enumValues += schema.enum.length;
      for (const v of schema.enum) sizes.chars += valueChars(v);
    }
    if (schema.const !== undefined) sizes.chars += valueChars(schema.const);
    trail = on;
    levels = here;
    steps = at;
    eachChild(schema, child);
  };
  go(root, new Trail(''), 0, 0);
  // A definition no $ref reaches still counts, as written.
  for (const container of containers) {
    const defs = root[container];
    if (!isObj(defs)) continue;
    for (const [name, def] of Object.entries(defs)) {
      const key = `#/${container}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (reached.has(key)) continue;
      expanding.add(key);
      go(def, new Trail(refPath(key)), 0, 0);
      expanding.delete(key);
    }
  }
  return budget < 0 ? null : sizes;
}
