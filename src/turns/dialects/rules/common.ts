/**
 * What every dialect's checker shares (pure: no I/O): the {@link Report} violations are added to,
 * JSON Pointer segments and quoting for messages, and the checks of a declaration's own fields (its
 * keys, name and description, that it is plain JSON, that a schema passes the JSON Schema 2020-12
 * meta-schema). Part of the validator (`../rules.ts`), which shares no code with the compiler.
 */
import { createRequire } from 'node:module';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { MAX_WALK_DEPTH, type RuleViolation } from './table.js';

export type Obj = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One JSON Pointer segment. */
export function seg(key: string | number): string {
  const text = String(key);
  // Most keys need no escaping: skip the two scans of replaceAll (this runs for every node).
  if (!text.includes('~') && !text.includes('/')) return '/' + text;
  return '/' + text.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * A JSON Pointer kept as segments below a base and written out only on demand (for a report), so
 * that a walk makes no string per node. A step is one segment, or a keyword and its key (a
 * property name or an index) pushed and popped together.
 */
export class Trail {
  readonly #steps: (string | number)[] = [];
  readonly #keys: (string | number | undefined)[] = [];
  constructor(readonly base: string) {}
  push(segment: string | number, key?: string | number): void {
    this.#steps.push(segment);
    this.#keys.push(key);
  }
  pop(): void {
    this.#steps.pop();
    this.#keys.pop();
  }
  /** The pointer as it stands now. */
  pointer(): string {
    let out = this.base;
    for (let i = 0; i < this.#steps.length; i++) {
      out += seg(this.#steps[i]!);
      const key = this.#keys[i];
      if (key !== undefined) out += seg(key);
    }
    return out;
  }
}

/** A value for a message: JSON, cut to 60 characters. */
export function quote(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The violations of one declaration, as they are found. */
export class Report {
  readonly violations: RuleViolation[] = [];
  constructor(readonly tool: string | null) {}
  add(rule: string, path: string, message: string): void {
    this.violations.push({ tool: this.tool, path, rule, message });
  }
}

/** A JSON leaf that needs no further look: a string, a boolean, null or a finite number. */
function isJsonLeaf(v: unknown): boolean {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v))
  );
}

/**
 * Whether the value survives JSON as it is: plain objects, arrays, strings, finite numbers,
 * booleans, null; nothing that contains itself or nests deeper than {@link MAX_WALK_DEPTH} × 4.
 * Reports the first value that does not, and stops there.
 */
export function checkJson(value: unknown, path: string, report: Report): boolean {
  const trail = new Trail(path);
  // The objects and arrays open on the current path, for the cycle check: a list, since the path
  // is short and a Set would give every object it holds an identity hash (this runs on every
  // value of every declaration checked).
  const open: object[] = [];
  const fail = (message: string): false => {
    report.add('common.declaration.json', trail.pointer(), message);
    return false;
  };
  const leaf = (v: unknown): boolean => {
    if (typeof v === 'number') return fail(`${String(v)} is not a JSON number`);
    return fail(`a ${typeof v} is not a JSON value`);
  };
  const child = (v: unknown, key: string | number): boolean => {
    trail.push(key);
    const ok = typeof v === 'object' && v !== null ? container(v) : leaf(v);
    trail.pop();
    return ok;
  };
  const container = (v: object): boolean => {
    if (open.includes(v)) return fail('the value contains itself');
    if (open.length > MAX_WALK_DEPTH * 4)
      return fail(`the value nests deeper than ${MAX_WALK_DEPTH * 4} levels`);
    const isArray = Array.isArray(v);
    const proto: unknown = Object.getPrototypeOf(v);
    if (!isArray && proto !== Object.prototype && proto !== null)
      return fail('the value is not a plain object');
    open.push(v);
    let ok = true;
    if (isArray) {
      for (let i = 0; i < v.length && ok; i++) if (!isJsonLeaf(v[i])) ok = child(v[i], i);
    } else {
      const obj = v as Record<string, unknown>;
      for (const key in obj) {
        if (!Object.hasOwn(obj, key) || isJsonLeaf(obj[key])) continue;
        if (!(ok = child(obj[key], key))) break;
      }
    }
    open.pop();
    return ok;
  };
  if (isJsonLeaf(value)) return true;
  return typeof value === 'object' && value !== null ? container(value) : leaf(value);
}

export function checkKeys(
  obj: Obj,
  allowed: readonly string[],
  rule: string,
  path: string,
  report: Report,
): void {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) report.add(rule, path + seg(key), `unknown field ${quote(key)}`);
}

export function checkName(name: unknown, pattern: RegExp, rule: string, path: string, report: Report): void {
  if (typeof name !== 'string') return report.add(rule, path, 'the name is missing or not a string');
  if (!pattern.test(name))
    report.add(rule, path, `the name ${quote(name)} does not match ${String(pattern)}`);
}

export function checkDescription(value: unknown, rule: string, path: string, report: Report): void {
  if (value !== undefined && typeof value !== 'string') report.add(rule, path, 'description is not a string');
}

// ---------------------------------------------------------------------------------------------
// JSON Schema meta-validation (2020-12), one Ajv made on first use.

const META_2020 = 'https://json-schema.org/draft/2020-12/schema';
const META_VOCABULARIES = [
  'core',
  'applicator',
  'unevaluated',
  'validation',
  'meta-data',
  'format-annotation',
  'content',
];
const require = createRequire(import.meta.url);

/**
 * Ajv's copy of the JSON Schema 2020-12 meta-schema as one schema, for speed (issue 26's cold
 * compile), meaning the same:
 * - Its `$dynamicRef: "#meta"`s become `$ref: "#"`: that is what they resolve to when validation
 *   starts at this meta-schema, as it does here (nothing extends it), so Ajv no longer looks the
 *   dynamic scope up at every subschema.
 * - Its `allOf` of the seven vocabulary meta-schemas is merged into one `properties` map: each of
 *   them is `{ type: ["object", "boolean"], properties, $defs }` with keys of its own, so the
 *   merged object takes exactly what all of them take, checked in one pass instead of eight.
 * Anything else in the files (a later Ajv's copy, say) throws here rather than meaning something
 * else; test/unit/turns/meta-schema.test.ts checks that it judges as Ajv's own meta-schema does.
 * With `keywords`, the merged `properties` are cut to those (each must be one of them).
 */
function mergedMetaSchema(keywords: ReadonlySet<string> | null): Obj {
  const load = (file: string): Obj => require(`ajv/dist/refs/json-schema-2020-12/${file}.json`) as Obj;
  const bind = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(bind);
    if (!isObj(value)) return value;
    const out: Obj = {};
    for (const [key, v] of Object.entries(value)) {
      // Only a string is the keyword: under `properties` these names are the keywords' own schemas.
      if (key === '$dynamicRef' && typeof v === 'string') out.$ref = '#';
      else if (key === '$ref' && typeof v === 'string') out.$ref = v.replace(/^meta\/[a-z-]+#/, '#');
      else out[key] = bind(v);
    }
    return out;
  };
  const top = load('schema');
  const vocabularies = JSON.stringify(META_VOCABULARIES.map((v) => ({ $ref: `meta/${v}` })));
  if (JSON.stringify(top.allOf) !== vocabularies)
    throw new Error('the 2020-12 meta-schema is not the allOf of the vocabularies this merge knows');
  const merged = { $id: META_2020, type: top.type, properties: {} as Obj, $defs: {} as Obj };
  for (const part of [top, ...META_VOCABULARIES.map((v) => load(`meta/${v}`))]) {
    const unknown = Object.keys(part).filter((k) => !META_FILE_KEYS.has(k));
    if (unknown.length > 0 || JSON.stringify(part.type) !== JSON.stringify(top.type))
      throw new Error(`the 2020-12 meta-schema ${String(part.$id)} has a shape this merge does not know`);
    for (const into of ['properties', '$defs'] as const) {
      const from = part[into];
      if (from === undefined) continue;
      if (!isObj(from)) throw new Error(`${String(part.$id)}: ${into} is not an object`);
      for (const [key, v] of Object.entries(from)) {
        if (Object.hasOwn(merged[into], key)) throw new Error(`the 2020-12 meta-schemas both define ${key}`);
        merged[into][key] = bind(v);
      }
    }
  }
  if (keywords === null) return merged;
  for (const keyword of keywords)
    if (!Object.hasOwn(merged.properties, keyword))
      throw new Error(`${keyword} is not a keyword of the 2020-12 meta-schema`);
  merged.properties = Object.fromEntries(Object.entries(merged.properties).filter(([k]) => keywords.has(k)));
  return merged;
}

/** The keys a 2020-12 meta-schema file may have for {@link mergedMetaSchema}. */
const META_FILE_KEYS = new Set([
  '$schema',
  '$id',
  '$vocabulary',
  '$dynamicAnchor',
  '$comment',
  'title',
  'type',
  'allOf',
  'properties',
  '$defs',
]);

/** One validator per keyword set (`null`: every keyword), made on first use. */
const metaValidators = new Map<ReadonlySet<string> | null, ValidateFunction>();

function metaValidator(keywords: ReadonlySet<string> | null): ValidateFunction {
  let validate = metaValidators.get(keywords);
  if (validate === undefined) {
    validate = new Ajv2020({
      strict: false,
      allErrors: false,
      validateFormats: false,
      logger: false,
      meta: false,
      validateSchema: false,
    }).compile(mergedMetaSchema(keywords));
    metaValidators.set(keywords, validate);
  }
  return validate;
}

/**
 * Reports `schema` unless it is valid JSON Schema 2020-12. With `keywords`, only those keywords'
 * values are judged (the meta-schema's `properties` cut to them; every other key passes): for a
 * checker that reports any other keyword as a violation of its own on every subschema it walks,
 * the verdict is the same at about half the cost (OpenAI strict mode, `openai.ts`). Pass a
 * module's constant set: one validator is made per set, by identity.
 */
export function checkMetaSchema(
  schema: unknown,
  rule: string,
  path: string,
  report: Report,
  keywords: ReadonlySet<string> | null = null,
): void {
  const validate = metaValidator(keywords);
  let valid: boolean;
  try {
    valid = validate(schema);
  } catch {
    valid = false;
  }
  if (!valid) {
    const error = validate.errors?.[0];
    const at = error?.instancePath ?? '';
    report.add(
      rule,
      path + at,
      `not a valid JSON Schema 2020-12: ${at || 'the root'} ${error?.message ?? 'is invalid'}`,
    );
  }
}
