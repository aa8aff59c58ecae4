import { Migration } from '@mikro-orm/migrations';

/**
 * MCP sessions ended by their `DELETE` (issue 27). A session id is signed and self-contained, so
 * any instance can continue it; an ended one is kept here so that every instance answers it 404.
 * One row per ended session: its random key (not the signed id) and the token it was begun with.
 */
export class Migration20261202203000McpSessionEnd extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "mcp_session_end" ("session_key" varchar(64) not null, "token_id" uuid not null, "ended_at" timestamptz not null default now(), constraint "mcp_session_end_pkey" primary key ("session_key"));`,
    );
    this.addSql(`create index "mcp_session_end_token_id_index" on "mcp_session_end" ("token_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mcp_session_end" cascade;`);
  }
}
