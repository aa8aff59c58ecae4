/**
 * Tool search in a turn (pure, issue 31): when it applies, and the list a turn declares when it
 * does. The ranking itself is ./index.ts; the search call and its records are ./tool-search.ts.
 *
 * - When: `mode` OFF never, ON always, AUTO (the default) when the tools the dialect can take
 *   exceed its tool cap (MAX_TOOLS, or TOOL_SEARCH_AUTO_TOOLS) or their declared schemas exceed
 *   TOOL_SEARCH_AUTO_BYTES.
 * - What (provider SERVICE, the default): the built-ins, `search_tools`, up to `declare` of the
 *   operations an operator marked "always declare" (in declared order), and `finish_turn` last.
 *   Every other tool is reached through `search_tools`.
 * - What (provider ANTHROPIC, dialect ANTHROPIC only): every tool, the ones not declared up front
 *   with `defer_loading: true`, plus Anthropic's own BM25 tool search tool, as documented at
 *   https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool (requests need
 *   the `advanced-tool-use-2025-11-20` beta header; Anthropic searches, the model calls found tools
 *   by name as usual, and callTool re-checks both gates as for every tool).
 */
import type { ToolSearchConfig } from '../../config.js';
import type { JsonObject } from '../../operations/types.js';
import { FINISH_TURN, type DeclaredTool } from '../declare.js';
import {
  compileToolList,
  MAX_TOOLS,
  type CompileMemo,
  type DialectTool,
  type DialectToolList,
} from '../dialects/declarations.js';
import type { ToolDialect } from '../dialects/dialect.js';
import type { Shape } from '../dialects/shape.js';

export const TOOL_SEARCH_MODES = ['OFF', 'ON', 'AUTO'] as const;
export type ToolSearchMode = (typeof TOOL_SEARCH_MODES)[number];
export const TOOL_SEARCH_PROVIDERS = ['SERVICE', 'ANTHROPIC'] as const;
export type ToolSearchProvider = (typeof TOOL_SEARCH_PROVIDERS)[number];

export interface ToolSearchInput {
  mode?: ToolSearchMode | null;
  /** Connection tools declared up front; null: TOOL_SEARCH_DECLARE. */
  declare?: number | null;
  provider?: ToolSearchProvider | null;
}

/** What a turn does about search, decided at beginTurn. */
export type SearchChoice = { on: false } | { on: true; provider: ToolSearchProvider; declare: number };

/** The name of the service's search tool; reserved, like finish_turn. */
export const SEARCH_TOOLS_NAME = 'search_tools';

/** Anthropic's server-side BM25 tool search tool (see the module comment for the page). */
export const ANTHROPIC_SEARCH_TOOL: Readonly<JsonObject> = Object.freeze({
  type: 'tool_search_tool_bm25_20251119',
  name: 'tool_search_tool_bm25',
});

/** The `search_tools` tool, with the bounds of this deployment. */
export function searchToolsTool(config: ToolSearchConfig): DeclaredTool {
  return {
    name: SEARCH_TOOLS_NAME,
    description:
      "Find the tools for a task. Most of this assistant's tools are not listed here: describe what you need " +
      '(for example "refund the last charge of a customer") and the best matching tools are returned with their ' +
      'declarations; they can be called in this turn right away. Search again with other words if none fits.',
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'What you want to do, in a few words.',
          maxLength: config.maxQueryChars,
        },
        limit: {
          type: 'integer',
          description: `How many tools to return (1–${config.maxLimit}, default ${config.defaultLimit}).`,
          minimum: 1,
          maximum: config.maxLimit,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

/** UTF-8 bytes of the declarations of a list, as they would be sent. */
export function declaredBytes(tools: readonly { declaration: JsonObject }[]): number {
  let n = 0;
  for (const t of tools) n += Buffer.byteLength(JSON.stringify(t.declaration), 'utf8');
  return n;
}

/**
 * Whether search applies. `full`: every tool the dialect can take, uncapped; `bytes`: its
 * declared bytes. Throws a message (for BAD_USER_INPUT) for a provider the dialect cannot use.
 */
export function chooseSearch(
  input: ToolSearchInput | null | undefined,
  dialect: ToolDialect,
  full: { connectionTools: number; otherTools: number; bytes: number },
  config: ToolSearchConfig,
): SearchChoice | string {
  const mode = input?.mode ?? 'AUTO';
  const provider = input?.provider ?? 'SERVICE';
  if (provider === 'ANTHROPIC' && dialect !== 'ANTHROPIC')
    return 'toolSearch.provider ANTHROPIC needs dialect ANTHROPIC';
  const declare = input?.declare ?? config.declare;
  if (!Number.isInteger(declare) || declare < 0 || declare > 1_000)
    return 'toolSearch.declare must be an integer from 0 to 1000';
  if (mode === 'OFF') return { on: false };
  if (mode === 'ON') return { on: true, provider, declare };
  const cap = config.autoTools ?? (MAX_TOOLS[dialect] === null ? null : MAX_TOOLS[dialect] - full.otherTools);
  const over = (cap !== null && full.connectionTools > cap) || full.bytes > config.autoBytes;
  return over ? { on: true, provider, declare } : { on: false };
}

/** A stable key of a choice, for the per-entry memo of prepared turns. */
export function choiceKey(choice: SearchChoice): string {
  return choice.on ? `${choice.provider}:${choice.declare}` : 'off';
}

/**
 * The list a search turn declares, from the dialect's full (uncapped) list. `alwaysDeclare` says
 * which operation ids an operator marked; `searchTool` is `search_tools` (SERVICE).
 */
export function searchToolList(
  full: DialectToolList,
  choice: Extract<SearchChoice, { on: true }>,
  alwaysDeclare: (operationId: string) => boolean,
  searchTool: DeclaredTool,
  memo: CompileMemo,
): DialectToolList {
  const operationOf = new Map<string, string>();
  for (const name in full.map) operationOf.set(name, full.map[name]!);
  const builtIns: DialectTool[] = [];
  const upFront: DialectTool[] = [];
  const deferred: DialectTool[] = [];
  let finish: DialectTool | null = null;
  for (const t of full.tools) {
    const id = operationOf.get(t.name);
    if (id === undefined) {
      if (t.name === FINISH_TURN.name) finish = t;
      else builtIns.push(t);
    } else if (upFront.length < choice.declare && alwaysDeclare(id)) upFront.push(t);
    else deferred.push(t);
  }
  const map = Object.create(null) as Record<string, string>;
  const shapes = new Map<string, Shape | null>();
  const keep = (t: DialectTool) => {
    const id = operationOf.get(t.name)!;
    map[t.name] = id;
    shapes.set(id, full.shapes.get(id) ?? null);
  };
  upFront.forEach(keep);
  let tools: DialectTool[];
  if (choice.provider === 'ANTHROPIC') {
    deferred.forEach(keep);
    const search: DialectTool = {
      name: ANTHROPIC_SEARCH_TOOL.name as string,
      description: '',
      inputSchema: {},
      declaration: { ...ANTHROPIC_SEARCH_TOOL },
    };
    tools = [
      ...builtIns,
      search,
      ...upFront,
      ...deferred.map((t) => ({ ...t, declaration: { ...t.declaration, defer_loading: true } })),
    ];
  } else {
    const compiled = compileToolList(full.dialect, { tools: [searchTool], map: {} }, () => null, memo, null);
    tools = [...builtIns, ...compiled.tools, ...upFront];
  }
  if (finish) tools.push(finish);
  return { dialect: full.dialect, tools, map, shapes, leftOut: full.leftOut };
}
