/**
 * What the debugger's call events carry beyond status (pure): the model's arguments on
 * CALL_STARTED, and on CALL_FINISHED the result exactly as the model received it (already scrubbed
 * of the connection's secrets and capped to TOOL_RESULT_MAX_CHARS by the call path) with what the
 * server said while it ran. The same payload serves `TurnCall.result` and `TurnCall.progress`.
 */
import type { JsonObject, JsonValue } from '../operations/types.js';
import type { ProgressRecord } from './progress.js';
import type { CallResult } from './result.js';

/** Arguments larger than this (serialized) are left out of the event; the TurnCall keeps them. */
export const DEFAULT_EVENT_ARGUMENTS_MAX_CHARS = 65_536;

export interface EventArguments {
  /** The arguments' JSON text as given, or `null` (JSON) when they are too large. */
  argumentsJson: string;
  /** The arguments were too large for the event (read them on the TurnCall). */
  argumentsCut: boolean;
}

/** The arguments for the event, from their JSON text (serialized once, by the argument check). */
export function eventArguments(
  argsJson: string,
  maxChars = DEFAULT_EVENT_ARGUMENTS_MAX_CHARS,
): EventArguments {
  return argsJson.length <= maxChars
    ? { argumentsJson: argsJson, argumentsCut: false }
    : { argumentsJson: 'null', argumentsCut: true };
}

export interface EventResult {
  content: JsonValue[];
  structuredContent: JsonObject | null;
  truncated: boolean;
}

export function eventResult(result: CallResult): EventResult {
  return {
    content: result.content,
    structuredContent: result.structuredContent,
    truncated: result.truncated,
  };
}

/** The parts of a CALL_FINISHED payload this module adds. */
export interface FinishedDetails {
  result: EventResult;
  progress: ProgressRecord;
}
