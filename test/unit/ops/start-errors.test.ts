import { describe, expect, it } from 'vitest';
import { requestIdOf, routeOf } from '../../../src/http/request-log.js';
import {
  databaseStartFailure,
  databaseTarget,
  missingDatabaseLine,
  startFailureLine,
} from '../../../src/start-errors.js';

const URL_WITH_PASSWORD = 'postgres://app:hunter2-secret@db.internal:6543/tools';

describe('databaseStartFailure', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, /connection refused/],
    [new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]), /connection refused/],
    [new Error('wrapped', { cause: { code: 'ENOTFOUND' } }), /no such host/],
    [{ code: '28P01' }, /password was refused/],
  ])('should name DATABASE_URL and the reason, never the password (%#)', (err, reason) => {
    const line = databaseStartFailure(err, URL_WITH_PASSWORD);
    expect(line).toMatch(reason);
    expect(line).toContain('DATABASE_URL (db.internal:6543/tools)');
    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('app:');
  });

  it('should name a missing database, its server and how to create it, never the password', () => {
    expect(databaseStartFailure({ code: '3D000' }, URL_WITH_PASSWORD)).toBe(
      'database "tools" does not exist on db.internal:6543; create it (createdb tools) or fix DATABASE_URL',
    );
  });

  it('should quote a database name the shell would split, and name the setting given', () => {
    expect(missingDatabaseLine("postgres://h/it's%20mine", 'MIGRATION_DATABASE_URL')).toBe(
      `database "it's mine" does not exist on h:5432; create it (createdb 'it'\\''s mine') or fix MIGRATION_DATABASE_URL`,
    );
  });

  it('should leave other errors and the embedded database alone', () => {
    expect(databaseStartFailure(new Error('boom'), URL_WITH_PASSWORD)).toBeNull();
    expect(databaseStartFailure({ code: 'ECONNREFUSED' }, null)).toBeNull();
  });

  it('should default the port', () => {
    expect(databaseTarget('postgres://x@localhost/db')).toBe('localhost:5432/db');
  });
});

describe('startFailureLine', () => {
  it('should pass the one line of a port or database error through, and map driver errors', () => {
    const listen = Object.assign(new Error('port 4000 on 127.0.0.1 is already in use'), {
      name: 'ListenError',
    });
    expect(startFailureLine(listen, null)).toBe('port 4000 on 127.0.0.1 is already in use');
    expect(startFailureLine({ code: 'ECONNREFUSED' }, URL_WITH_PASSWORD)).toMatch(/connection refused/);
  });

  it('should give null for anything else, so the caller logs its stack', () => {
    expect(startFailureLine(new Error('boom'), URL_WITH_PASSWORD)).toBeNull();
    expect(startFailureLine(new TypeError('x'), null)).toBeNull();
  });
});

describe('requestIdOf', () => {
  it.each([
    ['abc-123', 'abc-123'],
    ['a.b:c/d+e=f_g', 'a.b:c/d+e=f_g'],
    ['x'.repeat(128), 'x'.repeat(128)],
  ])('should keep %s', (given, kept) => {
    expect(requestIdOf({ headers: { 'x-request-id': given } })).toBe(kept);
  });

  it.each([['x'.repeat(129)], ['a b'], ['a\u0000b'], ['ü'], ['']])(
    'should replace %j with a UUID',
    (given) => {
      expect(requestIdOf({ headers: { 'x-request-id': given } })).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('should make one when none is given', () => {
    expect(requestIdOf({ headers: {} })).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('routeOf', () => {
  it('should keep the fixed routes and fold everything else', () => {
    expect(routeOf('/graphql')).toBe('/graphql');
    expect(routeOf('/debugger/app.js')).toBe('/debugger');
    expect(routeOf('/wp-admin/x.php')).toBe('other');
  });
});
