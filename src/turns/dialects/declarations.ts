/**
 * A turn's tool list declared for one model API (pure, issue 26): each tool compiled (compile.ts)
 * and wrapped the way that API's request takes it, then checked by the dialect's own rules
 * (rules.ts, written from the providers' documentation apart from the compiler). A tool that
 * cannot be made valid, or that the check still refuses, is left out with a reason, never sent
 * broken: one bad tool never sinks a turn.
 *
 * Built-ins and `finish_turn` are compiled like every other tool. Where the API caps the number of
 * tools in one request (OpenAI Chat Completions: 128 functions), built-ins and `finish_turn` are
 * kept and the connection tools past the cap are left out, in declared order.
 */
import type { JsonObject } from '../../operations/types.js';
import type { DeclaredTool, DeclaredToolList } from '../declare.js';
import { compileSchema, type LeftOutCode } from './compile.js';
import type { ToolDialect } from './dialect.js';
import { checkDeclaration, checkListRules } from './rules.js';
import type { Shape } from './shape.js';

/** A tool as declared in one dialect. */
export interface DialectTool extends DeclaredTool {
  /** The tool exactly as the dialect's request takes it. */
  declaration: JsonObject;
}

export interface LeftOutTool {
  name: string;
  /** Null for built-ins and finish_turn. */
  operationKey: string | null;
  code: LeftOutCode;
  /** One line, for the runtime, the debugger and the operator. */
  reason: string;
}

/**
 * What was compiled from each input schema object, per dialect, name and description: the tool
 * cache hands out one object per distinct schema (by content), so an unchanged tool is compiled
 * and checked once, not again after every invalidation.
 */
export type CompileMemo = WeakMap<JsonObject, Map<string, Compiled>>;

type Compiled =
  | { ok: true; declaration: JsonObject; shape: Shape | null }
  | { ok: false; code: LeftOutCode; reason: string };

export interface DialectToolList {
  dialect: ToolDialect;
  /** Built-ins, then connection tools, then finish_turn: those that could be declared. */
  tools: DialectTool[];
  /** Declared name → operation id, for the declared connection tools. */
  map: Record<string, string>;
  /** Operation id → how its arguments map back (null: as they are). Declared tools only. */
  shapes: Map<string, Shape | null>;
  leftOut: LeftOutTool[];
}

/** The most tools one request takes, per dialect (docs/dialects.md). */
export const MAX_TOOLS: Readonly<Record<ToolDialect, number | null>> = {
  GENERIC: null,
  OPENAI: 128,
  OPENAI_STRICT: 128,
  ANTHROPIC: null,
  GEMINI: 128,
  GEMINI_JSON_SCHEMA: 128,
};

const PROVIDER: Readonly<Record<ToolDialect, string>> = {
  GENERIC: 'this API',
  OPENAI: 'OpenAI',
  OPENAI_STRICT: 'OpenAI',
  ANTHROPIC: 'Anthropic',
  GEMINI: 'Gemini',
  GEMINI_JSON_SCHEMA: 'Gemini',
};

/** The tool as `dialect`'s request takes it, from its compiled schema. */
export function wrapDeclaration(
  dialect: ToolDialect,
  tool: { name: string; description: string },
  schema: JsonObject | null,
): JsonObject {
  const out: JsonObject = { name: tool.name };
  if (tool.description !== '') out.description = tool.description;
  switch (dialect) {
    case 'GENERIC':
      return { name: tool.name, description: tool.description, inputSchema: schema ?? {} };
    case 'OPENAI':
    case 'OPENAI_STRICT': {
      const fn: JsonObject = { ...out, parameters: schema ?? { type: 'object', properties: {} } };
      if (dialect === 'OPENAI_STRICT') fn.strict = true;
      return { type: 'function', function: fn };
    }
    case 'ANTHROPIC':
      out.input_schema = schema ?? { type: 'object', properties: {} };
      return out;
    case 'GEMINI':
      if (schema !== null) out.parameters = schema;
      return out;
    case 'GEMINI_JSON_SCHEMA':
      out.parametersJsonSchema = schema ?? { type: 'object', properties: {} };
      return out;
  }
}

/** One tool compiled and checked, or why it cannot be declared; memoized by its schema object. */
function compileTool(dialect: Exclude<ToolDialect, 'GENERIC'>, t: DeclaredTool, memo: CompileMemo): Compiled {
  let bySchema = memo.get(t.inputSchema);
  if (!bySchema) {
    bySchema = new Map();
    memo.set(t.inputSchema, bySchema);
  }
  const key = `${dialect}\u0000${t.name}\u0000${t.description}`;
  const hit = bySchema.get(key);
  if (hit) return hit;
  let out: Compiled;
  const compiled = compileSchema(dialect, t.inputSchema);
  if (!compiled.ok) out = compiled;
  else {
    const declaration = wrapDeclaration(dialect, t, compiled.schema);
    const violations = checkDeclaration(dialect, declaration);
    if (violations.length === 0) out = { ok: true, declaration, shape: compiled.shape };
    else {
      const first = violations[0]!;
      out = {
        ok: false,
        code: 'RULE_VIOLATION',
        reason: `${PROVIDER[dialect]} would refuse it: ${first.message}${first.path ? ` (at ${first.path})` : ''} [${first.rule}]${violations.length > 1 ? ` and ${violations.length - 1} more` : ''}`,
      };
    }
  }
  bySchema.set(key, out);
  return out;
}

/**
 * Compiles a turn's declared list for `dialect`. `keyOf` gives an operation id's key (for the
 * left-out list). `cap`: the most tools kept, the dialect's own by default; null keeps every tool
 * that compiles (tool search, src/turns/search/: found tools are declared a few at a time).
 */
export function compileToolList(
  dialect: ToolDialect,
  list: DeclaredToolList,
  keyOf: (operationId: string) => string | null,
  memo: CompileMemo = new WeakMap(),
  cap: number | null = MAX_TOOLS[dialect],
): DialectToolList {
  const operationOf = new Map<string, string>();
  for (const name in list.map) operationOf.set(name, list.map[name]!);
  if (dialect === 'GENERIC') return genericList(list, operationOf);

  const out: DialectToolList = {
    dialect,
    tools: [],
    map: Object.create(null) as Record<string, string>,
    shapes: new Map<string, Shape | null>(),
    leftOut: [],
  };
  const accepted: Accepted[] = [];
  for (const t of list.tools) {
    const operationId = operationOf.get(t.name);
    const compiled = compileTool(dialect, t, memo);
    if (!compiled.ok) {
      const operationKey = operationId === undefined ? null : keyOf(operationId);
      out.leftOut.push({ name: t.name, operationKey, code: compiled.code, reason: compiled.reason });
      continue;
    }
    accepted.push({ tool: { ...t, declaration: compiled.declaration }, operationId, shape: compiled.shape });
  }
  keepWithinCap(out, accepted, cap, keyOf);
  leaveOutListViolations(out, operationOf, keyOf);
  return out;
}

/** GENERIC: every tool as it is (never compiled, never left out). */
function genericList(list: DeclaredToolList, operationOf: ReadonlyMap<string, string>): DialectToolList {
  const tools: DialectTool[] = [];
  const shapes = new Map<string, Shape | null>();
  const map = Object.create(null) as Record<string, string>;
  for (const t of list.tools) {
    tools.push({ ...t, declaration: wrapDeclaration('GENERIC', t, t.inputSchema) });
    const id = operationOf.get(t.name);
    if (id !== undefined) {
      map[t.name] = id;
      shapes.set(id, null);
    }
  }
  return { dialect: 'GENERIC', tools, map, shapes, leftOut: [] };
}

interface Accepted {
  tool: DialectTool;
  operationId: string | undefined;
  shape: Shape | null;
}

/** The compiled tools into `out`: built-ins always, connection tools up to `cap`, in order. */
function keepWithinCap(
  out: DialectToolList,
  accepted: readonly Accepted[],
  cap: number | null,
  keyOf: (operationId: string) => string | null,
): void {
  let room = cap === null ? Infinity : cap - accepted.filter((a) => a.operationId === undefined).length;
  for (const a of accepted) {
    if (a.operationId !== undefined) {
      if (room <= 0) {
        out.leftOut.push({
          name: a.tool.name,
          operationKey: keyOf(a.operationId),
          code: 'TOOL_LIMIT',
          reason: `${PROVIDER[out.dialect]} takes at most ${cap} tools in one request`,
        });
        continue;
      }
      room--;
      out.map[a.tool.name] = a.operationId;
      out.shapes.set(a.operationId, a.shape);
    }
    out.tools.push(a.tool);
  }
}

/**
 * The list as a whole must pass too (each tool passed on its own when compiled, see compileTool);
 * a violation here is a bug of ours, never a broken request: the tools it names are left out.
 */
function leaveOutListViolations(
  out: DialectToolList,
  operationOf: ReadonlyMap<string, string>,
  keyOf: (operationId: string) => string | null,
): void {
  const { dialect, tools, map, shapes, leftOut } = out;
  const listViolations = checkListRules(
    dialect,
    tools.map((t) => t.declaration),
  );
  if (listViolations.length === 0) return;
  const bad = new Set(listViolations.map((v) => v.tool).filter((n): n is string => n !== null));
  for (let i = tools.length - 1; i >= 0; i--) {
    const t = tools[i]!;
    if (!bad.has(t.name)) continue;
    const v = listViolations.find((x) => x.tool === t.name)!;
    const id = operationOf.get(t.name);
    leftOut.push({
      name: t.name,
      operationKey: id === undefined ? null : keyOf(id),
      code: 'RULE_VIOLATION',
      reason: `${PROVIDER[dialect]} would refuse it: ${v.message} [${v.rule}]`,
    });
    tools.splice(i, 1);
    if (id !== undefined) {
      delete map[t.name];
      shapes.delete(id);
    }
  }
}
