/**
 * The status of a tool call (pure, a leaf): what callTool answers and what a TurnCall records. The
 * GraphQL enum is registered beside the entity (`turn-call.entity.ts`), which re-exports this one.
 */
export enum CallStatus {
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  /** The tool said isError, or the API answered with a status of 400 or more. */
  TOOL_ERROR = 'TOOL_ERROR',
  UPSTREAM_ERROR = 'UPSTREAM_ERROR',
  TIMEOUT = 'TIMEOUT',
  /** Bad arguments: stopped before any request was made. */
  REJECTED = 'REJECTED',
  /** Unknown name, or a gate is off. */
  UNAVAILABLE = 'UNAVAILABLE',
  /**
   * A rate limit or concurrency cap refused the call (src/guards/): nothing was sent; the result
   * says when to try again (`retryAfterMs`).
   */
  RATE_LIMITED = 'RATE_LIMITED',
  /**
   * Records only, never a callTool answer: a WRITE whose request may have reached the tool server,
   * but whose outcome was never stored (the database failed during the call, or the service died).
   * Closed by the ledger sweep; an operator reconciles it with the tool's own records.
   */
  OUTCOME_UNKNOWN = 'OUTCOME_UNKNOWN',
}

/**
 * The statuses that count as errors (usage, health): every final status but SUCCEEDED. RUNNING is
 * not final. A status added to the enum counts as an error unless it is added to the exceptions.
 */
export const ERROR_STATUSES: readonly CallStatus[] = Object.values(CallStatus).filter(
  (status) => status !== CallStatus.SUCCEEDED && status !== CallStatus.RUNNING,
);

/** True when a call with this status failed ({@link ERROR_STATUSES}). */
export function isErrorStatus(status: CallStatus): boolean {
  return ERROR_STATUSES.includes(status);
}
