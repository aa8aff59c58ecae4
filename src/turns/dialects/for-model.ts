/**
 * A call's result as the next model request of its dialect takes it (pure, issue 26):
 * - GENERIC: the MCP `CallToolResult` shape, `{ content, structuredContent?, isError }`;
 * - OPENAI, OPENAI_STRICT: the tool message's `content`, a string;
 * - ANTHROPIC: a `tool_result` block's `content`: text blocks, and image blocks for the image
 *   types the Messages API takes;
 * - GEMINI, GEMINI_JSON_SCHEMA: `functionResponse.response`, an object: `{ output }` on success,
 *   `{ error }` on failure (the keys Google's function-calling guide uses).
 *
 * What a dialect cannot carry (images for OpenAI and Gemini, audio, resource links, embedded
 * binary resources) is described in text. A failure always leads with the message written for the
 * model. The whole stays within the dialect's budget (serialized characters): text is cut with a
 * note, and structured output is shrunk so that it stays valid JSON, with a `truncated` note.
 */
import type { JsonObject, JsonValue } from '../../operations/types.js';
import { isObject } from '../../operations/types.js';
import type { CallResult } from '../result.js';
import type { ToolDialect } from './dialect.js';

/** Characters of serialized JSON, per dialect family (docs/declaring-tools.md). */
export interface ForModelBudgets {
  openai: number;
  anthropic: number;
  gemini: number;
}

export const DEFAULT_FOR_MODEL_BUDGETS: ForModelBudgets = {
  openai: 65_536,
  anthropic: 65_536,
  gemini: 65_536,
};

/** Image types the Messages API takes in an image block (docs/dialects.md, anthropic.image-types). */
const ANTHROPIC_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type Result = Pick<CallResult, 'ok' | 'content' | 'structuredContent' | 'message' | 'truncated'>;

export function forModel(
  dialect: ToolDialect,
  result: Result,
  budgets: ForModelBudgets = DEFAULT_FOR_MODEL_BUDGETS,
): JsonValue {
  switch (dialect) {
    case 'GENERIC': {
      const out: JsonObject = { content: result.content, isError: !result.ok };
      if (result.structuredContent !== null) out.structuredContent = result.structuredContent;
      return out;
    }
    case 'OPENAI':
    case 'OPENAI_STRICT':
      return cutText(plainText(result), budgets.openai);
    case 'ANTHROPIC':
      return anthropicBlocks(result, budgets.anthropic);
    case 'GEMINI':
    case 'GEMINI_JSON_SCHEMA':
      return geminiResponse(result, budgets.gemini);
  }
}

/** One content item in words, when the dialect cannot carry it as it is; null for text. */
function describeItem(item: JsonValue): string | null {
  if (!isObject(item)) return typeof item === 'string' ? item : JSON.stringify(item);
  switch (item.type) {
    case 'text':
      return null;
    case 'image':
    case 'audio': {
      const mime = typeof item.mimeType === 'string' ? item.mimeType : 'unknown type';
      const size = typeof item.data === 'string' ? `, ${Math.floor((item.data.length * 3) / 4)} bytes` : '';
      return `[The tool returned ${item.type === 'image' ? 'an image' : 'audio'} (${mime}${size}), which cannot be shown here.]`;
    }
    case 'resource_link': {
      const name = typeof item.name === 'string' ? item.name : 'a resource';
      const uri = typeof item.uri === 'string' ? ` <${item.uri}>` : '';
      return `[Resource link: ${name}${uri}]`;
    }
    case 'resource': {
      const r = isObject(item.resource) ? item.resource : {};
      if (typeof r.text === 'string') return r.text;
      const uri = typeof r.uri === 'string' ? ` <${r.uri}>` : '';
      return `[The tool returned an embedded resource${uri}, which cannot be shown here.]`;
    }
    default:
      return `[The tool returned content of type ${typeof item.type === 'string' ? item.type.slice(0, 40) : 'unknown'}, which cannot be shown here.]`;
  }
}

function texts(result: Result): string[] {
  const parts: string[] = [];
  for (const item of result.content) {
    if (isObject(item) && item.type === 'text' && typeof item.text === 'string') {
      if (item.text !== '') parts.push(item.text);
    } else {
      const d = describeItem(item);
      if (d) parts.push(d);
    }
  }
  if (parts.length === 0 && result.structuredContent !== null)
    parts.push(JSON.stringify(result.structuredContent));
  return parts;
}

function plainText(result: Result): string {
  const parts = texts(result);
  if (!result.ok && result.message && !parts.includes(result.message)) parts.unshift(result.message);
  return parts.length > 0
    ? parts.join('\n\n')
    : result.ok
      ? '(The tool returned no content.)'
      : 'The call failed.';
}

function cutNote(size: number, max: number): string {
  return `[The result was cut: it was ${size} characters, over the limit of ${max}.]`;
}

function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = cutNote(text.length, max);
  let cut = text.slice(0, Math.max(0, max - note.length - 2));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}\n\n${note}`;
}

function anthropicBlocks(result: Result, max: number): JsonValue[] {
  const blocks: JsonObject[] = [];
  if (!result.ok && result.message) blocks.push({ type: 'text', text: result.message });
  for (const item of result.content) {
    if (isObject(item) && item.type === 'text' && typeof item.text === 'string') {
      // The API refuses empty text blocks.
      if (item.text !== '' && !(blocks.length === 1 && !result.ok && item.text === result.message))
        blocks.push({ type: 'text', text: item.text });
    } else if (
      isObject(item) &&
      item.type === 'image' &&
      typeof item.data === 'string' &&
      typeof item.mimeType === 'string' &&
      ANTHROPIC_IMAGE_TYPES.has(item.mimeType)
    ) {
      blocks.push({ type: 'image', source: { type: 'base64', media_type: item.mimeType, data: item.data } });
    } else {
      const d = describeItem(item);
      if (d) blocks.push({ type: 'text', text: d });
    }
  }
  if (!blocks.some((b) => b.type === 'text') && result.structuredContent !== null)
    blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  if (blocks.length === 0) blocks.push({ type: 'text', text: '(The tool returned no content.)' });
  const size = JSON.stringify(blocks).length;
  if (size <= max) return blocks;
  // Over budget: images go first (described), then text is cut.
  const kept: JsonObject[] = [];
  let room = max - 300;
  for (const b of blocks) {
    if (b.type === 'image') {
      const source = b.source as JsonObject;
      const d = `[The tool returned an image (${typeof source.media_type === 'string' ? source.media_type : 'image'}) too large to include.]`;
      room -= d.length + 30;
      kept.push({ type: 'text', text: d });
      continue;
    }
    const text = typeof b.text === 'string' ? b.text : '';
    if (room <= 0) break;
    const cut = text.length + 30 <= room ? text : text.slice(0, Math.max(1, room - 30));
    room -= cut.length + 30;
    kept.push({ type: 'text', text: cut });
  }
  kept.push({ type: 'text', text: cutNote(size, max) });
  return kept;
}

function geminiResponse(result: Result, max: number): JsonObject {
  let out: JsonObject;
  if (!result.ok) {
    const detail = texts(result).filter((t) => t !== result.message);
    out = { error: result.message ?? 'The call failed.' };
    if (detail.length > 0) out.details = detail.join('\n\n');
  } else if (result.structuredContent !== null) {
    out = { output: result.structuredContent };
    const extra = result.content.map(describeItem).filter((d): d is string => d !== null);
    if (extra.length > 0) out.notes = extra.join(' ');
  } else {
    out = { output: texts(result).join('\n\n') || '(The tool returned no content.)' };
  }
  if (result.truncated) out.truncated = 'The platform cut this result to its size limit.';
  const size = JSON.stringify(out).length;
  if (size <= max) return out;
  const shrunk = shrinkJson(out, max - 200) as JsonObject;
  shrunk.truncated = cutNote(size, max);
  return shrunk;
}

/**
 * `value` made to fit `max` serialized characters while staying valid JSON of the same outline:
 * long strings are cut (with `…`), long arrays and objects lose their tail, in rounds, halving the
 * allowance each time. Whatever still does not fit becomes an excerpt of its text.
 */
export function shrinkJson(value: JsonValue, max: number): JsonValue {
  let size = JSON.stringify(value).length;
  if (size <= max) return value;
  let strings = Math.max(16, Math.floor(max / 2));
  let items = 1_000;
  let out = value;
  for (let round = 0; round < 24 && size > max; round++) {
    out = shrinkOnce(value, strings, items, 0);
    size = JSON.stringify(out).length;
    strings = Math.max(8, Math.floor(strings / 2));
    items = Math.max(1, Math.floor(items / 2));
  }
  if (size <= max) return out;
  const text = JSON.stringify(value);
  return `${text.slice(0, Math.max(0, max - 10))}…`;
}

function shrinkOnce(v: JsonValue, strings: number, items: number, depth: number): JsonValue {
  if (typeof v === 'string') return v.length > strings ? `${v.slice(0, strings)}…` : v;
  if (Array.isArray(v)) {
    const kept = v.slice(0, items).map((x) => shrinkOnce(x, strings, items, depth + 1));
    if (v.length > items) kept.push(`… ${v.length - items} more items cut`);
    return kept;
  }
  if (isObject(v)) {
    const out: JsonObject = {};
    const keys = Object.keys(v);
    for (const k of keys.slice(0, items)) out[k] = shrinkOnce(v[k] as JsonValue, strings, items, depth + 1);
    if (keys.length > items) out['…'] = `${keys.length - items} more keys cut`;
    return out;
  }
  return v;
}
