/**
 * Risk of an operation (pure). `READ` operations have no side effect; anything else is `WRITE`,
 * which means a ledger row per call attempt and, on refresh, a review when the risk goes up.
 * When in doubt the answer is `WRITE`: calling a reading tool "write" costs a review, calling a
 * writing tool "read" lets it run unreviewed.
 */
import { type JsonObject, type Risk } from './types.js';

/**
 * Risk of an MCP tool from its annotations (tool contract, "Risk from annotations"): `READ` only
 * when `readOnlyHint` is the boolean `true` and `destructiveHint` is not the boolean `true`.
 * A missing annotations object, or a hint given as a string such as `"true"`, means `WRITE`.
 */
export function riskFromAnnotations(annotations: JsonObject | null | undefined): Risk {
  if (!annotations) return 'WRITE';
  return annotations.readOnlyHint === true && annotations.destructiveHint !== true ? 'READ' : 'WRITE';
}

/**
 * Risk of an OpenAPI operation from its HTTP method (tool contract, "Risk from the method"): `GET`
 * and `HEAD` are `READ`, every other method is `WRITE`. The method is matched case-insensitively,
 * since descriptions key their operations by lower-case method.
 */
export function riskFromMethod(method: string): Risk {
  const upper = method.toUpperCase();
  return upper === 'GET' || upper === 'HEAD' ? 'READ' : 'WRITE';
}

const RANK: Record<Risk, number> = { READ: 0, WRITE: 1 };

/** True when going from `before` to `after` raises the risk, which is `READ` → `WRITE`. */
export function isRiskRaise(before: Risk, after: Risk): boolean {
  return RANK[after] > RANK[before];
}

/**
 * The one risk an operation is on with when discovery adds it, or when its holds clear (DESIGN.md
 * rule 1; the newer contract page): `READ`. Any other risk starts off until an operator turns it
 * on. {@link startsOn} in TypeScript; the refresh's SQL compares with this constant.
 */
export const ON_BY_DEFAULT_RISK: Risk = 'READ';

/** True when an operation of this risk starts on (with nothing holding it). */
export function startsOn(risk: Risk): boolean {
  return risk === ON_BY_DEFAULT_RISK;
}
