import { Migration } from '@mikro-orm/migrations';

/**
 * Reviews an admin can decide from (issue 28): an operation's output schema (MCP `outputSchema`),
 * the structured diff of every refresh (`operation_change`, per run and per operation, kept as long
 * as its run), the diff on each review reason, and the admin's decision on a review.
 */
export class Migration20261202130000ReviewDiffs extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "operation" add column "output_schema" jsonb null, add column "review_rejected" boolean not null default false;`,
    );
    this.addSql(
      `alter table "review_reason" add column "diff" jsonb not null default '[]', add column "decision" varchar(16) null, add column "note" text null;`,
    );
    this.addSql(
      `create table "operation_change" ("id" uuid not null, "discovery_run_id" uuid not null, "operation_id" uuid null, "kind" varchar(16) not null, "operation_key" varchar(300) not null, "operation_name" text not null, "entries" jsonb not null default '[]', "created_at" timestamptz not null, constraint "operation_change_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "operation_change" add constraint "operation_change_discovery_run_id_foreign" foreign key ("discovery_run_id") references "discovery_run" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operation_change" add constraint "operation_change_operation_id_foreign" foreign key ("operation_id") references "operation" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `create index "operation_change_discovery_run_id_id_index" on "operation_change" ("discovery_run_id", "id");`,
    );
    this.addSql(
      `create index "operation_change_operation_id_id_index" on "operation_change" ("operation_id", "id");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "operation_change";`);
    this.addSql(
      `alter table "review_reason" drop column "diff", drop column "decision", drop column "note";`,
    );
    this.addSql(`alter table "operation" drop column "output_schema", drop column "review_rejected";`);
  }
}
