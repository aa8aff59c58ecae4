/**
 * The validator's checks of a GEMINI and a GEMINI_JSON_SCHEMA declaration (pure: no I/O): a
 * function declaration whose `parameters` holds only the fields of the Gemini API's Schema object
 * (the OpenAPI 3.0 subset), each with its documented value type; or whose `parametersJsonSchema`
 * is JSON Schema of the supported keywords, with local `$ref`s alone and cycles reached only
 * through optional properties. Both take the same function and property names. Part of the
 * validator (`../rules.ts`), which shares no code with the compiler.
 */
import {
  checkDescription,
  checkKeys,
  checkMetaSchema,
  checkName,
  isObj,
  type Obj,
  quote,
  type Report,
  seg,
  Trail,
} from './common.js';
import {
  GEMINI_NAME_PATTERN,
  GEMINI_PROPERTY_NAME_PATTERN,
  MAX_WALK_DEPTH,
  MAX_WALK_NODES,
} from './table.js';
import { type At, eachChild, refPath, resolveRef, walk } from './walk.js';

/** The fields of the Gemini API's `Schema` object; any other field is an unknown-field 400. */
const GEMINI_SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
/** `Schema.type` values we declare (the enum also has `TYPE_UNSPECIFIED` and `NULL`: not used). */
const GEMINI_TYPES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT']);
/** `Schema.format`: the documented values per type. */
const GEMINI_FORMATS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['STRING', new Set(['enum', 'date-time'])],
  ['NUMBER', new Set(['float', 'double'])],
  ['INTEGER', new Set(['int32', 'int64'])],
]);
const GEMINI_COUNT_FIELDS = [
  'maxItems',
  'minItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
];

/** The JSON Schema keywords `parametersJsonSchema` supports (the list of `responseJsonSchema`). */
const GEMINI_JSON_KEYWORDS = new Set([
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

/** GEMINI: a function declaration with `parameters`, the OpenAPI 3.0 subset. */
export function checkGemini(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'parameters'], 'gemini.shape', '', report);
  checkName(decl.name, GEMINI_NAME_PATTERN, 'gemini.name', '/name', report);
  checkDescription(decl.description, 'gemini.shape', '/description', report);
  const params = decl.parameters;
  if (params === undefined) return;
  const at = '/parameters';
  if (!isObj(params)) return report.add('gemini.parameters.object', at, 'parameters is not a Schema object');
  if (typeof params.type !== 'string' || params.type.toUpperCase() !== 'OBJECT')
    report.add('gemini.parameters.object', at + '/type', `type is ${quote(params.type)}, not OBJECT`);
  walk(params, at, report, (value, here) => checkGeminiSchema(value, here, report));
}

/** One subschema of `parameters`: a Schema object of the documented fields only. */
function checkGeminiSchema(value: unknown, at: At, report: Report): void {
  if (!isObj(value))
    return report.add('gemini.schema.field-value', at(), `${quote(value)} is not a Schema object`);
  for (const key of Object.keys(value))
    if (!GEMINI_SCHEMA_FIELDS.has(key))
      report.add('gemini.schema.field', at() + seg(key), `${quote(key)} is not a field of Schema`);

  const type = typeof value.type === 'string' ? value.type.toUpperCase() : null;
  if (value.type === undefined) {
    if (value.anyOf === undefined) report.add('gemini.schema.type', at(), 'the schema has no type');
  } else if (type === null || !GEMINI_TYPES.has(type)) {
    report.add(
      'gemini.schema.type',
      at() + '/type',
      `type ${quote(value.type)} is not one of ${[...GEMINI_TYPES].join(', ')}`,
    );
  }
  checkGeminiFieldValues(value, at, report);
  checkGeminiContainer(value, type, at, report);
  checkGeminiEnumFormat(value, type, at, report);
}

/** Each field's value has the type the Schema object gives it. */
function checkGeminiFieldValues(value: Obj, at: At, report: Report): void {
  const fieldValue = (key: string, ok: boolean, what: string): void => {
    if (value[key] !== undefined && !ok)
      report.add('gemini.schema.field-value', at() + seg(key), `${key} is not ${what}`);
  };
  fieldValue('nullable', typeof value.nullable === 'boolean', 'a boolean');
  for (const key of ['title', 'description', 'pattern', 'format'])
    fieldValue(key, typeof value[key] === 'string', 'a string');
  for (const key of ['minimum', 'maximum'])
    fieldValue(key, typeof value[key] === 'number' && Number.isFinite(value[key]), 'a number');
  for (const key of GEMINI_COUNT_FIELDS) {
    const v = value[key];
    const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
    fieldValue(key, typeof n === 'number' && Number.isSafeInteger(n) && n >= 0, 'a non-negative integer');
  }
  fieldValue('properties', isObj(value.properties), 'an object of Schemas');
  fieldValue('items', isObj(value.items), 'one Schema');
  fieldValue('anyOf', Array.isArray(value.anyOf) && value.anyOf.length > 0, 'a non-empty list of Schemas');
  fieldValue('enum', Array.isArray(value.enum), 'a list');
  fieldValue('required', Array.isArray(value.required), 'a list');
  fieldValue('propertyOrdering', Array.isArray(value.propertyOrdering), 'a list');
}

/** An ARRAY has items; an OBJECT has properties, with names Gemini takes, and lists only those. */
function checkGeminiContainer(value: Obj, type: string | null, at: At, report: Report): void {
  if (type === 'ARRAY' && value.items === undefined)
    report.add('gemini.schema.array-items', at(), 'an ARRAY has no items');
  const properties = isObj(value.properties) ? value.properties : null;
  if (type === 'OBJECT' && (properties === null || Object.keys(properties).length === 0))
    report.add('gemini.schema.object-properties', at(), 'an OBJECT has no properties');
  if (properties) checkPropertyNames(properties, at, report);
  for (const key of ['required', 'propertyOrdering']) {
    const list = value[key];
    if (!Array.isArray(list)) continue;
    list.forEach((name, i) => {
      if (typeof name !== 'string' || !properties || !Object.hasOwn(properties, name))
        report.add(
          'gemini.schema.required',
          at() + seg(key) + seg(i),
          `${quote(name)} is not a property of this object`,
        );
    });
  }
}

function checkGeminiEnumFormat(value: Obj, type: string | null, at: At, report: Report): void {
  if (Array.isArray(value.enum)) {
    if (type !== 'STRING')
      report.add('gemini.schema.enum', at() + '/enum', `enum on type ${quote(value.type)}, not STRING`);
    value.enum.forEach((v, i) => {
      if (typeof v !== 'string')
        report.add('gemini.schema.enum', at() + '/enum' + seg(i), `enum value ${quote(v)} is not a string`);
      else if (v === '')
        report.add('gemini.schema.enum', at() + '/enum' + seg(i), 'an empty-string enum value');
    });
  }
  if (typeof value.format === 'string') {
    const allowed = type ? GEMINI_FORMATS.get(type) : undefined;
    if (!allowed?.has(value.format))
      report.add(
        'gemini.schema.format',
        at() + '/format',
        `format ${quote(value.format)} is not documented for type ${quote(value.type)}`,
      );
  }
}

/** `gemini.schema.property-name`, for both dialects: the keys of one `properties` map. */
function checkPropertyNames(properties: Obj, at: At, report: Report): void {
  for (const key of Object.keys(properties))
    if (!GEMINI_PROPERTY_NAME_PATTERN.test(key))
      report.add(
        'gemini.schema.property-name',
        at() + '/properties' + seg(key),
        `property name ${quote(key)} does not match ${String(GEMINI_PROPERTY_NAME_PATTERN)}`,
      );
}

// ---------------------------------------------------------------------------------------------
// GEMINI_JSON_SCHEMA (`parametersJsonSchema`).

/** GEMINI_JSON_SCHEMA: a function declaration with `parametersJsonSchema`. */
export function checkGeminiJson(decl: Obj, report: Report): void {
  checkKeys(decl, ['name', 'description', 'parametersJsonSchema'], 'gemini-json.shape', '', report);
  checkName(decl.name, GEMINI_NAME_PATTERN, 'gemini.name', '/name', report);
  checkDescription(decl.description, 'gemini-json.shape', '/description', report);
  const schema = decl.parametersJsonSchema;
  if (schema === undefined) return;
  const at = '/parametersJsonSchema';
  if (!isObj(schema))
    return report.add('gemini-json.parameters.object', at, 'parametersJsonSchema is not an object schema');
  if (schema.type !== 'object')
    report.add('gemini-json.parameters.object', at + '/type', `type is ${quote(schema.type)}, not "object"`);
  checkMetaSchema(schema, 'gemini-json.schema.valid', at, report);
  walk(schema, at, report, (value, here) => {
    if (!isObj(value)) return;
    for (const key of Object.keys(value))
      if (!GEMINI_JSON_KEYWORDS.has(key))
        report.add('gemini-json.schema.keyword', here() + seg(key), `${quote(key)} is not supported`);
    if (isObj(value.properties)) checkPropertyNames(value.properties, here, report);
    if (Array.isArray(value.enum))
      value.enum.forEach((v, i) => {
        if (v === '')
          report.add('gemini-json.schema.enum', here() + '/enum' + seg(i), 'an empty-string enum value');
        else if (typeof v !== 'string' && typeof v !== 'number')
          report.add(
            'gemini-json.schema.enum',
            here() + '/enum' + seg(i),
            `enum value ${quote(v)} is not a string or a number`,
          );
      });
    if (value.$ref !== undefined) {
      if (typeof value.$ref !== 'string' || !resolveRef(schema, value.$ref, ['$defs']).ok)
        report.add(
          'gemini-json.schema.ref',
          here() + '/$ref',
          `$ref ${quote(value.$ref)} is not a local definition of this schema`,
        );
      const siblings = Object.keys(value).filter((k) => !k.startsWith('$'));
      if (siblings.length > 0)
        report.add(
          'gemini-json.schema.ref-siblings',
          here(),
          `$ref has sibling keywords ${siblings.map(quote).join(', ')}`,
        );
    }
  });
  checkGeminiCycles(schema, at, report);
}

/**
 * A `$ref` back to a definition being expanded (or to the root) is a cycle: Gemini unrolls it only
 * a little, so it must sit under at least one property that is not required (else every valid
 * value would be infinite).
 */
function checkGeminiCycles(root: Obj, at: string, report: Report): void {
  let budget = MAX_WALK_NODES;
  const reported = new Set<string>();
  const expanding = new Map<string, boolean>(); // ref key → passed a non-required property since
  const go = (
    schema: unknown,
    trail: Trail,
    optionalSince: ReadonlyMap<string, boolean>,
    steps: number,
  ): void => {
    if (!isObj(schema) || --budget < 0 || steps > MAX_WALK_DEPTH) return;
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref, ['$defs']);
      if (target.ok) {
        const since = optionalSince.get(target.key);
        if (since === false) {
          const path = trail.pointer();
          if (!reported.has(path)) {
            reported.add(path);
            report.add(
              'gemini-json.schema.cycle-required',
              path + '/$ref',
              `the cyclic $ref ${quote(schema.$ref)} is reached only through required properties`,
            );
          }
        } else if (since === undefined) {
          const next = new Map(optionalSince);
          next.set(target.key, false);
          go(target.target, new Trail(at + refPath(target.key)), next, steps + 1);
        }
      }
    }
    const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
    eachChild(schema, (child, keyword, key) => {
      if (keyword === '$defs') return;
      let next: ReadonlyMap<string, boolean> = optionalSince;
      if (keyword === 'properties' && !required.has(key)) {
        const copy = new Map(optionalSince);
        for (const k of copy.keys()) copy.set(k, true);
        next = copy;
      }
      trail.push(keyword, key);
      go(child, trail, next, steps + 1);
      trail.pop();
    });
  };
  expanding.set('#', false);
  go(root, new Trail(at), expanding, 0);
  if (budget < 0)
    report.add('common.schema.bounded', at, `following its $refs takes more than ${MAX_WALK_NODES} steps`);
}
