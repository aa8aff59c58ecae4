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
