import { Migration } from '@mikro-orm/migrations';

/**
 * The argument check's own schema (issue 25, item 7; DESIGN.md rule 17): `input_schema` stays what
 * the contract declares (the first option of a union), `check_schema` holds what the check accepts
 * (every option), or null when that is `input_schema` itself. Existing operations get theirs at
 * their next discovery (the converter's version changed, so no description is skipped as unchanged).
 */
export class Migration20261202120000CheckSchema extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "operation" add column "check_schema" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "operation" drop column "check_schema";`);
  }
}
