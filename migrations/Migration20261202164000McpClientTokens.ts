import { Migration } from '@mikro-orm/migrations';

/**
 * An assistant's tools as a remote MCP server (issue 27): the MCP_CLIENT token role, bound to one
 * assistant (and through it to its workspace). Deleting the assistant deletes its client tokens.
 */
export class Migration20261202164000McpClientTokens extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_token" drop constraint if exists "api_token_role_check";`);
    this.addSql(
      `alter table "api_token" add constraint "api_token_role_check" check ("role" in ('ADMIN', 'OPERATOR', 'CUSTOMER', 'RUNTIME', 'MCP_CLIENT'));`,
    );
    this.addSql(
      `alter table "api_token" add column "assistant_id" uuid null references "assistant" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_token" add constraint "api_token_mcp_client_assistant" check (("role" = 'MCP_CLIENT') = ("assistant_id" is not null));`,
    );
    this.addSql(`create index "api_token_assistant_id_index" on "api_token" ("assistant_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "api_token" where "role" = 'MCP_CLIENT';`);
    this.addSql(`alter table "api_token" drop column "assistant_id";`);
    this.addSql(`alter table "api_token" drop constraint if exists "api_token_role_check";`);
    this.addSql(
      `alter table "api_token" add constraint "api_token_role_check" check ("role" in ('ADMIN', 'OPERATOR', 'CUSTOMER', 'RUNTIME'));`,
    );
  }
}
