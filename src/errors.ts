/**
 * One base error class with stable string codes. Foreign errors (undici, pg, JSON-RPC) are
 * translated where they enter the service, keeping the original as `cause`.
 */
export class AppError extends Error {
  override readonly name: string = 'AppError';
  constructor(
    /** Stable, machine-readable code, such as `DESCRIPTION_TOO_LARGE`. Never contains secrets. */
    readonly code: string,
    message: string,
    options: { cause?: unknown; data?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.data = options.data ?? {};
  }

  /** Structured, secret-free details of the failure, such as `{ status }`. */
  readonly data: Readonly<Record<string, unknown>>;
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * The codes a domain failure may carry all the way to the API's caller. `formatError`
 * (`http/server.ts`) is the one place that turns an AppError into a GraphQL error: these codes
 * pass as they are, with their message; every other AppError reaching it is masked as INTERNAL.
 */
export const PUBLIC_ERROR_CODES = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT'] as const;

/** Missing, or in another workspace (existence must not leak across workspaces). */
export function notFoundError(what = 'object'): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}

/** The caller's role does not allow this. */
export function forbiddenError(message = 'your role does not allow this'): AppError {
  return new AppError('FORBIDDEN', message);
}
