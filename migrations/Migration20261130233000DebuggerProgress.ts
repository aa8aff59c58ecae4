import { Migration } from '@mikro-orm/migrations';

/**
 * The turn debugger (issue 13): CALL_PROGRESS events (a tool server's progress and log
 * notifications during a call), and an index to read a call's events for `TurnCall.result`.
 */
export class Migration20261130233000DebuggerProgress extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "turn_event" drop constraint if exists "turn_event_type_check";`);
    this.addSql(
      `alter table "turn_event" add constraint "turn_event_type_check" check ("type" in ('TURN_STARTED', 'CALL_STARTED', 'CALL_PROGRESS', 'CALL_FINISHED', 'TURN_FINISHED'));`,
    );
    this.addSql(`create index "turn_event_call_id_index" on "turn_event" ("call_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "turn_event_call_id_index";`);
    this.addSql(`delete from "turn_event" where "type" = 'CALL_PROGRESS';`);
    this.addSql(`alter table "turn_event" drop constraint if exists "turn_event_type_check";`);
    this.addSql(
      `alter table "turn_event" add constraint "turn_event_type_check" check ("type" in ('TURN_STARTED', 'CALL_STARTED', 'CALL_FINISHED', 'TURN_FINISHED'));`,
    );
  }
}
