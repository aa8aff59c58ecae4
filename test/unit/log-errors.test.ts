import { Writable } from 'node:stream';
import { CheckConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { MAX_LOGGED_MESSAGE_CHARS, serializeError, statementShape } from '../../src/log-errors.js';
import { createLogger } from '../../src/logger.js';

const SECRET = 'sk-live-4242-customer-note';

/** A pg error as knex leaves it: the statement with its values in front of PostgreSQL's message. */
function pgError(
  sql: string,
  message: string,
  fields: Partial<Record<'code' | 'detail' | 'constraint' | 'table' | 'routine' | 'where' | 'hint', string>>,
): pg.DatabaseError {
  const err = new pg.DatabaseError(`${sql} - ${message}`, 100, 'error');
  err.severity = 'ERROR';
  Object.assign(err, fields);
  return err;
}

const CHECK_FAILURE = () =>
  pgError(
    `with c as (insert into turn_call (id, arguments) values ('0192', '{"note":"${SECRET}"}'::jsonb) returning id) select 1`,
    'new row for relation "turn_call" violates check constraint "turn_call_note_check"',
    {
      code: '23514',
      detail: `Failing row contains (0192, {"note": "${SECRET}"}).`,
      constraint: 'turn_call_note_check',
      table: 'turn_call',
      routine: 'ExecConstraints',
      where: `SQL function with argument ${SECRET}`,
      hint: `try ${SECRET}`,
    },
  );

describe('serializeError', () => {
  it('should log a pg error as class, SQLSTATE, constraint and statement shape, without its values', () => {
    const logged = serializeError(CHECK_FAILURE());
    expect(JSON.stringify(logged)).not.toContain(SECRET);
    expect(logged).toMatchObject({
      type: 'DatabaseError',
      code: '23514',
      sqlState: '23514',
      severity: 'ERROR',
      constraint: 'turn_call_note_check',
      table: 'turn_call',
      routine: 'ExecConstraints',
      statement: 'with: insert into turn_call',
      message: 'database error 23514 in with: insert into turn_call (constraint turn_call_note_check)',
    });
    expect(logged.stack).toMatch(/^DatabaseError: database error 23514/);
  });

  it('should strip a MikroORM DriverException the same way, keeping its class', () => {
    const logged = serializeError(
      new UniqueConstraintViolationException(
        pgError(
          `insert into "connection" ("slug", "name") values ('${SECRET}', 'x')`,
          `duplicate key value violates unique constraint "connection_workspace_slug_unique"`,
          {
            code: '23505',
            detail: `Key (workspace_id, slug)=(1, ${SECRET}) already exists.`,
            constraint: 'connection_workspace_slug_unique',
            table: 'connection',
          },
        ),
      ),
    );
    expect(JSON.stringify(logged)).not.toContain(SECRET);
    expect(logged).toMatchObject({
      type: 'UniqueConstraintViolationException',
      sqlState: '23505',
      constraint: 'connection_workspace_slug_unique',
      statement: 'insert into connection',
    });
  });

  it("should drop PostgreSQL's own message, which quotes values", () => {
    const logged = serializeError(
      pgError(`select '${SECRET}'::uuid as x`, `invalid input syntax for type uuid: "${SECRET}"`, {
        code: '22P02',
        routine: 'string_to_uuid',
      }),
    );
    expect(JSON.stringify(logged)).not.toContain(SECRET);
    expect(logged).toMatchObject({ sqlState: '22P02', routine: 'string_to_uuid', statement: 'select' });
  });

  it('should strip a database error found as the cause of another error', () => {
    const wrapped = new AppError('RECORD_FAILED', 'the call could not be recorded', {
      cause: new CheckConstraintViolationException(CHECK_FAILURE()),
    });
    const logged = serializeError(wrapped);
    expect(JSON.stringify(logged)).not.toContain(SECRET);
    expect(logged).toMatchObject({
      type: 'AppError',
      code: 'RECORD_FAILED',
      message: 'the call could not be recorded',
      cause: { type: 'CheckConstraintViolationException', sqlState: '23514' },
    });
  });

  it('should keep the class, code and message of other errors, capped', () => {
    const err = new AppError('DESCRIPTION_INVALID', 'x'.repeat(MAX_LOGGED_MESSAGE_CHARS + 50));
    const logged = serializeError(err);
    expect(logged.type).toBe('AppError');
    expect(logged.code).toBe('DESCRIPTION_INVALID');
    expect(logged.message).toHaveLength(MAX_LOGGED_MESSAGE_CHARS + '… (550 characters)'.length);
    expect(logged.stack).toMatch(/\n\s+at /);
  });

  it('should not repeat the text JSON.parse failed on', () => {
    let err: unknown;
    try {
      JSON.parse(`{"result": ${SECRET}}`);
    } catch (e) {
      err = e;
    }
    const logged = serializeError(err);
    expect(logged.type).toBe('SyntaxError');
    expect(JSON.stringify(logged)).not.toContain('sk-live');
  });

  it('should keep no other property of an error, where data may hide', () => {
    const err = Object.assign(new Error('boom'), { args: { email: SECRET }, response: SECRET });
    expect(JSON.stringify(serializeError(err))).not.toContain(SECRET);
  });

  it('should serialize what is not an error', () => {
    expect(serializeError('plain')).toEqual({ type: 'string', message: 'plain' });
    expect(serializeError(null)).toEqual({ type: 'object', message: 'null' });
  });
});

describe('statementShape', () => {
  it.each([
    [`insert into "turn_event" ("a") values ('x') - m`, 'insert into turn_event'],
    [`update "operation" set "enabled" = true where "id" = '1' - m`, 'update operation'],
    [`delete from "operation" where "id" in ('1') - m`, 'delete from operation'],
    [
      `select "c0".* from "public"."connection" as "c0" where "c0"."id" = '1' - m`,
      'select from public.connection',
    ],
    [`select 'from secret' - m`, 'select'],
    [`with c as (update turn set x = 1) select 1 - m`, 'with: update turn'],
    ['no separator', undefined],
  ])('%s → %s', (message, shape) => {
    expect(statementShape(message)).toBe(shape);
  });
});

describe('createLogger', () => {
  it('should write a database error under err without the values of its statement', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString('utf8'));
        callback();
      },
    });
    const logger = createLogger('info', sink);
    logger.error({ err: CHECK_FAILURE() }, 'could not record a tool call');
    logger.error(CHECK_FAILURE(), 'as the first argument');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain(SECRET);
      expect(JSON.parse(line)).toMatchObject({
        err: { sqlState: '23514', constraint: 'turn_call_note_check' },
      });
    }
  });

  it('should write to stdout synchronously when given no destination', () => {
    const logger = createLogger('info');
    const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as {
      fd: number;
      sync: boolean;
    };
    expect(stream).toMatchObject({ fd: 1, sync: true });
  });
});
