/**
 * Runs left RUNNING by an instance that died (a crash, `kill -9`, a lost host) are closed at start
 * as FAILED with the code DISCOVERY_INTERRUPTED. Nothing they did needs undoing: a run applies its
 * listing in one transaction, which either committed (and closed the run) or rolled back.
 *
 * A run belongs to the instance that started it (`instance_id`). An instance is alive while its
 * LISTEN connection is open, which pg_stat_activity shows by application_name; runs of live
 * instances are left alone, so a starting instance never closes a run another one is still doing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { INSTANCE_APPLICATION_PREFIX } from '../db/notifier.js';

/** The error code of a run closed because the instance running it died. */
export const DISCOVERY_INTERRUPTED = 'DISCOVERY_INTERRUPTED';

const CLOSE_SQL = `
update discovery_run r
   set outcome = 'FAILED',
       error_code = '${DISCOVERY_INTERRUPTED}',
       error_message = 'the service stopped while this discovery ran; nothing was changed, run it again',
       finished_at = now()
 where r.outcome = 'RUNNING'
   and (r.instance_id is null or r.instance_id not in (
         select substr(a.application_name, ?)
           from pg_stat_activity a
          where a.application_name like ?))
returning r.id`;

/** Closes the runs of dead instances; returns how many it closed. */
export async function closeInterruptedRuns(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(CLOSE_SQL, [
    INSTANCE_APPLICATION_PREFIX.length + 1,
    `${INSTANCE_APPLICATION_PREFIX}%`,
  ]);
  return rows.length;
}
