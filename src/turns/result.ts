/**
 * What the model reads after a call (pure). Every outcome, failures included, becomes content the
 * assistant can read and explain ("What a failure does", tool-servers page): what failed, and
 * whether trying again could help. Text is capped (DESIGN.md rule 8), with a note when it was cut.
 */
import type { Scrubber } from '../connections/scrub.js';
import type { CallToolOutcome } from '../mcp/client.js';
import type { JsonObject, JsonValue } from '../operations/types.js';
import { CallStatus } from './call-status.js';
import { brokeText, timeoutText, unreachableText } from './failure-text.js';

export interface CallResult {
  status: CallStatus;
  ok: boolean;
  /** MCP-style content items for the model. */
  content: JsonValue[];
  structuredContent: JsonObject | null;
  /** Failures: one line for the model (and the debugger). Null on success. */
  message: string | null;
  /** Attempts at the call: 0 (stopped before any request), 1, or 2 after the one retry. */
  attempts: number;
  /** Requests sent again because the server refused them without acting (new session, renewed token). */
  resends: number;
  durationMs: number;
  truncated: boolean;
  /** RATE_LIMITED (and an open breaker): when trying again may work, in ms; absent otherwise. */
  retryAfterMs?: number | null;
  /** A limit or breaker refused the call (src/guards/call-guard.ts): which, for the debugger. */
  refused?: { by: 'BREAKER' | 'RATE_LIMIT'; scope: string; name: string; retryAfterMs: number | null };
}

const EXCERPT = 300;

function oneLine(text: string, max = EXCERPT): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Caps content to `maxChars` of serialized JSON: text items are cut, others dropped, and a note says so. */
export function capContent(
  content: JsonValue[],
  structured: JsonObject | null,
  maxChars: number,
): { content: JsonValue[]; structuredContent: JsonObject | null; truncated: boolean } {
  const size = JSON.stringify(content).length + (structured ? JSON.stringify(structured).length : 0);
  if (size <= maxChars) return { content, structuredContent: structured, truncated: false };
  let budget = Math.max(0, maxChars - 200);
  const kept: JsonValue[] = [];
  for (const item of content) {
    if (budget <= 0) break;
    const text =
      typeof item === 'object' &&
      item !== null &&
      !Array.isArray(item) &&
      item.type === 'text' &&
      typeof item.text === 'string'
        ? item.text
        : null;
    if (text === null) {
      const itemSize = JSON.stringify(item).length;
      if (itemSize <= budget) {
        kept.push(item);
        budget -= itemSize;
      }
      continue;
    }
    const cut = text.slice(0, budget);
    kept.push({ type: 'text', text: cut });
    budget -= cut.length + 30;
  }
  kept.push({
    type: 'text',
    text: `[The result was cut: it was ${size} characters, over the limit of ${maxChars}.]`,
  });
  return { content: kept, structuredContent: null, truncated: true };
}

/** Content items must be objects; a server that sends bare strings or numbers gets them as text. */
export function normalizeContent(content: JsonValue[]): JsonValue[] {
  return content.map((item) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? item
      : { type: 'text', text: typeof item === 'string' ? item : JSON.stringify(item) },
  );
}

function textOf(content: JsonValue[]): string {
  return content
    .map((c) =>
      typeof c === 'object' && c !== null && !Array.isArray(c) && typeof c.text === 'string' ? c.text : '',
    )
    .filter((t) => t !== '')
    .join(' ');
}

export function failure(status: CallStatus, message: string, attempts = 0, durationMs = 0): CallResult {
  return {
    status,
    ok: false,
    content: [{ type: 'text', text: message }],
    structuredContent: null,
    message,
    attempts,
    resends: 0,
    durationMs,
    truncated: false,
  };
}

/**
 * A result from its parts, built property by property: V8 (Node 20) takes microseconds over a
 * spread followed by more properties, and this runs on every call.
 */
function withCounts(
  status: CallStatus,
  ok: boolean,
  capped: ReturnType<typeof capContent>,
  message: string | null,
  counts: Pick<CallResult, 'attempts' | 'resends' | 'durationMs'>,
): CallResult {
  return {
    status,
    ok,
    content: capped.content,
    structuredContent: capped.structuredContent,
    truncated: capped.truncated,
    message,
    attempts: counts.attempts,
    resends: counts.resends,
    durationMs: counts.durationMs,
  };
}

/**
 * An MCP call's outcome as a result for the model. `tool` is the declared name. Everything the
 * server sent is scrubbed of the connection's secrets first, before any text is cut.
 */
export function fromMcpOutcome(
  tool: string,
  raw: CallToolOutcome,
  maxChars: number,
  scrubber: Scrubber,
): CallResult {
  const outcome = scrubber.json(raw);
  const base = {
    attempts: outcome.attempts,
    resends: outcome.resends,
    durationMs: Math.round(outcome.durationMs),
  };
  switch (outcome.kind) {
    case 'success': {
      const capped = capContent(normalizeContent(outcome.content), outcome.structuredContent, maxChars);
      return withCounts(CallStatus.SUCCEEDED, true, capped, null, base);
    }
    case 'input_required':
      // The revision's replacement for elicitation: the server wants a person's answer (or a
      // completion) mid-call. This platform has no one to ask inside a turn.
      // A legacy server asks on the call's stream instead; declined, it answered `said`.
      return failure(
        CallStatus.TOOL_ERROR,
        outcome.said === undefined
          ? `The tool ${tool} needs ${outcome.needs} before it can finish, and the platform cannot provide that inside a conversation. Nothing more will happen for this call; tell the customer this action must be done another way.`
          : `The tool ${tool} needs ${outcome.needs} before it can finish, and the platform cannot provide that inside a conversation, so the request was declined${outcome.said ? `; the tool then said: ${oneLine(outcome.said)}` : ''}. Tell the customer this action must be done another way.`,
        base.attempts,
        base.durationMs,
      );
    case 'tool_error': {
      const capped = capContent(normalizeContent(outcome.content), outcome.structuredContent, maxChars);
      const said = oneLine(textOf(capped.content));
      const message = `The tool ${tool} reported an error${said ? `: ${said}` : '.'}`;
      return withCounts(CallStatus.TOOL_ERROR, false, capped, message, base);
    }
    case 'protocol_error': {
      const rpc = outcome.rpcError;
      const message =
        rpc && (rpc.code === -32602 || rpc.code === -32601)
          ? `The tool server refused the call to ${tool}: ${oneLine(rpc.message)}. Check the arguments against the tool's input schema before trying again.`
          : `The tool server gave an unusable answer to ${tool} (${outcome.code}${rpc ? `: ${oneLine(rpc.message)}` : ''}). Trying again is unlikely to help; the team will check.`;
      return { ...failure(CallStatus.UPSTREAM_ERROR, message), ...base };
    }
    case 'http_error':
      return {
        ...failure(
          CallStatus.UPSTREAM_ERROR,
          `The tool server for ${tool} failed with HTTP ${outcome.status}. ${outcome.status >= 500 ? 'It may work if tried again later.' : 'Trying again is unlikely to help; the team will check.'}`,
        ),
        ...base,
      };
    case 'timeout':
      return {
        ...failure(CallStatus.TIMEOUT, timeoutText(`The tool ${tool}`, outcome.timeoutMs)),
        ...base,
      };
    case 'transport_error':
      return {
        ...failure(
          CallStatus.UPSTREAM_ERROR,
          outcome.reachedServer
            ? brokeText(`the tool server for ${tool}`)
            : unreachableText(`The tool server for ${tool}`),
        ),
        ...base,
      };
    case 'auth_required':
      return {
        ...failure(
          CallStatus.UPSTREAM_ERROR,
          `The tool server for ${tool} needs the operator to sign in again. Nothing was done; tell the customer the team will check.`,
        ),
        ...base,
      };
    case 'cancelled':
      return { ...failure(CallStatus.UPSTREAM_ERROR, `The call to ${tool} was cancelled.`), ...base };
  }
}

/**
 * An OpenAPI answer as a result for the model: the status and the body, as JSON when it is JSON.
 * The body is scrubbed of the connection's secrets first, before any text is cut.
 */
export function fromHttpAnswer(
  tool: string,
  raw: { status: number; contentType: string; body: string },
  maxChars: number,
  scrubber: Scrubber,
): Omit<CallResult, 'attempts' | 'resends' | 'durationMs'> {
  const answer = { status: raw.status, contentType: raw.contentType, body: scrubber.text(raw.body) };
  let parsed: JsonValue | undefined;
  if (/\bjson\b/i.test(answer.contentType) && answer.body !== '') {
    try {
      parsed = JSON.parse(answer.body) as JsonValue;
    } catch {
      parsed = undefined;
    }
  }
  const text = answer.body === '' ? `HTTP ${answer.status} (no body)` : answer.body;
  const structured: JsonObject = { status: answer.status };
  if (parsed !== undefined) structured.body = parsed;
  const capped = capContent([{ type: 'text', text }], structured, maxChars);
  const failed = answer.status >= 400;
  // Property by property, not spreads: see `withCounts`.
  return {
    status: failed ? CallStatus.TOOL_ERROR : CallStatus.SUCCEEDED,
    ok: !failed,
    content: capped.content,
    structuredContent: capped.structuredContent,
    truncated: capped.truncated,
    message: failed
      ? `The API behind ${tool} answered HTTP ${answer.status}${answer.body ? ` (${JSON.stringify(oneLine(answer.body))})` : ''}.${answer.status >= 500 ? ' It may work if tried again later.' : ' Check the arguments before trying again.'}`
      : null,
  };
}
