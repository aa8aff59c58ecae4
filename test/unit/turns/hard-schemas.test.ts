/**
 * The hard-case tools of `test/support/hard-schema-server.ts` (issue 26 item 7), without a server:
 * discovery keeps every one, each example passes the canonical argument check, and each schema,
 * passed through to a model API unchanged, breaks exactly the rules it is there to exercise.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_DEFINITION_BYTES, mapTool } from '../../../src/mcp/tool-mapping.js';
import type { JsonObject } from '../../../src/operations/types.js';
import { compileArguments } from '../../../src/turns/arguments.js';
import { TOOL_DIALECTS, type ToolDialect } from '../../../src/turns/dialects/dialect.js';
import { checkDeclaration } from '../../../src/turns/dialects/rules.js';
import { HARD_TOOLS, type HardTool } from '../../support/hard-schema-server.js';

function tool(name: string): HardTool {
  const found = HARD_TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no hard tool ${name}`);
  return found;
}

/** The upstream schema as it is, in the declaration shape of each API: what a gateway passing it through sends. */
function passThrough(dialect: ToolDialect, t: HardTool): JsonObject {
  const { name, description, inputSchema } = t;
  switch (dialect) {
    case 'GENERIC':
      return { name, description, inputSchema };
    case 'OPENAI':
      return { type: 'function', function: { name, description, parameters: inputSchema } };
    case 'OPENAI_STRICT':
      return { type: 'function', function: { name, description, parameters: inputSchema, strict: true } };
    case 'ANTHROPIC':
      return { name, description, input_schema: inputSchema };
    case 'GEMINI':
      return { name, description, parameters: inputSchema };
    case 'GEMINI_JSON_SCHEMA':
      return { name, description, parametersJsonSchema: inputSchema };
  }
}

function rulesBroken(dialect: ToolDialect, name: string): string[] {
  return [...new Set(checkDeclaration(dialect, passThrough(dialect, tool(name))).map((v) => v.rule))].sort();
}

describe('HARD_TOOLS', () => {
  it('has unique names and at least one case per tool', () => {
    expect(new Set(HARD_TOOLS.map((t) => t.name)).size).toBe(HARD_TOOLS.length);
    for (const t of HARD_TOOLS) expect(t.cases.length).toBeGreaterThan(0);
  });

  it.each(HARD_TOOLS)('discovery keeps $name as listed', (t) => {
    const raw = { name: t.name, description: t.description, inputSchema: t.inputSchema };
    expect(Buffer.byteLength(JSON.stringify(raw))).toBeLessThan(MAX_TOOL_DEFINITION_BYTES);
    const mapped = mapTool(raw);
    expect(mapped.ok).toBe(true);
    if (mapped.ok) expect(mapped.tool.inputSchema).toEqual(t.inputSchema);
  });

  it.each(HARD_TOOLS)('the example of $name passes the canonical argument check', (t) => {
    const check = compileArguments(t.inputSchema);
    if (!check.ok) throw new Error(check.reason);
    expect(check.validate(t.example)).toEqual({ ok: true });
  });

  it('the plain tool passes through unchanged in every dialect but OPENAI_STRICT', () => {
    for (const dialect of TOOL_DIALECTS.filter((d) => d !== 'OPENAI_STRICT'))
      expect(rulesBroken(dialect, 'get_time'), dialect).toEqual([]);
    expect(rulesBroken('OPENAI_STRICT', 'get_time')).toEqual(['openai.strict.additional-properties']);
  });

  // Each hard case, passed through unchanged, is refused where the issue says it is.
  it.each([
    ['create_order', 'OPENAI_STRICT', 'openai.strict.ref-siblings'],
    ['create_order', 'OPENAI_STRICT', 'openai.strict.keyword'],
    ['create_order', 'GEMINI', 'gemini.schema.field'],
    ['create_order', 'GEMINI_JSON_SCHEMA', 'gemini-json.schema.ref-siblings'],
    ['walk_tree', 'GEMINI', 'gemini.schema.field'],
    ['find_user', 'ANTHROPIC', 'anthropic.input-schema.root-composition'],
    ['send_message', 'ANTHROPIC', 'anthropic.input-schema.root-composition'],
    ['send_message', 'OPENAI_STRICT', 'openai.strict.root-any-of'],
    ['merge_settings', 'ANTHROPIC', 'anthropic.input-schema.root-composition'],
    ['tag_items', 'OPENAI', 'openai.schema.array-items'],
    ['tag_items', 'GEMINI', 'gemini.schema.array-items'],
    ['tag_items', 'GEMINI', 'gemini.schema.object-properties'],
    ['set_level', 'GEMINI', 'gemini.schema.enum'],
    ['pin_version', 'GEMINI', 'gemini.schema.field'],
    ['pin_version', 'GEMINI_JSON_SCHEMA', 'gemini-json.schema.keyword'],
    ['transfer', 'GEMINI', 'gemini.schema.field'],
    ['transfer', 'OPENAI_STRICT', 'openai.strict.keyword'],
    ['sort_rows', 'GEMINI', 'gemini.schema.enum'],
    ['sort_rows', 'GEMINI_JSON_SCHEMA', 'gemini-json.schema.enum'],
    ['query_odd_names', 'ANTHROPIC', 'anthropic.schema.property-key'],
    ['query_odd_names', 'GEMINI', 'gemini.schema.property-name'],
    ['pick_country', 'OPENAI_STRICT', 'openai.strict.large-enum'],
    ['deep_config', 'OPENAI_STRICT', 'openai.strict.depth'],
    ['wide_report', 'OPENAI_STRICT', 'openai.strict.properties-total'],
    ['2fa_verify', 'GENERIC', 'common.name'],
    ['2fa_verify', 'GEMINI', 'gemini.name'],
    ['fastmcp_search', 'GEMINI', 'gemini.schema.field'],
    ['fastmcp_search', 'OPENAI_STRICT', 'openai.strict.required-all'],
    ['keyword_soup', 'GEMINI_JSON_SCHEMA', 'gemini-json.schema.keyword'],
    ['keyword_soup', 'OPENAI_STRICT', 'openai.strict.keyword'],
  ] as const)('%s passed through to %s breaks %s', (name, dialect, rule) => {
    expect(rulesBroken(dialect, name)).toContain(rule);
  });
});
