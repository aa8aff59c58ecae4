/**
 * Reconciliation (pure): the operations stored for one connection × the operations just discovered
 * → a plan of what to add, remove and update. `discover.ts` applies the plan in one transaction;
 * nothing here reads the database, the clock or the network.
 *
 * Rules (lifecycle page "Discovery", tool contract "Names and keys" and "Changes that need a
 * review", DESIGN.md rules 1 and 4, issue 5):
 * - A discovered operation with no stored operation of the same bare name is **added**, enabled only
 *   when its risk is `READ`, under a new key.
 * - A stored operation whose name was not discovered is **removed**. A rename is therefore a removal
 *   plus an addition, and the renamed operation starts over: new key, no reasons, no admin risk.
 * - A stored operation whose name was discovered again is **updated**: title, description, schema,
 *   annotations, binding and idempotency follow the source; the risk follows the source unless an
 *   admin set it. Then the review triggers are checked, and any trigger turns the operation off.
 */
import { AppError } from '../errors.js';
import { assignKey, operationKey } from '../operations/keys.js';
import { isHoldCode, type ReviewCode } from '../operations/review-codes.js';
import { isRiskRaise, startsOn } from '../operations/risk.js';
import { originOf as originOfUrl } from '../connections/key-origins.js';
import { type JsonObject, type OpenApiBinding, type Risk } from '../operations/types.js';

/** A review reason as the reconciler sees it: open reasons in, new reasons out. */
export interface ReviewReasonDraft {
  code: ReviewCode;
  /** What changed, for the admin: argument names, `READ → WRITE`, `GET /a → POST /a`. */
  detail: string;
}

/** One operation as the source describes it now (output of MCP tool mapping or OpenAPI conversion). */
export interface DiscoveredOperation {
  /** Bare name: the MCP tool name or the OpenAPI operation name. It goes on the wire. */
  name: string;
  title: string | null;
  description: string | null;
  inputSchema: JsonObject;
  /**
   * OpenAPI: what the argument check takes instead of `inputSchema` (every option of a union,
   * DESIGN.md rule 17); absent or `null` when the check is `inputSchema` itself.
   */
  checkSchema?: JsonObject | null;
  /** MCP: the tool's `outputSchema`; absent or `null` when it has none (and for OpenAPI). */
  outputSchema?: JsonObject | null;
  annotations: JsonObject | null;
  /** The source's risk, from annotations or from the method. */
  risk: Risk;
  idempotent: boolean;
  /** OpenAPI only; `null` for MCP tools. */
  binding: OpenApiBinding | null;
  /** OpenAPI: why its base address is a placeholder (see `convert.ts`); absent when it is not one. */
  basePlaceholder?: string;
  /**
   * Why this operation must be held whatever its history (see `key-origins.ts`): its base has an
   * origin the key was not given for, or cannot be called. Absent means none.
   */
  holds?: ReviewReasonDraft[];
}

/**
 * One operation as stored, with the review reasons that are still open on it. Here `risk` is the
 * risk in force, which an admin may have set; `sourceRisk` is the source's own, as last discovered.
 */
export interface StoredOperation extends DiscoveredOperation {
  id: string;
  key: string;
  sourceRisk: Risk;
  enabled: boolean;
  riskSetByAdmin: boolean;
  openReasons: ReviewReasonDraft[];
}

/** The columns a refresh writes. */
export interface OperationFields extends Pick<
  DiscoveredOperation,
  'title' | 'description' | 'inputSchema' | 'checkSchema' | 'annotations' | 'binding' | 'risk' | 'idempotent'
> {
  outputSchema: JsonObject | null;
  /** Always the source's risk, even under an admin-set `risk`, so that clearRisk can hand it back. */
  sourceRisk: Risk;
}

export interface PlannedAdd {
  op: DiscoveredOperation;
  /** Unique against `ctx.takenKeys`, every stored key of this connection and every earlier add. */
  key: string;
  /** True only for `READ` operations (DESIGN.md rule 1) that nothing holds. */
  enabled: boolean;
  /** The operation's holds, saved as its first review reasons; the operation needs review when any. */
  reasons: ReviewReasonDraft[];
}

export interface PlannedUpdate {
  id: string;
  before: StoredOperation;
  /** The values to write. `risk` is the stored risk when an admin set it, else the source's. */
  after: OperationFields;
  /** True when at least one review trigger fired: the operation must end up off. */
  disable: boolean;
  /** One reason per trigger that fired, minus those already open with the same code and detail. */
  newReasons: ReviewReasonDraft[];
  /** Open holds whose condition has cleared: the discovery resolves them. */
  resolved: ReviewReasonDraft[];
  /**
   * True when holds were the only open reasons and all cleared, with no trigger firing: the
   * operation no longer needs review, and starts again as a new one would (on only when `READ`).
   */
  release: boolean;
  /**
   * True when applying this update writes anything: a field of `after` differs from `before`
   * (JSON deep equality, key order ignored), an enabled operation goes off, or a reason is new.
   * When false the update must be skipped, so an unchanged re-discovery writes nothing.
   */
  changed: boolean;
  /** The fields of `after` that differ from `before` (JSON deep equality, key order ignored). */
  changedFields: (keyof OperationFields)[];
}

export interface ReconcilePlan {
  /** In discovery order. */
  add: PlannedAdd[];
  /** In stored order. Removing an operation also removes its open reasons; its calls stay in history. */
  remove: StoredOperation[];
  /** Every stored operation discovered again, changed or not, in discovery order. */
  update: PlannedUpdate[];
  /** Discovered operations left out, with why, for the DiscoveryRun's skipped list. */
  skipped: { name: string; reason: string }[];
  counts: {
    added: number;
    removed: number;
    /** Updates with `changed`. */
    updated: number;
    /** Updates with `disable`, and adds with holds: operations held back for review by this run. */
    flagged: number;
  };
}

export interface ReconcileContext {
  /** The connection's slug, fixed at creation. */
  connectionSlug: string;
  /**
   * Every key that must not be handed out: all operation keys in the workspace, other connections
   * included. To give an operation that comes back after being deleted a new key (so that no call
   * history recorded under the old key string attaches to it), also pass the retired keys still
   * referenced by history. The stored keys of this connection are always treated as taken, including
   * those removed by this plan, because the new rows may be inserted before the old ones are gone.
   */
  takenKeys: ReadonlySet<string>;
}

/**
 * Plans the reconciliation of one connection.
 *
 * Throws `AppError('EMPTY_TOOL_LIST')` when nothing was discovered: an empty list is an error that
 * changes nothing (DESIGN.md rule 2), and planning it would delete every operation. The caller is
 * expected to check first; this is the last line of defence.
 *
 * A discovered name listed twice keeps its first occurrence; later ones are reported in `skipped`.
 */
export function reconcile(
  stored: readonly StoredOperation[],
  discovered: readonly DiscoveredOperation[],
  ctx: ReconcileContext,
): ReconcilePlan {
  if (discovered.length === 0) {
    throw new AppError('EMPTY_TOOL_LIST', 'reconcile requires at least one discovered operation');
  }

  // The first stored row of a name is the one matched. A second row with that name (which a unique
  // constraint should prevent) can never be matched, so it is removed, which heals the data.
  const storedByName = new Map<string, StoredOperation>();
  for (const op of stored) {
    if (!storedByName.has(op.name)) storedByName.set(op.name, op);
  }

  const taken = new Set(ctx.takenKeys);
  for (const op of stored) taken.add(op.key);

  const add: PlannedAdd[] = [];
  const update: PlannedUpdate[] = [];
  const skipped: ReconcilePlan['skipped'] = [];
  const seen = new Set<string>();

  for (const op of discovered) {
    if (seen.has(op.name)) {
      skipped.push({
        name: op.name,
        reason: 'duplicate name: only the first operation with this name is kept',
      });
      continue;
    }
    seen.add(op.name);

    const existing = storedByName.get(op.name);
    if (existing) {
      update.push(planUpdate(existing, op));
      continue;
    }
    const key = assignKey(operationKey(ctx.connectionSlug, op.name), taken);
    taken.add(key);
    const holds = op.holds ?? [];
    add.push({ op, key, enabled: startsOn(op.risk) && holds.length === 0, reasons: holds });
  }

  const remove = stored.filter((op) => !seen.has(op.name) || storedByName.get(op.name) !== op);

  return {
    add,
    remove,
    update,
    skipped,
    counts: {
      added: add.length,
      removed: remove.length,
      updated: update.filter((u) => u.changed).length,
      flagged: update.filter((u) => u.disable).length + add.filter((a) => a.reasons.length > 0).length,
    },
  };
}

function planUpdate(before: StoredOperation, source: DiscoveredOperation): PlannedUpdate {
  const after: OperationFields = {
    title: source.title,
    description: source.description,
    inputSchema: source.inputSchema,
    // Only where either side has one (OpenAPI unions): MCP tools are checked by their inputSchema.
    ...(source.checkSchema != null || before.checkSchema != null
      ? { checkSchema: source.checkSchema ?? null }
      : {}),
    outputSchema: source.outputSchema ?? null,
    annotations: source.annotations,
    binding: source.binding,
    risk: before.riskSetByAdmin ? before.risk : source.risk,
    sourceRisk: source.risk,
    idempotent: source.idempotent,
  };

  const stored: OperationFields = { ...before, outputSchema: before.outputSchema ?? null };
  const holds = source.holds ?? [];
  // An operation held for want of a callable base was never called: its base moving to the one an
  // admin set (baseUrl) is the release, not a change to review.
  const wasUncallable = before.openReasons.some((r) => r.code === 'BASE_ADDRESS_UNCALLABLE');
  const samePlace = describeEndpoint(before.binding) === describeEndpoint(after.binding);
  const triggered = [
    ...reviewTriggers(stored, after).filter(
      (r) => !(wasUncallable && samePlace && r.code === 'ENDPOINT_CHANGED'),
    ),
    ...holds,
  ];
  const same = (a: ReviewReasonDraft) => (b: ReviewReasonDraft) => a.code === b.code && a.detail === b.detail;
  const newReasons = triggered.filter((r) => !before.openReasons.some(same(r)));
  const disable = triggered.length > 0;
  const resolved = before.openReasons.filter((open) => isHoldCode(open.code) && !holds.some(same(open)));
  const release = resolved.length > 0 && !disable && resolved.length === before.openReasons.length;
  const changedFields = (Object.keys(after) as (keyof OperationFields)[]).filter(
    (field) => !jsonEqual(stored[field] ?? null, after[field] ?? null),
  );

  return {
    id: before.id,
    before,
    after,
    disable,
    newReasons,
    resolved,
    release,
    changed:
      changedFields.length > 0 || newReasons.length > 0 || resolved.length > 0 || (disable && before.enabled),
    changedFields,
  };
}

/** Detail of `ARGUMENTS_UNDESCRIBED` when the schema went free-form and had declared no names. */
export const NO_PROPERTIES_DETAIL = 'input schema no longer lists properties';

/**
 * The review triggers of one refresh, in `REVIEW_CODES` order, one reason per trigger. Only
 * top-level property names count as arguments: nested changes, `required` and `additionalProperties`
 * are refreshed without a review.
 */
export function reviewTriggers(before: OperationFields, after: OperationFields): ReviewReasonDraft[] {
  const reasons: ReviewReasonDraft[] = [];

  // `after.risk` already keeps an admin-set risk, so an admin-set risk can never raise here.
  if (isRiskRaise(before.risk, after.risk)) {
    reasons.push({ code: 'RISK_RAISED', detail: `${before.risk} → ${after.risk}` });
  }

  const oldNames = propertyNames(before.inputSchema);
  const newNames = propertyNames(after.inputSchema);

  if (newNames) {
    const added = newNames.filter((n) => !oldNames?.includes(n));
    if (added.length > 0) reasons.push({ code: 'ARGUMENTS_ADDED', detail: listNames(added) });
    const gone = (oldNames ?? []).filter((n) => !newNames.includes(n));
    if (gone.length > 0) reasons.push({ code: 'ARGUMENTS_UNDESCRIBED', detail: listNames(gone) });
  } else if (oldNames) {
    // Free-form now: whatever it declared is no longer described, and anything may be sent.
    reasons.push({
      code: 'ARGUMENTS_UNDESCRIBED',
      detail: oldNames.length > 0 ? `${listNames(oldNames)} (${NO_PROPERTIES_DETAIL})` : NO_PROPERTIES_DETAIL,
    });
  }

  const oldEndpoint = describeEndpoint(before.binding);
  const newEndpoint = describeEndpoint(after.binding);
  if (oldEndpoint !== newEndpoint) {
    reasons.push({ code: 'ENDPOINT_CHANGED', detail: `${oldEndpoint} → ${newEndpoint}` });
  } else if (originOf(before.binding) !== originOf(after.binding)) {
    // The same method and path on another host: the credential would now go elsewhere.
    reasons.push({
      code: 'ENDPOINT_CHANGED',
      detail: `${originOf(before.binding)} → ${originOf(after.binding)}`,
    });
  }

  return reasons;
}

/** Top-level property names, or `null` when the schema lists no `properties` object (free-form). */
function propertyNames(schema: JsonObject): string[] | null {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return null;
  return Object.keys(properties);
}

/** Sorted by code unit, not locale, so the detail (and the duplicate check on it) is stable. */
function listNames(names: string[]): string {
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(', ');
}

/**
 * Scheme, host and port of an operation's base address, by the rule key holds use
 * (`key-origins.ts#originOf`); a path prefix change is not a new host. An address with no http(s)
 * origin is compared as written.
 */
function originOf(binding: OpenApiBinding | null): string {
  if (!binding) return 'none';
  return originOfUrl(binding.baseUrl) ?? binding.baseUrl;
}

/** `GET /pets/{id}`; `none` for an operation without a binding (MCP). Only method and path count. */
function describeEndpoint(binding: OpenApiBinding | null): string {
  return binding ? `${binding.method} ${binding.path}` : 'none';
}

/**
 * Deep equality of JSON-like values: object key order is ignored and a property whose value is
 * `undefined` counts as absent, as in the JSON that the database stores. Array order matters.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  // Loops rather than every/filter: a re-discovery compares megabytes of schemas on the event loop.
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (v === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !jsonEqual(v, y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) defined--;
  return defined === 0;
}
