import { Migration } from '@mikro-orm/migrations';

/**
 * Tokens in the API (issue 12): an optional expiry, when a token was last accepted, and who created
 * and revoked it (labels, never secrets).
 */
export class Migration20261130230000ApiTokenLifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "api_token" add column "created_by" varchar(200) null, add column "expires_at" timestamptz null, add column "last_used_at" timestamptz null, add column "revoked_by" varchar(200) null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "api_token" drop column "created_by", drop column "expires_at", drop column "last_used_at", drop column "revoked_by";`,
    );
  }
}
