import { GraphQLError } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { AppError, forbiddenError, notFoundError } from '../../../src/errors.js';
import { formatErrorFor } from '../../../src/http/format-error.js';

/** The one place where a domain error becomes a GraphQL error: what a caller sees of each. */
function format(thrown: unknown) {
  const logger = { error: vi.fn() };
  const wrapped = new GraphQLError(thrown instanceof Error ? thrown.message : 'x', {
    path: ['field'],
    originalError: thrown instanceof Error ? thrown : undefined,
  });
  // Apollo gives a non-GraphQL original error the INTERNAL_SERVER_ERROR code before formatting.
  const formatted = { ...wrapped.toJSON(), extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  const out = formatErrorFor({ logger } as never)(formatted, wrapped);
  return { out, logged: logger.error.mock.calls.length };
}

describe('formatError: AppError → GraphQL error', () => {
  it('passes a domain NOT_FOUND or FORBIDDEN as it is, with its message and path', () => {
    expect(format(notFoundError('turn')).out).toEqual({
      message: 'turn not found',
      locations: undefined,
      path: ['field'],
      extensions: { code: 'NOT_FOUND' },
    });
    const forbidden = format(forbiddenError('an admin review is needed'));
    expect(forbidden.out.extensions).toEqual({ code: 'FORBIDDEN' });
    expect(forbidden.out.message).toBe('an admin review is needed');
    expect(forbidden.logged).toBe(0);
  });

  it('masks any other AppError as INTERNAL, and logs it', () => {
    const { out, logged } = format(new AppError('UPSTREAM_SECRET_DETAIL', 'db said: password=hunter2'));
    expect(out).toEqual({
      message: 'Internal server error',
      path: ['field'],
      extensions: { code: 'INTERNAL' },
    });
    expect(logged).toBe(1);
  });

  it('masks a plain Error as INTERNAL', () => {
    expect(format(new Error('boom')).out.extensions).toEqual({ code: 'INTERNAL' });
  });
});
