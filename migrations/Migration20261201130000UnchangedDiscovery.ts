import { Migration } from '@mikro-orm/migrations';

/**
 * A re-discovery of an unchanged source does nothing (issue 15): each successful run keeps the
 * fingerprint of its source and the stamp of the operations it left, and says whether it was
 * such an unchanged run.
 */
export class Migration20261201130000UnchangedDiscovery extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table "discovery_run" add column "unchanged" boolean not null default false, add column "fingerprint" varchar(64) null, add column "operations_stamp" varchar(32) null;',
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      'alter table "discovery_run" drop column "unchanged", drop column "fingerprint", drop column "operations_stamp";',
    );
  }
}
