import { Migration } from '@mikro-orm/migrations';

/**
 * The console's reads (issue 12): why an operation was switched off and by whom, and indexes for
 * the new filters (turns of a workspace by conversation, operations awaiting review).
 */
export class Migration20261130234000ConsoleReads extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "operation" add column "disabled_reason" text null, add column "disabled_by" varchar(200) null, add column "disabled_at" timestamptz null;`,
    );
    this.addSql(
      `create index "turn_workspace_id_conversation_id_index" on "turn" ("workspace_id", "conversation_id");`,
    );
    this.addSql(`create index "operation_needs_review_index" on "operation" ("id") where "needs_review";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "operation_needs_review_index";`);
    this.addSql(`drop index "turn_workspace_id_conversation_id_index";`);
    this.addSql(
      `alter table "operation" drop column "disabled_reason", drop column "disabled_by", drop column "disabled_at";`,
    );
  }
}
