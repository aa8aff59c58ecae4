import { GraphQLError } from 'graphql';

/**
 * Top-level error codes (`extensions.code`). What a user can fix inside a mutation goes in the
 * payload's `userErrors` instead.
 */
export type ErrorCode = 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'BAD_USER_INPUT' | 'INTERNAL';

export function apiError(code: ErrorCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

export const unauthenticated = (message = 'a valid API token is required (Authorization: Bearer …)') =>
  apiError('UNAUTHENTICATED', message);
export const forbidden = (message = 'your role does not allow this') => apiError('FORBIDDEN', message);
export const notFound = (what = 'object') => apiError('NOT_FOUND', `${what} not found`);
export const badInput = (message: string) => apiError('BAD_USER_INPUT', message);
