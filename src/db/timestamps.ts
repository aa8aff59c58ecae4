/**
 * Timestamps read through raw SQL (pure).
 *
 * MikroORM installs `pg` type parsers that hand `timestamp`/`timestamptz` back as text
 * (`2026-11-30 20:20:45.184735+00`), so a row read with `execute()` carries strings where an
 * entity would carry `Date`s. Every raw read of a timestamp goes through `fromSqlTimestamp`.
 */

/** `YYYY-MM-DD[ T]HH:MM:SS[.ffffff][Z|±HH[:MM[:SS]]]`, as PostgreSQL prints timestamps. */
const PATTERN =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/;

/**
 * A PostgreSQL timestamp as a `Date` (millisecond precision). Text without an offset is UTC,
 * which is how `timestamp without time zone` columns are written here. A `Date` passes through.
 * Anything else throws: a value that cannot be a timestamp is a bug to see, not a date to guess.
 */
export function fromSqlTimestamp(value: string | Date): Date {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError('invalid Date from the database');
    return value;
  }
  const m = PATTERN.exec(value.trim());
  if (!m) throw new TypeError(`not a PostgreSQL timestamp: ${JSON.stringify(value.slice(0, 40))}`);
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om, os] = m;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (!z && sign) {
    const offset = (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0)) * 1000;
    t += sign === '+' ? -offset : offset;
  }
  const date = new Date(t);
  if (Number.isNaN(date.getTime()))
    throw new TypeError(`not a PostgreSQL timestamp: ${JSON.stringify(value)}`);
  return date;
}

/** Like `fromSqlTimestamp`, for nullable columns. */
export function fromSqlTimestampOrNull(value: string | Date | null | undefined): Date | null {
  return value === null || value === undefined ? null : fromSqlTimestamp(value);
}
