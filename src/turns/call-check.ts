/**
 * Step 2 of the call path (src/turns/call-path.ts), check: arguments over a limit, or that cannot
 * be mapped back from the turn's dialect, are refused before anything is recorded as started or
 * sent (the record keeps a short note instead of the payload). A tool that is gone or switched
 * off, and a refusal of the rate limits and breakers (src/guards/call-guard.ts), become the call's
 * early result: recorded, never sent.
 */
import type { TraceContext } from './trace.js';
import type { Permit } from '../guards/call-guard.js';
import type { JsonObject } from '../operations/types.js';
import { rejectionMessage } from './arguments.js';
import type { CallToolResult, TurnState } from './call-answer.js';
import type { CallRecords } from './call-record.js';
import { CallStatus } from './call-status.js';
import type { TurnDeps } from './deps.js';
import { decodeArguments } from './dialects/decode.js';
import { failure, type CallResult } from './result.js';
import { notFoundMessage, type ToolSearch } from './search/tool-search.js';
import {
  checkArguments,
  refusedArgumentsNote,
  storableJson,
  storableJsonText,
  type ArgumentCheck,
} from './storable.js';
import { dialectToolsOf, type AssistantTools, type CachedOperation } from './tool-cache.js';

/** One call as it goes along the path: what each step learns, for the next. */
export interface Call {
  turn: TurnState;
  rawName: string;
  /** The model-given name, bounded and storable: what records and messages say. */
  name: string;
  /** When the call came in, on the injected clock (TurnDeps.clock). */
  started: Date;
  /** The same, monotonic ms: the call's duration is measured from it. */
  t0: number;
  trace: TraceContext | null;
  /** The declared name's operation (undefined: no such tool, a built-in, or switched off). */
  operationId: string | undefined;
  op: CachedOperation | undefined;
  tools: AssistantTools | null;
}

/** What the check step lets through: the arguments to send and why the call may not go out. */
export interface Checked {
  /** The canonical arguments (mapped back from the turn's dialect). */
  args: JsonObject;
  argsJson: string;
  /** The model's own arguments (JSON text), when the dialect's mapping changed them; else null. */
  modelArgsJson: string | null;
  /** A result given instead of sending (the tool is gone, switched off, or a guard refused). */
  early: CallResult | null;
  permit: Permit | null;
}

/** What the check step uses of the call path. */
export interface CheckDeps {
  services: TurnDeps;
  records: CallRecords;
  /** Tool search (issue 31): a found tool's shape is in the dialect's uncapped list. */
  search: ToolSearch;
}

type Passed = Extract<ArgumentCheck, { ok: true }>;

/** The arguments the check lets through: canonical, with their check, and the model's own. */
interface Mapped {
  args: JsonObject;
  checked: Passed;
  modelArgsJson: string | null;
  /** The tool's shape is not offered to this turn's model (nothing is sent). */
  early: CallResult | null;
}

export async function checkCall(
  deps: CheckDeps,
  call: Call,
  modelArgs: JsonObject,
): Promise<Checked | CallToolResult> {
  const first = checkArguments(modelArgs, deps.services.config.toolArguments, call.name);
  if (!first.ok) return deps.records.refused(call, first.message, storableJson(refusedArgumentsNote(first)));
  const mapped = mapFromDialect(deps, call, modelArgs, first);
  if (!('args' in mapped)) return mapped;
  let early = missingTool(call) ?? mapped.early;

  // Rate limits and breakers (src/guards/call-guard.ts): a refused call is recorded, sends nothing.
  let permit: Permit | null = null;
  if (early === null) {
    const admitted = deps.services.guard.admit(call.op!, call.turn.workspaceId, call.name);
    const admission = admitted instanceof Promise ? await admitted : admitted;
    if (admission.ok) permit = admission;
    else early = admission.result;
  }
  return {
    args: mapped.args,
    argsJson: storableJsonText(mapped.checked.json),
    modelArgsJson: mapped.modelArgsJson,
    early,
    permit,
  };
}

/**
 * The model wrote its arguments against the turn's dialect: mapped back to canonical ones before
 * the canonical check (in dispatch) and before anything is recorded or sent. A refusal is the
 * call's recorded answer.
 */
function mapFromDialect(
  deps: CheckDeps,
  call: Call,
  modelArgs: JsonObject,
  checked: Passed,
): Mapped | Promise<CallToolResult> {
  const { turn, op, tools, name } = call;
  const same: Mapped = { args: modelArgs, checked, modelArgsJson: null, early: null };
  if (turn.dialect === 'GENERIC' || !op || !tools) return same;
  const list = turn.search ? deps.search.fullList(tools, turn.dialect) : dialectToolsOf(tools, turn.dialect);
  if (!list.shapes.has(op.id)) {
    same.early = failure(
      CallStatus.UNAVAILABLE,
      `The tool ${name} cannot be offered to this model right now. Nothing was done; carry on without it.`,
    );
    return same;
  }
  const decoded = decodeArguments(list.shapes.get(op.id) ?? null, modelArgs);
  if (!decoded.ok) {
    return deps.records.refused(
      call,
      rejectionMessage(name, [`${decoded.field}: ${decoded.problem}`]),
      storableJsonText(checked.json),
    );
  }
  if (!decoded.changed) return same;
  const modelArgsJson = storableJsonText(checked.json);
  const again = checkArguments(decoded.args, deps.services.config.toolArguments, name);
  if (!again.ok)
    return deps.records.refused(
      call,
      again.message,
      storableJson(refusedArgumentsNote(again)),
      modelArgsJson,
    );
  return { args: decoded.args, checked: again, modelArgsJson, early: null };
}

/** The early result of a name with no tool behind it, or of a tool switched off; else null. */
function missingTool(call: Call): CallResult | null {
  const { turn, name } = call;
  if (!call.operationId) {
    if (turn.builtIns.has(call.rawName))
      return failure(
        CallStatus.UNAVAILABLE,
        `${name} is a built-in tool; it is handled by the platform, not called through connected tools.`,
      );
    if (turn.search) return failure(CallStatus.REJECTED, notFoundMessage(name));
    return failure(
      CallStatus.UNAVAILABLE,
      `There is no tool named "${name}" in this turn. Use one of the tools declared at the start of the turn.`,
    );
  }
  if (!call.op)
    return failure(
      CallStatus.UNAVAILABLE,
      `The tool ${name} is switched off right now. Nothing was done; tell the customer the team will check, and carry on without it.`,
    );
  return null;
}
