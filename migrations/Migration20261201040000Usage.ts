import { Migration } from '@mikro-orm/migrations';

/** Histogram columns d0 … d76: the 77 buckets of src/usage/histogram.ts (a unit test checks). */
const HISTOGRAM = Array.from({ length: 77 }, (_, i) => `"d${i}" int not null default 0`).join(', ');

/**
 * Usage for dashboards (issue 12): calls rolled up per hour and per UTC day, keyed by workspace,
 * assistant, operation key, connection and status, with a duration histogram. Filled by the
 * roll-up job from closed hours; `usage_rollup` keeps how far each table is complete. The call path
 * never writes here.
 */
export class Migration20261201040000Usage extends Migration {
  override async up(): Promise<void> {
    for (const table of ['usage_hour', 'usage_day']) {
      this.addSql(
        `create table "${table}" ("bucket_start" timestamptz not null, "workspace_id" uuid not null, "assistant_id" uuid not null, "operation_key" varchar(300) null, "connection_id" uuid null, "status" text not null, "calls" int not null, "duration_count" int not null, "duration_sum" bigint not null, ${HISTOGRAM});`,
      );
      this.addSql(
        `create index "${table}_workspace_id_bucket_start_index" on "${table}" ("workspace_id", "bucket_start");`,
      );
    }
    this.addSql(
      `create table "usage_rollup" ("id" int not null default 1, "hours_until" timestamptz not null, "days_until" timestamptz not null, constraint "usage_rollup_pkey" primary key ("id"), constraint "usage_rollup_one_row" check ("id" = 1));`,
    );
    // History before this migration is rolled up too: start at the first recorded call's hour.
    this.addSql(`insert into "usage_rollup" ("id", "hours_until", "days_until")
select 1, date_trunc('hour', m, 'UTC'), date_trunc('day', m, 'UTC')
from (select coalesce(min("started_at"), now()) as m from "turn_call") s;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "usage_rollup";`);
    this.addSql(`drop table "usage_day";`);
    this.addSql(`drop table "usage_hour";`);
  }
}
