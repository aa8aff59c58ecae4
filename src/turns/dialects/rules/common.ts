/**
 * What every dialect's checker shares (pure: no I/O): the {@link Report} violations are added to,
 * JSON Pointer segments and quoting for messages, and the checks of a declaration's own fields (its
 * keys, name and description, that it is plain JSON, that a schema passes the JSON Schema 2020-12
 * meta-schema). Part of the validator (`../rules.ts`), which shares no code with the compiler.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
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

/** Whether the value survives JSON as it is: plain objects, arrays, strings, finite numbers, booleans, null. */
export function checkJson(
  value: unknown,
  path: string,
  report: Report,
  seen: Set<unknown>,
  level: number,
): boolean {
  // The path below `path` is kept as a trail of keys and written out only for a report.
  const trail: (string | number)[] = [];
  const at = () => path + trail.map(seg).join('');
  const go = (v: unknown, depth: number): boolean => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) return true;
      report.add('common.declaration.json', at(), `${String(v)} is not a JSON number`);
      return false;
    }
    if (typeof v !== 'object') {
      report.add('common.declaration.json', at(), `a ${typeof v} is not a JSON value`);
      return false;
    }
    if (seen.has(v)) {
      report.add('common.declaration.json', at(), 'the value contains itself');
      return false;
    }
    if (depth > MAX_WALK_DEPTH * 4) {
      report.add('common.declaration.json', at(), `the value nests deeper than ${MAX_WALK_DEPTH * 4} levels`);
      return false;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      report.add('common.declaration.json', at(), 'the value is not a plain object');
      return false;
    }
    seen.add(v);
    let ok = true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && ok; i++) {
        trail.push(i);
        ok = go(v[i] as unknown, depth + 1);
        trail.pop();
      }
    } else {
      const obj = v as Record<string, unknown>;
      for (const key in obj) {
        if (!Object.hasOwn(obj, key)) continue;
        trail.push(key);
        ok = go(obj[key], depth + 1);
        trail.pop();
        if (!ok) break;
      }
    }
    seen.delete(v);
    return ok;
  };
  return go(value, level);
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
let metaAjv: Ajv2020 | null = null;

export function checkMetaSchema(schema: unknown, rule: string, path: string, report: Report): void {
  metaAjv ??= new Ajv2020({ strict: false, allErrors: false, validateFormats: false, logger: false });
  const validate = metaAjv.getSchema(META_2020);
  if (!validate) return report.add(rule, path, 'the JSON Schema 2020-12 meta-schema is not available');
  let valid: boolean;
  try {
    valid = validate(schema) as boolean;
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
