import { Migration } from '@mikro-orm/migrations';

/**
 * A turn's declared-tools record is stored once per tool list, not once per turn (issue 15): about
 * 35 KB of jsonb for 300 tools was most of beginTurn's database time. `declared_tool_list` holds
 * each list once per workspace, keyed by the SHA-256 of its JSON (hex); `turn` refers to it by
 * digest.
 *
 * Per workspace, not global: a list names one workspace's operations (ids and keys), so it goes
 * with that workspace (ON DELETE CASCADE, as its turns do) and no two workspaces ever share a row.
 * Nothing else deletes a list: the service remembers which lists it stored, and a turn refers to a
 * list only when that list exists (src/turns/turn.service.ts#BEGIN_SQL), so no foreign key from
 * `turn` (it would cost a lookup and a shared row lock on the list per turn).
 *
 * Existing turns are moved over: their digest is the SHA-256 of the jsonb's text form (not the
 * service's JSON text, so an old list is not merged with a new one of the same content; both read
 * the same). This rewrites every `turn` row once (see README, "Running at scale").
 */
export class Migration20261201140000DeclaredToolLists extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "declared_tool_list" ("workspace_id" uuid not null, "digest" varchar(64) not null, "tools" jsonb not null, "created_at" timestamptz not null, constraint "declared_tool_list_pkey" primary key ("workspace_id", "digest"));`,
    );
    this.addSql(
      `alter table "declared_tool_list" add constraint "declared_tool_list_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "turn" add column "declared_tools_digest" varchar(64) null;`);
    this.addSql(
      `update "turn" set "declared_tools_digest" = encode(sha256(convert_to("declared_tools"::text, 'UTF8')), 'hex');`,
    );
    this.addSql(
      `insert into "declared_tool_list" ("workspace_id", "digest", "tools", "created_at")
       select distinct on ("workspace_id", "declared_tools_digest") "workspace_id", "declared_tools_digest", "declared_tools", "started_at"
       from "turn" order by "workspace_id", "declared_tools_digest", "started_at";`,
    );
    this.addSql(
      `alter table "turn" alter column "declared_tools_digest" set not null, drop column "declared_tools";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "turn" add column "declared_tools" jsonb null;`);
    this.addSql(
      `update "turn" t set "declared_tools" = l."tools" from "declared_tool_list" l where l."workspace_id" = t."workspace_id" and l."digest" = t."declared_tools_digest";`,
    );
    this.addSql(
      `alter table "turn" alter column "declared_tools" set not null, drop column "declared_tools_digest";`,
    );
    this.addSql(`drop table "declared_tool_list";`);
  }
}
