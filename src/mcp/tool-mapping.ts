/**
 * Validation and mapping of the tools an MCP server lists (`tools/list`). Pure: plain data in,
 * plain data out.
 *
 * The rules, from the tool-contract page and issue 4:
 * - from each tool keep `name`, `title` (or `annotations.title`), `description`, `inputSchema` and
 *   `annotations`; unknown fields are ignored;
 * - a tool is skipped, with a reason, when it has no name; when its name is over 128 characters or
 *   holds control characters or whitespace; when `inputSchema` is not an object schema with
 *   `type: "object"`; when `description` is present but not a string; when its serialized
 *   definition is over 64 KB; when an earlier tool already took its name (the first is kept); and
 *   past the tool limit;
 * - risk is `READ` only when `readOnlyHint === true` and `destructiveHint !== true`, otherwise
 *   `WRITE` (the spec's defaults for absent hints are `readOnlyHint: false` and
 *   `destructiveHint: true`).
 */
import { paramHeadersOf } from './param-headers.js';
import { riskFromAnnotations } from '../operations/risk.js';
import type { JsonObject, Risk } from '../operations/types.js';
import { MAX_OPERATIONS_PER_CONNECTION } from '../limits.js';

export const MAX_TOOL_NAME_LENGTH = 128; // characters
export const MAX_TOOL_DEFINITION_BYTES = 64 * 1024; // 64 KiB of serialized JSON
/** At most this many tools per connection; DESIGN.md rule 3. */
export const DEFAULT_MAX_TOOLS = MAX_OPERATIONS_PER_CONNECTION;
/** Skipped names are reported cut to this length, so a hostile name cannot bloat a report. */
const REPORTED_NAME_LENGTH = 200;

/** A tool as the service keeps it. */
export interface McpToolDefinition {
  /** The name on the wire, exactly as the server listed it. */
  name: string;
  /** `title`, else `annotations.title`, else `null`. */
  title: string | null;
  description: string | null;
  /** An object schema (`type: "object"`), as listed. */
  inputSchema: JsonObject;
  /** As listed; `null` when absent or not an object. Hints from an untrusted server. */
  annotations: JsonObject | null;
  /** `outputSchema` as listed when it is an object, else `null`: shown in review diffs, never enforced. */
  outputSchema: JsonObject | null;
  risk: Risk;
  /** `annotations.idempotentHint === true`. */
  idempotent: boolean;
}

/** Why a listed tool was not kept. Stable codes. */
export type ToolSkipReason =
  /** The entry is not a JSON object. */
  | 'NOT_AN_OBJECT'
  /** No `name`, an empty one, or one that is not a string. */
  | 'NAME_MISSING'
  /** The name is over 128 characters or holds control characters or whitespace. */
  | 'NAME_INVALID'
  /** The serialized tool is over 64 KB. */
  | 'DEFINITION_TOO_LARGE'
  /** `inputSchema` is missing, not an object, or its `type` is not `"object"`. */
  | 'INPUT_SCHEMA_INVALID'
  /** `description` is present and not a string. */
  | 'DESCRIPTION_INVALID'
  /** An `x-mcp-header` annotation breaks the 2026-07-28 rules (`param-headers.ts`); the tool is left out. */
  | 'PARAM_HEADER_INVALID'
  /** An earlier tool in the listing has the same name; the first one is kept. */
  | 'DUPLICATE_NAME'
  /** The connection already holds the maximum number of tools. */
  | 'TOOL_LIMIT';

export interface SkippedTool {
  /** Position in the whole listing, across pages, from 0. */
  index: number;
  /** The listed name when it was a string (cut to 200 characters), else `null`. */
  name: string | null;
  reason: ToolSkipReason;
  /** One line for people, such as `inputSchema.type must be "object", got "string"`. */
  detail: string;
}

export type ToolMapping =
  | { ok: true; tool: McpToolDefinition }
  | { ok: false; reason: Exclude<ToolSkipReason, 'DUPLICATE_NAME' | 'TOOL_LIMIT'>; detail: string };

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return `a ${typeof value}`;
}

/** `READ` only when `readOnlyHint === true` and `destructiveHint !== true` (operations/risk.ts). */
export function riskOfListedAnnotations(annotations: unknown): Risk {
  return riskFromAnnotations(isPlainObject(annotations) ? annotations : null);
}

/** Whether the server says repeating a call has no further effect. */
export function isIdempotent(annotations: unknown): boolean {
  return isPlainObject(annotations) && annotations.idempotentHint === true;
}

// eslint-disable-next-line no-control-regex
const FORBIDDEN_NAME_CHARS = /[\s\u0000-\u001f\u007f-\u009f]/u;

/** Validates and maps one listed tool, without regard to the other tools. */
export function mapTool(raw: unknown): ToolMapping {
  if (!isPlainObject(raw))
    return { ok: false, reason: 'NOT_AN_OBJECT', detail: `a tool must be an object, got ${describe(raw)}` };
  const { name } = raw;
  if (typeof name !== 'string' || name === '') {
    return {
      ok: false,
      reason: 'NAME_MISSING',
      detail: `a tool needs a non-empty string name, got ${describe(name)}`,
    };
  }
  if (name.length > MAX_TOOL_NAME_LENGTH) {
    return {
      ok: false,
      reason: 'NAME_INVALID',
      detail: `the name is ${name.length} characters, over ${MAX_TOOL_NAME_LENGTH}`,
    };
  }
  if (FORBIDDEN_NAME_CHARS.test(name)) {
    return { ok: false, reason: 'NAME_INVALID', detail: 'the name holds whitespace or control characters' };
  }
  const size = Buffer.byteLength(JSON.stringify(raw), 'utf8');
  if (size > MAX_TOOL_DEFINITION_BYTES) {
    return {
      ok: false,
      reason: 'DEFINITION_TOO_LARGE',
      detail: `the definition is ${size} bytes, over ${MAX_TOOL_DEFINITION_BYTES}`,
    };
  }
  const { inputSchema } = raw;
  if (!isPlainObject(inputSchema)) {
    return {
      ok: false,
      reason: 'INPUT_SCHEMA_INVALID',
      detail: `inputSchema must be an object schema, got ${describe(inputSchema)}`,
    };
  }
  if (inputSchema.type !== 'object') {
    return {
      ok: false,
      reason: 'INPUT_SCHEMA_INVALID',
      detail: `inputSchema.type must be "object", got ${describe(inputSchema.type)}`,
    };
  }
  const headers = paramHeadersOf(inputSchema);
  if (!headers.ok) return { ok: false, reason: 'PARAM_HEADER_INVALID', detail: headers.detail };
  const { description } = raw;
  if (description !== undefined && description !== null && typeof description !== 'string') {
    return {
      ok: false,
      reason: 'DESCRIPTION_INVALID',
      detail: `description must be a string, got ${describe(description)}`,
    };
  }
  const annotations = isPlainObject(raw.annotations) ? raw.annotations : null;
  const title =
    typeof raw.title === 'string'
      ? raw.title
      : typeof annotations?.title === 'string'
        ? annotations.title
        : null;
  return {
    ok: true,
    tool: {
      name,
      title,
      description: typeof description === 'string' ? description : null,
      inputSchema,
      annotations,
      outputSchema: isPlainObject(raw.outputSchema) ? raw.outputSchema : null,
      risk: riskOfListedAnnotations(annotations),
      idempotent: isIdempotent(annotations),
    },
  };
}

function reportedName(raw: unknown): string | null {
  if (!isPlainObject(raw) || typeof raw.name !== 'string') return null;
  return raw.name.length > REPORTED_NAME_LENGTH ? raw.name.slice(0, REPORTED_NAME_LENGTH) : raw.name;
}

/**
 * Accumulates a listing page by page: keeps valid tools in order, skips the rest with a reason,
 * keeps the first of duplicate names, and stops keeping at `maxTools`.
 */
export class ToolCollector {
  readonly tools: McpToolDefinition[] = [];
  readonly skipped: SkippedTool[] = [];
  readonly #names = new Set<string>();
  readonly #maxTools: number;
  #index = 0;

  constructor(maxTools: number = DEFAULT_MAX_TOOLS) {
    this.#maxTools = maxTools;
  }

  /** True once `maxTools` tools are kept: more tools can only be skipped. */
  get full(): boolean {
    return this.tools.length >= this.#maxTools;
  }

  /** Entries listed so far, kept or skipped. */
  get seen(): number {
    return this.#index;
  }

  add(page: readonly unknown[]): void {
    for (const raw of page) {
      const index = this.#index++;
      if (this.full) {
        this.skipped.push({
          index,
          name: reportedName(raw),
          reason: 'TOOL_LIMIT',
          detail: `the connection already has ${this.#maxTools} tools`,
        });
        continue;
      }
      const mapped = mapTool(raw);
      if (!mapped.ok) {
        this.skipped.push({ index, name: reportedName(raw), reason: mapped.reason, detail: mapped.detail });
        continue;
      }
      if (this.#names.has(mapped.tool.name)) {
        this.skipped.push({
          index,
          name: mapped.tool.name,
          reason: 'DUPLICATE_NAME',
          detail: 'an earlier tool has the same name; the first one is kept',
        });
        continue;
      }
      this.#names.add(mapped.tool.name);
      this.tools.push(mapped.tool);
    }
  }
}

/** Maps one complete listing. */
export function mapTools(
  raw: readonly unknown[],
  maxTools: number = DEFAULT_MAX_TOOLS,
): { tools: McpToolDefinition[]; skipped: SkippedTool[] } {
  const collector = new ToolCollector(maxTools);
  collector.add(raw);
  return { tools: collector.tools, skipped: collector.skipped };
}
