/**
 * What the call path (src/turns/call-path.ts) reads of a turn and gives back for a call: the
 * turn's state kept in memory, a call's answer with what the runtime needs of its record, and
 * what a front door may give one call besides its arguments. Shared by the call path's modules
 * (call-path.ts, call-check.ts, call-record.ts, call-sql.ts) so none of them imports another's
 * flow. (pure)
 */
import type { ToolDialect } from './dialects/dialect.js';
import type { ProgressLine } from './progress.js';
import { failure, type CallResult } from './result.js';
import { CallStatus } from './call-status.js';

export const FINISHED_MESSAGE = 'This turn has finished; start a new turn to call tools.';

/** What a call needs to know of its turn, kept in memory after beginTurn. */
export interface TurnState {
  id: string;
  assistantId: string;
  workspaceId: string;
  conversationId: string;
  /** Declared name → operation id (the tools declared in this turn's dialect). */
  map: Record<string, string>;
  builtIns: ReadonlySet<string>;
  /** The model API the tools were declared for: the model's arguments come back in its terms. */
  dialect: ToolDialect;
  /** finishTurn was called (on this instance, or before this instance loaded the turn). */
  finished: boolean;
  /** Tool search (issue 31): the turn declares `search_tools`; found tools are callable too. */
  search: boolean;
  /** Found tools known to this instance: declared name → operation id (src/turns/search/). */
  found?: Map<string, string>;
}

export interface CallToolResult extends CallResult {
  callId: string | null;
  seq: number | null;
  /**
   * The call's record (its TurnCall, and for a WRITE its ledger row) was stored before the answer.
   * False when the database failed: the result is still the tool's real result.
   */
  recorded: boolean;
  /** The turn's dialect: how `forModel` shapes the result (src/turns/dialects/for-model.ts). */
  dialect: ToolDialect;
}

/**
 * What a front door may give one call besides its arguments: a listener of the tool server's
 * progress (passed on by the MCP endpoint) and a signal that cancels a READ (a WRITE is never
 * abandoned once sent: it runs to its end and is recorded, with its ledger row).
 */
export interface CallLive {
  onProgress?: (line: ProgressLine) => void;
  signal?: AbortSignal;
}

/**
 * A call's answer: its result with what the runtime needs of the record. Built property by
 * property (V8 on Node 20 takes microseconds over `{ ...result, more }`).
 */
export function answer(
  result: CallResult,
  callId: string | null,
  seq: number | null,
  recorded: boolean,
): CallToolResult {
  const out = result as CallToolResult;
  out.callId = callId;
  out.seq = seq;
  out.recorded = recorded;
  // Set by CallPath.call from the turn, once the answer is known.
  out.dialect = 'GENERIC';
  return out;
}

/** The answer to a call of a turn that has finished: nothing was sent, nothing recorded. */
export function turnFinished(): CallToolResult {
  return answer(failure(CallStatus.UNAVAILABLE, FINISHED_MESSAGE), null, null, false);
}
