import { Migration } from '@mikro-orm/migrations';

/**
 * Whether anyone watches the debugger's events (issue 15): `turn_event_watch_until` holds the time
 * (epoch ms, by the database's clock) until which some instance has a subscriber. The call path's
 * record statements send their turn-event NOTIFY only while it lies ahead (src/db/notifier.ts,
 * eventNotifySql); an instance with subscribers moves it forward on every heartbeat.
 *
 * A sequence, not a table row: `setval` takes effect at once for every session, outside any
 * transaction, and a statement reads the current value whatever its snapshot, so no record
 * statement ever waits on a lock for it.
 */
export class Migration20261201150000TurnEventWatch extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create sequence "turn_event_watch_until" as bigint minvalue 0 start with 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop sequence "turn_event_watch_until";`);
  }
}
