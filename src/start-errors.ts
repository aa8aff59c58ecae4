/**
 * Why the service could not start, as one line that names the setting to change (pure). Used by
 * main.ts instead of a stack trace for the failures a newcomer meets: the port is taken, the
 * database cannot be reached or refuses us.
 */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is PostgreSQL running there?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the connection was reset',
};

/** PostgreSQL refusals at connect time (SQLSTATE), with what to fix. */
const SQLSTATE_REASONS: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user is not allowed to connect',
  '57P03': 'the server is starting up or shutting down; try again shortly',
  '53300': 'the server has too many connections',
};

function codesOf(err: unknown, depth = 0): string[] {
  if (typeof err !== 'object' || err === null || depth > 5) return [];
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...nested, ...codesOf(e.cause, depth + 1)];
}

/** The database name and `host:port` of a postgres URL (never its user or password), or null. */
function databaseParts(databaseUrl: string): { database: string; server: string } | null {
  try {
    const u = new URL(databaseUrl);
    return { database: decodeURIComponent(u.pathname.slice(1)), server: `${u.hostname}:${u.port || '5432'}` };
  } catch {
    return null;
  }
}

/**
 * The line for a database name that the server does not have (a typo such as `/tset`): the
 * service never creates a database by itself, so it says how to create it or what to fix.
 */
export function missingDatabaseLine(databaseUrl: string, setting = 'DATABASE_URL'): string {
  const parts = databaseParts(databaseUrl);
  if (parts === null) return `the database named in ${setting} does not exist; create it or fix ${setting}`;
  const { database, server } = parts;
  const arg = /^[A-Za-z0-9_]+$/.test(database) ? database : `'${database.replaceAll("'", `'\\''`)}'`;
  return `database "${database}" does not exist on ${server}; create it (createdb ${arg}) or fix ${setting}`;
}

/** `host:port/database` of a postgres URL, never its user or password. */
export function databaseTarget(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured server';
  }
}

/**
 * One line for a start failure caused by the database named in DATABASE_URL, or null when the
 * error is something else. Never includes the URL's credentials or the driver's message.
 */
export function databaseStartFailure(err: unknown, databaseUrl: string | null): string | null {
  if (databaseUrl === null) return null;
  const codes = codesOf(err);
  if (codes.includes('3D000')) return missingDatabaseLine(databaseUrl);
  const reason =
    codes.map((c) => NETWORK_REASONS[c]).find((r) => r !== undefined) ??
    codes.map((c) => SQLSTATE_REASONS[c]).find((r) => r !== undefined);
  if (reason === undefined) return null;
  return `cannot use the database at DATABASE_URL (${databaseTarget(databaseUrl)}): ${reason}. Fix DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR.`;
}

/** Start failures that already carry their one line (their classes live with the I/O code). */
const ONE_LINE_ERRORS = new Set(['ListenError', 'MissingDatabaseError']);

/**
 * The one line for any start failure a newcomer meets (a port in use, a database that cannot be
 * used), or null for anything else (then the caller logs the error with its stack).
 */
export function startFailureLine(err: unknown, databaseUrl: string | null): string | null {
  if (err instanceof Error && ONE_LINE_ERRORS.has(err.name)) return err.message;
  return databaseStartFailure(err, databaseUrl);
}
