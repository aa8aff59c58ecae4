/**
 * How an error is written to a log line (pino's `err` serializer). Pure: no I/O.
 *
 * Database errors carry data: knex prefixes the driver's message with the statement, its values
 * filled in (`insert into turn_call (...) values ('{"email":"..."}', ...) - <message>`), and
 * PostgreSQL's own message and `detail` quote values too (`invalid input syntax for type uuid:
 * "..."`, `Failing row contains (...)`). Whatever class wraps them (pg's `DatabaseError`,
 * MikroORM's `DriverException` subclasses, which copy every property of the original), such an
 * error is logged as its class, SQLSTATE and PostgreSQL's structural fields (constraint, table,
 * column, routine) plus the statement's shape: the operation and the relation it names. Never
 * its message, detail, hint, `where` or internal query.
 *
 * Other errors keep their class, `code`, a capped message and their stack frames. A `cause` is
 * written the same way, so a database error wrapped in an `AppError` is still stripped.
 */

/** Characters of a non-database error message kept in a log line. */
export const MAX_LOGGED_MESSAGE_CHARS = 500;
/** Levels of `cause` followed. */
const MAX_CAUSE_DEPTH = 4;
/** Stack frames kept. */
const MAX_FRAMES = 20;

export interface LoggedError {
  type: string;
  message: string;
  code?: string;
  /** SQLSTATE of a database error (`23505`). */
  sqlState?: string;
  severity?: string;
  constraint?: string;
  table?: string;
  column?: string;
  schema?: string;
  dataType?: string;
  /** The PostgreSQL function that raised it (`_bt_check_unique`): where, not what. */
  routine?: string;
  /** The statement's shape: its operation and first relation, never its values (`insert into turn_call`). */
  statement?: string;
  stack?: string;
  cause?: LoggedError;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
/** PostgreSQL's fields that name things of the schema, never values. */
const STRUCTURAL_FIELDS = [
  'severity',
  'constraint',
  'table',
  'column',
  'schema',
  'dataType',
  'routine',
] as const;

type Bag = Record<string, unknown>;

function stringField(err: Bag, key: string): string | undefined {
  const value = err[key];
  return typeof value === 'string' && value !== '' ? value.slice(0, 200) : undefined;
}

/**
 * Whether this error came from the database driver: a MikroORM `DriverException` (it has
 * `sqlState` or copies pg's fields) or pg's own `DatabaseError` (SQLSTATE `code` with `severity`
 * or `routine`).
 */
export function isDatabaseError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const bag = err as Bag;
  if (typeof bag.sqlState === 'string') return true;
  return (
    typeof bag.code === 'string' &&
    SQLSTATE.test(bag.code) &&
    (typeof bag.severity === 'string' || typeof bag.routine === 'string')
  );
}

const OPERATION =
  /\b(insert\s+into|update|delete\s+from|from)\s+("[^"]{1,63}"|[A-Za-z_][\w$]{0,62})(?:\s*\.\s*("[^"]{1,63}"|[A-Za-z_][\w$]{0,62}))?/i;
const FIRST_WORD = /^\s*([A-Za-z]+)/;

/**
 * The shape of the statement at the head of a knex message: its first keyword and the first
 * relation it reads or writes (`with: insert into turn_call`). Only the text before the first
 * quote is read, where no value has been filled in yet.
 */
export function statementShape(message: string): string | undefined {
  const dash = message.indexOf(' - ');
  if (dash < 0) return undefined;
  let head = message.slice(0, dash);
  const quote = head.search(/['$]/);
  if (quote >= 0) head = head.slice(0, quote);
  const first = FIRST_WORD.exec(head)?.[1]?.toLowerCase();
  if (first === undefined) return undefined;
  const op = OPERATION.exec(head);
  if (op === null) return first;
  const verb = (op[1] as string).toLowerCase().replace(/\s+/g, ' ');
  const relation = [op[2], op[3]]
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/"/g, ''))
    .join('.');
  const main = `${verb === 'from' ? 'select from' : verb} ${relation}`;
  return main.startsWith(first) ? main : `${first}: ${main}`;
}

function frames(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const lines = stack.split('\n').filter((l) => /^\s+at /.test(l));
  return lines.length > 0 ? lines.slice(0, MAX_FRAMES).join('\n') : undefined;
}

function typeOf(err: object): string {
  const ctor = (err as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'Error';
  return name === 'Object' ? 'Error' : name;
}

function capped(message: string): string {
  return message.length > MAX_LOGGED_MESSAGE_CHARS
    ? `${message.slice(0, MAX_LOGGED_MESSAGE_CHARS)}… (${message.length} characters)`
    : message;
}

/** pino's `err` serializer: the error as a plain object that holds no values of a database statement. */
export function serializeError(err: unknown, depth = 0): LoggedError {
  if (typeof err !== 'object' || err === null) {
    return { type: typeof err, message: capped(String(err)) };
  }
  const bag = err as Bag;
  const type = typeOf(err);
  let out: LoggedError;
  if (isDatabaseError(err)) {
    const code = stringField(bag, 'code');
    const sqlState =
      stringField(bag, 'sqlState') ?? (code !== undefined && SQLSTATE.test(code) ? code : undefined);
    out = { type, message: '', code, sqlState };
    for (const key of STRUCTURAL_FIELDS) {
      const value = stringField(bag, key);
      if (value !== undefined) out[key] = value;
    }
    const statement = typeof bag.message === 'string' ? statementShape(bag.message) : undefined;
    if (statement !== undefined) out.statement = statement;
    out.message = [
      `database error ${sqlState ?? code ?? 'without a code'}`,
      statement !== undefined ? `in ${statement}` : null,
      out.constraint !== undefined ? `(constraint ${out.constraint})` : null,
    ]
      .filter((p) => p !== null)
      .join(' ');
    if (out.code === undefined) delete out.code;
    if (out.sqlState === undefined) delete out.sqlState;
  } else {
    let message = typeof bag.message === 'string' ? bag.message : '';
    // JSON.parse quotes the text it failed on, which may be a tool's result.
    if (err instanceof SyntaxError) message = message.replace(/"[^"]*"(?:\.\.\.)?/g, '"[…]"');
    message = capped(message);
    out = { type, message };
    const code = stringField(bag, 'code');
    if (code !== undefined) out.code = code;
  }
  const stack = frames(bag.stack);
  if (stack !== undefined) out.stack = `${type}: ${out.message}\n${stack}`;
  if (bag.cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = serializeError(bag.cause, depth + 1);
  return out;
}
