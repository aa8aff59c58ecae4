/**
 * Ordering by the database's own lock queue instead of sleeps: a test holds a row lock on its own
 * connection, starts the requests that must queue behind it, and waits until PostgreSQL shows them
 * waiting (`pg_blocking_pids`), however slow the machine.
 */
import pg from 'pg';

export interface HeldLock {
  /** The backend holding the lock. */
  pid: number;
  /**
   * Resolves once `count` backends wait behind this lock, directly or behind another waiter, with
   * their pids in the order first seen.
   */
  waiters(count: number): Promise<number[]>;
  /** Ends the holding transaction (rolled back) and its connection. */
  release(): Promise<void>;
}

/** Backends waiting, directly or through other waiters, on `holder`. */
async function waitingOn(observer: pg.Client, holder: number): Promise<number[]> {
  const { rows } = await observer.query<{ pid: number; blockers: number[] }>(
    'select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity where cardinality(pg_blocking_pids(pid)) > 0',
  );
  const behind = new Set<number>([holder]);
  for (let grew = true; grew;) {
    grew = false;
    for (const row of rows) {
      if (!behind.has(row.pid) && row.blockers.some((b) => behind.has(b))) {
        behind.add(row.pid);
        grew = true;
      }
    }
  }
  behind.delete(holder);
  return [...behind];
}

/**
 * Opens a connection, begins a transaction and runs `lockSql` (e.g. `select … for update`) in it.
 * The waiting is polled on a second connection, one round trip at a time: no timer.
 */
export async function holdLock(databaseUrl: string, lockSql: string, params: unknown[]): Promise<HeldLock> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  const observer = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await observer.connect();
  await holder.query('begin');
  await holder.query(lockSql, params);
  const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const seen: number[] = [];
  return {
    pid,
    async waiters(count) {
      for (;;) {
        for (const p of await waitingOn(observer, pid)) if (!seen.includes(p)) seen.push(p);
        if (seen.length >= count) return [...seen];
        await new Promise((r) => setImmediate(r));
      }
    },
    async release() {
      await holder.query('rollback');
      await holder.end();
      await observer.end();
    },
  };
}
