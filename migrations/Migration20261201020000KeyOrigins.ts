import { Migration } from '@mikro-orm/migrations';

/**
 * Key origins (issue 11, finding 5): the origins a connection's key was given for, and the two
 * review reasons that hold an operation (an origin the key was not given for, no callable base).
 *
 * Existing keys are taken as given for where the connection sends them today: the MCP endpoint,
 * the `baseUrl` override, else the base addresses of its operations. (The origin of a stored,
 * normalised `https://host:port/path` is its text up to the first `/` after the host.)
 */
export class Migration20261201020000KeyOrigins extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "connection" add column "credential_origins" jsonb null;`);
    this.addSql(`
update "connection" c set "credential_origins" = coalesce((
  select jsonb_agg(distinct o order by o)
    from (
      select substring(c."endpoint_url" from '^https?://[^/?#]+') as o where c."kind" = 'MCP'
      union
      select substring(c."base_url" from '^https?://[^/?#]+') where c."kind" = 'OPENAPI'
      union
      select substring(op."binding"->>'baseUrl' from '^https?://[^/?#]+')
        from "operation" op
       where op."connection_id" = c."id" and c."kind" = 'OPENAPI' and c."base_url" is null
    ) origins
   where o is not null), '[]'::jsonb)
 where c."credential_kind" in ('BEARER', 'HEADER');`);
    this.addSql(`alter table "review_reason" drop constraint if exists "review_reason_code_check";`);
    this.addSql(
      `alter table "review_reason" add constraint "review_reason_code_check" check ("code" in ('RISK_RAISED', 'ARGUMENTS_ADDED', 'ARGUMENTS_UNDESCRIBED', 'ENDPOINT_CHANGED', 'KEY_ORIGIN_NOT_GIVEN', 'BASE_ADDRESS_UNCALLABLE'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "review_reason" where "code" in ('KEY_ORIGIN_NOT_GIVEN', 'BASE_ADDRESS_UNCALLABLE');`);
    this.addSql(`alter table "review_reason" drop constraint if exists "review_reason_code_check";`);
    this.addSql(
      `alter table "review_reason" add constraint "review_reason_code_check" check ("code" in ('RISK_RAISED', 'ARGUMENTS_ADDED', 'ARGUMENTS_UNDESCRIBED', 'ENDPOINT_CHANGED'));`,
    );
    this.addSql(`alter table "connection" drop column "credential_origins";`);
  }
}
