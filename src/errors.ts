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
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
