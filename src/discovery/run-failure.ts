/**
 * How a discovery run fails: the codes of its own failures, what a person is told of any
 * failure, and the connection's status after one.
 */
import { DriverException } from '@mikro-orm/postgresql';
import { ConnectionStatus, CredentialKind } from '../connections/connection.entity.js';
import { AppError, isAppError } from '../errors.js';
import { DISCOVERY_INTERRUPTED } from './recovery.js';

/** The error code of a run overtaken by a newer one of the same connection. */
export const SUPERSEDED = 'SUPERSEDED';

/** The error code of a run that did not finish within `discoveryDeadlineMs`. */
export const DISCOVERY_DEADLINE_EXCEEDED = 'DISCOVERY_DEADLINE_EXCEEDED';

export function superseded(): AppError {
  return new AppError(
    SUPERSEDED,
    'a discovery that started later has already applied a newer listing; this run changed nothing',
  );
}

export function interrupted(): AppError {
  return new AppError(
    DISCOVERY_INTERRUPTED,
    'this discovery was closed as interrupted before it could apply; nothing was changed',
  );
}

export function deadlineExceeded(deadlineMs: number): AppError {
  return new AppError(
    DISCOVERY_DEADLINE_EXCEEDED,
    `the discovery did not finish within ${Math.round(deadlineMs / 1000)} s; nothing was changed`,
  );
}

/** PostgreSQL gave up waiting for a lock (lock_timeout) or on a statement (statement_timeout). */
export function isDatabaseTimeout(err: unknown): boolean {
  return err instanceof DriverException && (err.code === '55P03' || err.code === '57014');
}

/** Settles like `promise`, or rejects with the signal's reason when it fires first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined); // may settle after the deadline: never unhandled
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

/**
 * The connection's status after a failed run. A 401 asks for a sign-in only where a sign-in can
 * help: a connection with its own key that the server refuses needs a new key, not OAuth.
 */
export function statusAfterFailure(code: string, credential: CredentialKind): ConnectionStatus {
  if (
    code === 'AUTH_REQUIRED' &&
    (credential === CredentialKind.NONE || credential === CredentialKind.OAUTH)
  ) {
    return ConnectionStatus.NEEDS_SIGN_IN;
  }
  return ConnectionStatus.FAILED;
}

/** A message for people: our own coded errors as they are, anything else masked. */
export function describeFailure(err: unknown): { code: string; message: string } {
  // Credentials that could not be obtained because the token endpoint is down are an outage, not
  // a lost sign-in: say so, and keep the connection's sign-in (FAILED, not NEEDS_SIGN_IN).
  if (
    isAppError(err) &&
    err.code === 'AUTH_REQUIRED' &&
    isAppError(err.cause) &&
    err.cause.code === 'TOKEN_ENDPOINT_UNAVAILABLE'
  ) {
    return { code: err.cause.code, message: err.cause.message };
  }
  if (isAppError(err)) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: 'discovery failed because of an internal error; it has been logged' };
}
