import { Migration } from '@mikro-orm/migrations';

/**
 * Tools declared per model API (issue 26): each turn remembers the dialect its tools were declared
 * in (its calls' arguments come back in that dialect), and a call keeps the model's own arguments
 * beside the canonical ones when the dialect's mapping changed them.
 */
export class Migration20261202150000ToolDialects extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "turn" add column "dialect" varchar(24) not null default 'GENERIC';`);
    this.addSql(`alter table "turn_call" add column "model_arguments" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "turn_call" drop column "model_arguments";`);
    this.addSql(`alter table "turn" drop column "dialect";`);
  }
}
