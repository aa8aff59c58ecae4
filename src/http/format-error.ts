/**
 * What a GraphQL error shows its caller, over HTTP and WebSocket alike: our coded errors as they
 * are, input errors as BAD_USER_INPUT, and everything else masked as INTERNAL (internal messages —
 * driver text, stack traces, upstream bodies — are logged, never shown).
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isAppError, PUBLIC_ERROR_CODES } from '../errors.js';
import type { Logger } from '../logger.js';

const PASSTHROUGH_CODES = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'TOO_MANY_SUBSCRIPTIONS',
]);
/** Domain failures (AppError codes) a caller sees as they are: services throw these, not GraphQL errors. */
const PUBLIC_APP_CODES: ReadonlySet<string> = new Set(PUBLIC_ERROR_CODES);
/** Coded failures of a live stream (AppError codes), shown to the subscriber as they are. */
const STREAM_CODES = new Set(['REPLAY_LIMIT_EXCEEDED', 'SUBSCRIBER_TOO_SLOW']);
const INPUT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** The start of Apollo's CSRF-prevention refusal, replaced by a message that says what to send. */
const CSRF_BLOCKED = 'This operation has been blocked as a potential Cross-Site Request Forgery';
const CSRF_MESSAGE =
  'GET queries (and POSTs whose content-type is not application/json) need the header "apollo-require-preflight: true" (any non-empty value): a browser cannot send it cross-site without asking first, so another site cannot make your browser run queries';

export type FormatError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

/** Masks everything that is not one of our coded errors; what is masked is logged. */
export function formatErrorFor(services: { logger: Logger }): FormatError {
  return (formatted, error) => {
    const code = formatted.extensions?.code as string | undefined;
    if (code && PASSTHROUGH_CODES.has(code)) {
      return {
        message: formatted.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code },
      };
    }
    if (code && INPUT_CODES.has(code)) {
      return {
        message: formatted.message.startsWith(CSRF_BLOCKED) ? CSRF_MESSAGE : formatted.message,
        locations: formatted.locations,
        extensions: { code: 'BAD_USER_INPUT' },
      };
    }
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (isAppError(original) && PUBLIC_APP_CODES.has(original.code)) {
      return {
        message: original.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: original.code },
      };
    }
    if (isAppError(original) && STREAM_CODES.has(original.code)) {
      return { message: original.message, path: formatted.path, extensions: { code: original.code } };
    }
    services.logger.error({ err: original, path: formatted.path }, 'internal error in a GraphQL request');
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL' } };
  };
}
