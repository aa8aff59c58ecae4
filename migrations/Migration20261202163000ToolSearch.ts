import { Migration } from '@mikro-orm/migrations';

/**
 * Tool search in turns with many tools (issue 31, src/turns/search/).
 *
 * - `operation.always_declare`: the operator's "always declare" flag: declared up front when a
 *   turn searches its tools, instead of being found by a search.
 * - `turn_found_tool`: the tools a turn's searches found, by the name the model calls them by:
 *   callable in that turn on every instance (a call re-checks both gates as for every tool).
 *   Gone with its turn.
 */
export class Migration20261202163000ToolSearch extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "operation" add column "always_declare" boolean not null default false;`);
    this.addSql(
      `create table "turn_found_tool" ("turn_id" uuid not null, "workspace_id" uuid not null, "name" varchar(64) not null, "operation_id" uuid not null, "call_id" uuid not null, "created_at" timestamptz not null, constraint "turn_found_tool_pkey" primary key ("turn_id", "name"));`,
    );
    this.addSql(
      `alter table "turn_found_tool" add constraint "turn_found_tool_turn_id_foreign" foreign key ("turn_id") references "turn" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "turn_found_tool";`);
    this.addSql(`alter table "operation" drop column "always_declare";`);
  }
}
