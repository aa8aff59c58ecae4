/**
 * The roll-up's marks as the usage query reads them (I/O): one primary-key read of `usage_rollup`,
 * kept for MARKS_MAX_AGE_MS per process. A kept mark is never wrong, only behind (marks only move
 * forward, and rolled-up rows commit with their mark; see parts.ts): a question asked with it reads
 * a little more of the recorded calls. Knowing the marks before the question is planned lets the
 * planner see exact time bounds, so the calls not rolled up are read by index, never all history.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RollupMarks } from './parts.js';

export const MARKS_MAX_AGE_MS = 2_000;

interface Kept {
  marks: Promise<RollupMarks>;
  readAt: number;
}

const kept = new WeakMap<object, Kept>();

async function read(em: EntityManager): Promise<RollupMarks> {
  const rows = await em
    .getConnection()
    .execute<{ hours_until: Date; days_until: Date }[]>(
      `select hours_until, days_until from usage_rollup where id = 1`,
    );
  const row = rows[0];
  if (!row) throw new Error('usage_rollup has no row: the usage migration did not run');
  return {
    hoursUntil: new Date(row.hours_until).getTime(),
    daysUntil: new Date(row.days_until).getTime(),
  };
}

/**
 * The marks, read at most once per MARKS_MAX_AGE_MS for each `owner` (the ORM: one database);
 * questions asked meanwhile share the read. A failed read is not kept.
 */
export async function rollupMarks(
  owner: object,
  em: EntityManager,
  now: () => number = Date.now,
): Promise<RollupMarks> {
  const at = now();
  const current = kept.get(owner);
  if (current && at - current.readAt < MARKS_MAX_AGE_MS) {
    const marks = await current.marks.catch(() => null);
    if (marks) return marks;
  }
  const next: Kept = { marks: read(em), readAt: at };
  kept.set(owner, next);
  try {
    return await next.marks;
  } catch (err) {
    if (kept.get(owner) === next) kept.delete(owner);
    throw err;
  }
}

/** Drops the kept marks of `owner`: the roll-up just moved them (the next question reads them). */
export function forgetRollupMarks(owner: object): void {
  kept.delete(owner);
}
