import { Migration } from '@mikro-orm/migrations';

/**
 * Usage for dashboards (issue 12): the calls not rolled up yet are read per workspace and start
 * time, so a dashboard's question reads its own workspace's recent calls and nothing else (not
 * every workspace's tail by primary key, nor any older history).
 */
export class Migration20261201101000UsageLive extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "turn_call_workspace_id_started_at_index" on "turn_call" ("workspace_id", "started_at");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "turn_call_workspace_id_started_at_index";`);
  }
}
