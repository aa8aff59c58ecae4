import { Migration } from '@mikro-orm/migrations';

/** Which instance runs a discovery, so runs left RUNNING by a dead instance can be closed at start. */
export class Migration20261130223000DiscoveryRunInstance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "discovery_run" add column "instance_id" varchar(64) null;`);
    this.addSql(
      `create index "discovery_run_running_index" on "discovery_run" ("instance_id") where "outcome" = 'RUNNING';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "discovery_run_running_index";`);
    this.addSql(`alter table "discovery_run" drop column "instance_id";`);
  }
}
