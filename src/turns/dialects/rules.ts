/**
 * The validator of tool declarations, one rule set per model API (pure: no I/O, no clock), issue 26
 * item 7. It is written from the providers' own documentation (`docs/dialects.md` has one row per
 * rule with its source) and deliberately shares no code with the compiler in this folder: it is the
 * independent check that what we declare is what each API accepts.
 *
 * Where a provider's documentation is silent or ambiguous the rule is the conservative reading (it
 * refuses more than the provider might), and the table says so. Every violation names its rule id,
 * the JSON Pointer of the offending value inside the declaration, and what is wrong.
 *
 * Declarations are untrusted data: the walk is bounded in depth ({@link MAX_WALK_DEPTH}) and in work
 * ({@link MAX_WALK_NODES}), never follows a `$ref` out of the schema, and never throws.
 *
 * This module is the entry point (a declaration, a list, the ids of a dialect's rules); the rest
 * lives in `rules/`: the rules table, name patterns and limits (`table.ts`), what every checker
 * shares (`common.ts`), the bounded schema walk and local `$ref`s (`walk.ts`), and one checker per
 * API (`generic.ts`, `openai.ts` with strict mode, `anthropic.ts`, `gemini.ts` with
 * `parametersJsonSchema`). The table and its limits are re-exported here.
 */
import type { ToolDialect } from './dialect.js';
import { checkAnthropic } from './rules/anthropic.js';
import { checkJson, isObj, type Obj, quote, Report, seg } from './rules/common.js';
import { checkGemini, checkGeminiJson } from './rules/gemini.js';
import { checkGeneric } from './rules/generic.js';
import { checkOpenAi } from './rules/openai.js';
import {
  COMMON_NAME_PATTERN,
  DIALECT_RULES,
  GEMINI_BOTH,
  GEMINI_MAX_TOOLS,
  OPENAI_MAX_TOOLS,
  type RuleViolation,
} from './rules/table.js';

export type { DialectRule, RuleViolation } from './rules/table.js';
export {
  ANTHROPIC_NAME_PATTERN,
  ANTHROPIC_PROPERTY_KEY_PATTERN,
  COMMON_NAME_PATTERN,
  DIALECT_RULES,
  GEMINI_MAX_TOOLS,
  GEMINI_NAME_PATTERN,
  GEMINI_PROPERTY_NAME_PATTERN,
  MAX_WALK_DEPTH,
  MAX_WALK_NODES,
  OPENAI_MAX_TOOLS,
  OPENAI_NAME_PATTERN,
  OPENAI_STRICT_LARGE_ENUM_CHARS,
  OPENAI_STRICT_LARGE_ENUM_VALUES,
  OPENAI_STRICT_MAX_DEPTH,
  OPENAI_STRICT_MAX_ENUM_VALUES,
  OPENAI_STRICT_MAX_PROPERTIES,
  OPENAI_STRICT_MAX_STRING_CHARS,
} from './rules/table.js';

function nameOf(dialect: ToolDialect, decl: Obj): string | null {
  const name =
    dialect === 'OPENAI' || dialect === 'OPENAI_STRICT'
      ? isObj(decl.function)
        ? decl.function.name
        : undefined
      : decl.name;
  return typeof name === 'string' ? name : null;
}

/** Violations of one declaration (the object a runtime appends to that API's tools array). */
export function checkDeclaration(dialect: ToolDialect, declaration: unknown): RuleViolation[] {
  if (!isObj(declaration)) {
    const report = new Report(null);
    report.add('common.declaration.json', '', 'the declaration is not a JSON object');
    return report.violations;
  }
  const name = nameOf(dialect, declaration);
  const report = new Report(name);
  if (!checkJson(declaration, '', report)) return report.violations;
  if (name === null || !COMMON_NAME_PATTERN.test(name))
    report.add(
      'common.name',
      dialect === 'OPENAI' || dialect === 'OPENAI_STRICT' ? '/function/name' : '/name',
      `the name ${quote(name)} does not match ${String(COMMON_NAME_PATTERN)}`,
    );
  switch (dialect) {
    case 'GENERIC':
      checkGeneric(declaration, report);
      break;
    case 'OPENAI':
    case 'OPENAI_STRICT':
      checkOpenAi(declaration, dialect === 'OPENAI_STRICT', report);
      break;
    case 'ANTHROPIC':
      checkAnthropic(declaration, report);
      break;
    case 'GEMINI':
      checkGemini(declaration, report);
      break;
    case 'GEMINI_JSON_SCHEMA':
      checkGeminiJson(declaration, report);
      break;
  }
  return report.violations;
}

/** Violations of a whole tools array: list rules (max count, unique names) plus each declaration's. */
export function checkDeclarationList(
  dialect: ToolDialect,
  declarations: readonly unknown[],
): RuleViolation[] {
  return listViolations(dialect, declarations, true);
}

/**
 * Only the rules of the list as a whole (how many tools, unique names), for a list whose every
 * declaration already passed {@link checkDeclaration} on its own: the compiler checks each tool
 * once, when it is compiled, and not again for each list it is in.
 */
export function checkListRules(dialect: ToolDialect, declarations: readonly unknown[]): RuleViolation[] {
  return listViolations(dialect, declarations, false);
}

function listViolations(
  dialect: ToolDialect,
  declarations: readonly unknown[],
  each: boolean,
): RuleViolation[] {
  const out: RuleViolation[] = [];
  const max =
    dialect === 'OPENAI' || dialect === 'OPENAI_STRICT'
      ? OPENAI_MAX_TOOLS
      : GEMINI_BOTH.includes(dialect)
        ? GEMINI_MAX_TOOLS
        : null;
  if (max !== null && declarations.length > max)
    out.push({
      tool: null,
      path: '',
      rule: dialect.startsWith('OPENAI') ? 'openai.list.max' : 'gemini.list.max',
      message: `${declarations.length} declarations, over the ${max} the API takes`,
    });
  const seen = new Set<string>();
  declarations.forEach((declaration, i) => {
    if (each)
      for (const v of checkDeclaration(dialect, declaration)) out.push({ ...v, path: seg(i) + v.path });
    const name = isObj(declaration) ? nameOf(dialect, declaration) : null;
    if (name === null) return;
    if (seen.has(name))
      out.push({
        tool: name,
        path: seg(i),
        rule: 'common.list.unique-names',
        message: `the name ${quote(name)} is declared twice`,
      });
    seen.add(name);
  });
  return out;
}

/** The ids of the rules that apply to a dialect. */
export function rulesOf(dialect: ToolDialect): string[] {
  return DIALECT_RULES.filter((r) => r.dialects.includes(dialect)).map((r) => r.id);
}
