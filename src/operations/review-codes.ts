/**
 * Review codes (pure): why a refresh turned an operation off, or held a new one. One list, used by
 * the reconciler, the `review_reason` entity and the GraphQL `ReviewCode` enum.
 */
import { HOLD_CODES } from '../connections/key-origins.js';

/** In the order the reconciler checks its triggers; the holds ({@link HOLD_CODES}) come last. */
export const REVIEW_CODES = [
  'RISK_RAISED',
  'ARGUMENTS_ADDED',
  'ARGUMENTS_UNDESCRIBED',
  'ENDPOINT_CHANGED',
  // KEY_ORIGIN_NOT_GIVEN: calls would go to an origin the connection's key was not given for.
  // BASE_ADDRESS_UNCALLABLE: the description offers no base address to call; an admin sets `baseUrl`.
  ...HOLD_CODES,
] as const;
export type ReviewCode = (typeof REVIEW_CODES)[number];

/** {@link ReviewCode} as an enum-like object, for type-graphql and MikroORM decorators. */
export const ReviewCodes = Object.fromEntries(REVIEW_CODES.map((code) => [code, code])) as {
  readonly [K in ReviewCode]: K;
};

/** True for the codes that hold an operation until their condition clears (the next discovery releases it). */
export function isHoldCode(code: ReviewCode): boolean {
  return (HOLD_CODES as readonly string[]).includes(code);
}
