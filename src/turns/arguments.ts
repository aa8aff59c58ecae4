/**
 * Checks a model's arguments against an operation's input schema before any request (pure).
 *
 * The rules (issue 14, item 3):
 * - Only what the schema states is enforced: `required`, `type`, `enum`/`const`, bounds, lengths,
 *   `multipleOf`, `uniqueItems`, `pattern`, nested objects and arrays, `additionalProperties`, and
 *   the `format`s of {@link CHECKED_FORMATS} as JSON Schema defines them (ajv-formats, full mode).
 *   Another `format` is not checked. So what a dialect only describes (issue 26: `format: email`
 *   in a Gemini description) is still enforced here, on the canonical schema.
 * - The arguments are never changed: no coercion, no defaults, no removal. What passes is sent
 *   exactly as the model wrote it.
 * - A schema is compiled once per operation (the tool cache keeps the result). A schema that does
 *   not compile (unknown draft, invalid keyword values, unresolvable `$ref`) makes the operation's
 *   calls refused with a message saying so; it is never an internal error.
 * - Hostile schemas are bounded: a schema over `MAX_SCHEMA_CHARS` is not compiled, `$ref`s are
 *   never inlined (compiled code grows linearly with the schema), remote `$ref`s are never
 *   loaded, and `pattern` runs on a linear-time engine (RE2); a pattern that engine cannot run
 *   (lookaround, backreferences) is left unchecked rather than run on a backtracking engine.
 *   The format checks are fixed expressions (not the server's), and run on at most
 *   {@link MAX_FORMAT_CHARS} characters of the model's string: a longer string fails its format,
 *   except a URI (which may be that long), which is then not checked.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { RE2JS } from 're2js';
import type { JsonObject } from '../operations/types.js';

/** The longest schema (serialized JSON characters) that is compiled. */
export const MAX_SCHEMA_CHARS = 256 * 1024; // 256 K characters
/** Problems named in one refusal; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 10;
/** Characters of a field path or enum list quoted in a message. */
const QUOTE_CHARS = 80;

/** The outcome of compiling one operation's input schema. */
export type ArgumentCheck =
  | { ok: true; validate: (args: unknown) => ArgumentVerdict }
  /** `reason` is one line for the model and the records. */
  | { ok: false; reason: string };

export type ArgumentVerdict = { ok: true } | { ok: false; problems: string[] };

/**
 * RE2 behind Ajv's `RegExpEngine` interface. A pattern RE2 cannot parse matches everything: it
 * stays unchecked instead of running on a backtracking engine with a model-chosen input.
 */
const re2Engine = Object.assign(
  (pattern: string, _flags: string): { test: (s: string) => boolean; toString: () => string } => {
    // Ajv keys compiled patterns by `toString()`: it must differ per pattern.
    const toString = (): string => `/${pattern}/re2`;
    try {
      const re = RE2JS.compile(pattern);
      return { test: (s: string) => re.test(s), toString };
    } catch {
      return { test: () => true, toString };
    }
  },
  { code: 're2js' },
);

/** The `format` values checked (JSON Schema 2020-12 §7.3), as ajv-formats' full mode defines them. */
export const CHECKED_FORMATS = [
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'uuid',
] as const;

/** The longest string a format is checked on (every checked format but a URI is far shorter). */
export const MAX_FORMAT_CHARS = 2_048;

/** A format check that looks at no more than {@link MAX_FORMAT_CHARS} characters. */
function boundedFormat(name: (typeof CHECKED_FORMATS)[number]): (s: string) => boolean {
  // ajv-formats defines a format as a RegExp, a function, or { validate: either }.
  const def = fullFormats[name] as unknown;
  const inner =
    typeof def === 'object' && def !== null && !(def instanceof RegExp)
      ? (def as { validate: unknown }).validate
      : def;
  const test = inner instanceof RegExp ? (s: string) => inner.test(s) : (inner as (s: string) => boolean);
  const overLimit = name === 'uri' || name === 'uri-reference';
  return (s) => (s.length > MAX_FORMAT_CHARS ? overLimit : test(s));
}

const FORMATS = Object.fromEntries(
  CHECKED_FORMATS.map((name) => [name, { type: 'string' as const, validate: boundedFormat(name) }]),
);

const OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: true,
  formats: FORMATS,
  // Never change the data: these are Ajv's defaults, stated so that a change of default cannot slip in.
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  inlineRefs: false,
  addUsedSchema: false,
  logger: false,
  messages: true,
  code: { regExp: re2Engine, optimize: false },
};

type Dialect = 'draft-07' | '2019-09' | '2020-12';

/** The draft named by `$schema`; none named means 2020-12, the MCP default since 2025-11-25. */
function dialectOf(schema: JsonObject): Dialect | { unknown: string } {
  const id = schema.$schema;
  if (id === undefined) return '2020-12';
  if (typeof id !== 'string') return { unknown: typeof id };
  if (/json-schema\.org\/(draft-0[467])\/schema#?$/.test(id)) return 'draft-07';
  if (/json-schema\.org\/draft\/2019-09\/schema#?$/.test(id)) return '2019-09';
  if (/json-schema\.org\/draft\/2020-12\/schema#?$/.test(id)) return '2020-12';
  return { unknown: id.slice(0, QUOTE_CHARS) };
}

/**
 * One Ajv per dialect, made on first use: its meta-schema is compiled once (about 100 ms). Each
 * compiled schema is removed from it right away (`addUsedSchema: false` keeps ids of different
 * operations apart, `removeSchema` keeps Ajv's cache from holding every schema ever compiled); the
 * validate function stands on its own.
 */
const instances = new Map<Dialect, Ajv>();

function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    ajv =
      dialect === 'draft-07'
        ? new Ajv(OPTIONS)
        : dialect === '2019-09'
          ? new Ajv2019(OPTIONS)
          : new Ajv2020(OPTIONS);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** Compiles an operation's input schema. Never throws. */
export function compileArguments(schema: JsonObject): ArgumentCheck {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return { ok: false, reason: 'its input schema cannot be read' };
  }
  if (text.length > MAX_SCHEMA_CHARS) {
    return {
      ok: false,
      reason: `its input schema is ${text.length} characters, over the ${MAX_SCHEMA_CHARS} the platform checks`,
    };
  }
  const dialect = dialectOf(schema);
  if (typeof dialect === 'object') {
    return { ok: false, reason: `its input schema names an unknown JSON Schema draft (${dialect.unknown})` };
  }
  let validate: ValidateFunction;
  try {
    // A draft-04/06 `$schema` is not registered in a draft-07 Ajv: check against draft-07's own.
    const own =
      dialect === 'draft-07' ? { ...schema, $schema: 'http://json-schema.org/draft-07/schema#' } : schema;
    const ajv = ajvFor(dialect);
    try {
      validate = ajv.compile(own);
    } finally {
      ajv.removeSchema(own);
    }
  } catch (err) {
    return { ok: false, reason: `its input schema is invalid (${oneLine((err as Error).message)})` };
  }
  return {
    ok: true,
    validate: (args) => {
      if (validate(args)) return { ok: true };
      return { ok: false, problems: describeErrors(validate.errors ?? [], args) };
    },
  };
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text);
}

/** `/items/0/name` → `items[0].name`; the root is `the arguments`. */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath === '' ? [] : instancePath.slice(1).split('/');
  if (child !== undefined) parts.push(child);
  if (parts.length === 0) return '';
  let out = '';
  for (const raw of parts) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function valueAt(root: unknown, instancePath: string): unknown {
  if (instancePath === '') return root;
  let node = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function listValues(values: unknown): string {
  if (!Array.isArray(values)) return '';
  const shown = values.slice(0, 10).map((v) => (typeof v === 'string' ? quote(v) : JSON.stringify(v)));
  return shown.join(', ') + (values.length > 10 ? `, … (${values.length} in all)` : '');
}

/**
 * One line per problem, naming the field and what was expected. The model's own values are not
 * repeated (they may be long), only their types.
 */
export function describeErrors(errors: readonly ErrorObject[], args?: unknown): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  const push = (line: string): void => {
    if (seen.has(line)) return;
    seen.add(line);
    lines.push(line);
  };
  for (const e of errors) {
    // `if`/`then`, `anyOf` and friends report their branches' errors too; the branch errors are the useful ones.
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      const at = fieldPath(e.instancePath);
      push(
        `${at === '' ? 'the arguments' : quote(at)} must match ${e.keyword === 'oneOf' ? 'exactly one' : 'one'} of the shapes the schema allows`,
      );
      continue;
    }
    const at = fieldPath(e.instancePath);
    const field = at === '' ? 'the arguments' : quote(at);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        push(`${quote(fieldPath(e.instancePath, String(p.missingProperty)))} is required`);
        break;
      case 'additionalProperties':
        push(
          `${quote(fieldPath(e.instancePath, String(p.additionalProperty)))} is not an argument of this tool`,
        );
        break;
      case 'type': {
        const expected = Array.isArray(p.type) ? p.type.join(' or ') : String(p.type);
        const got = args === undefined ? null : typeName(valueAt(args, e.instancePath));
        const hint = got === 'null' ? '; leave it out when there is no value' : '';
        push(`${field} must be ${expected}${got ? `, got ${got}` : ''}${hint}`);
        break;
      }
      case 'enum':
        push(`${field} must be one of ${listValues(p.allowedValues)}`);
        break;
      case 'const':
        push(`${field} must be ${JSON.stringify(p.allowedValue)}`);
        break;
      case 'format':
        push(`${field} must match format: ${String(p.format)}`);
        break;
      default:
        push(`${field} ${oneLine(e.message ?? `fails "${e.keyword}"`)}`);
    }
  }
  return lines;
}

/** The refusal given to the model when the arguments do not match. */
export function rejectionMessage(tool: string, problems: readonly string[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  const more = problems.length - listed.length;
  return (
    `The call to ${tool} was not made: its arguments do not match the tool's input schema. ` +
    `${listed.join('; ')}${more > 0 ? `; and ${more} more problem${more > 1 ? 's' : ''}` : ''}. ` +
    'Fix these arguments and call the tool again.'
  );
}

/** The refusal given when the operation's own schema cannot be checked. */
export function uncheckableMessage(tool: string, reason: string): string {
  return (
    `The call to ${tool} was not made: ${reason}, so the platform cannot check arguments for it. ` +
    'Trying again will not help; carry on without this tool and tell the customer the team will check.'
  );
}
