import 'reflect-metadata';
import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { limitRules } from '../../../src/graphql/limits.js';
import { formatErrorFor } from '../../../src/http/format-error.js';
import { connectionToken, validateForSocket } from '../../../src/http/graphql-ws-rules.js';
import { liveness, readiness } from '../../../src/http/health-routes.js';
import { ListenError, listenError } from '../../../src/http/listen.js';
import { GraphQLError } from 'graphql';

describe('liveness and readiness', () => {
  it('should be alive until the server drains', () => {
    expect(liveness(false)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(liveness(true)).toEqual({ status: 503, body: { status: 'draining' } });
  });

  it('should be ready only with the database up, no migration pending and not draining', () => {
    expect(readiness({ state: 'up', pendingMigrations: 0 }, false)).toEqual({
      status: 200,
      body: { status: 'ready' },
    });
    expect(readiness({ state: 'up', pendingMigrations: 2 }, false)).toEqual({
      status: 503,
      body: { status: 'not ready', pendingMigrations: 2, draining: false },
    });
    expect(readiness({ state: 'up', pendingMigrations: 0 }, true)).toEqual({
      status: 503,
      body: { status: 'not ready', pendingMigrations: 0, draining: true },
    });
  });

  it.each(['restarting', 'failed', 'unreachable'] as const)(
    'should not be ready while the database is %s, and say so',
    (state) => {
      expect(readiness({ state }, false)).toEqual({
        status: 503,
        body: { status: 'not ready', database: state },
      });
    },
  );
});

describe('connectionToken', () => {
  it.each([
    ['authorization with Bearer', { authorization: 'Bearer tok-1' }, undefined, 'tok-1'],
    ['Authorization without Bearer', { Authorization: 'tok-2' }, undefined, 'tok-2'],
    ['token', { token: 'tok-3' }, undefined, 'tok-3'],
    ['the upgrade header when connection_init has none', {}, 'Bearer tok-4', 'tok-4'],
    ['connection_init before the upgrade header', { authorization: 'tok-5' }, 'Bearer other', 'tok-5'],
    ['authorization before token', { authorization: 'a', token: 'b' }, undefined, 'a'],
  ])('should take %s', (_name, params, header, token) => {
    expect(connectionToken(params, header)).toBe(token);
  });

  it('should find no token in a non-string value or nowhere', () => {
    expect(connectionToken({ authorization: 42 }, 'Bearer tok')).toBeNull();
    expect(connectionToken(undefined, undefined)).toBeNull();
  });
});

describe('validateForSocket', () => {
  const schema = buildSchema('type Query { a: Int, b(n: Int!): Int }');

  it("should code graphql's own validation errors as Apollo does over HTTP", () => {
    const errors = validateForSocket(schema, parse('{ nope }'), []);
    expect(errors.map((e) => e.extensions.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('should apply the limit rules with their own codes', () => {
    const deep = parse(`{ ${Array.from({ length: 60 }, (_, i) => `x${i}: a`).join(' ')} }`);
    const errors = validateForSocket(schema, deep, limitRules({ maxAliases: 10 }));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => typeof e.extensions.code === 'string')).toBe(true);
    expect(errors.some((e) => e.extensions.code !== 'GRAPHQL_VALIDATION_FAILED')).toBe(true);
  });

  it('should pass a valid document', () => {
    expect(validateForSocket(schema, parse('{ a b(n: 1) }'), limitRules({}))).toEqual([]);
  });
});

describe('formatErrorFor', () => {
  const logged: unknown[] = [];
  const format = formatErrorFor({ logger: { error: (obj: unknown) => logged.push(obj) } as never });

  it('should show our coded errors and mask the rest, logging it', () => {
    const forbidden = new GraphQLError('no', { extensions: { code: 'FORBIDDEN' } });
    expect(format(forbidden.toJSON(), forbidden)).toEqual({
      message: 'no',
      extensions: { code: 'FORBIDDEN' },
    });
    const internal = new GraphQLError('relation "x" does not exist', { originalError: new Error('driver') });
    expect(format(internal.toJSON(), internal)).toEqual({
      message: 'Internal server error',
      extensions: { code: 'INTERNAL' },
    });
    expect(logged).toHaveLength(1);
  });

  it("should replace Apollo's CSRF refusal with what to send", () => {
    const csrf = new GraphQLError(
      'This operation has been blocked as a potential Cross-Site Request Forgery (CSRF).',
      {
        extensions: { code: 'BAD_REQUEST' },
      },
    );
    const shown = format(csrf.toJSON(), csrf);
    expect(shown.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expect(shown.message).toContain('apollo-require-preflight');
  });
});

describe('listenError', () => {
  it.each([
    ['EADDRINUSE', /port 8080 on 0\.0\.0\.0 is already in use.*set PORT/],
    ['EACCES', /not allowed to listen on port 8080.*set PORT/],
    ['EADDRNOTAVAIL', /cannot listen on 0\.0\.0\.0.*set HOST/],
    ['ENOTFOUND', /cannot listen on 0\.0\.0\.0.*set HOST/],
  ])('should name the setting to change for %s', (code, line) => {
    const err = Object.assign(new Error('x'), { code });
    const made = listenError(err, '0.0.0.0', 8080);
    expect(made).toBeInstanceOf(ListenError);
    expect(made.message).toMatch(line);
    expect(made.cause).toBe(err);
  });

  it('should leave an error it does not know as it is', () => {
    const err = Object.assign(new Error('x'), { code: 'EPERM' });
    expect(listenError(err, 'h', 1)).toBe(err);
  });
});
