import { Migration } from '@mikro-orm/migrations';

/**
 * `attempts` means attempts (issue 12): a request the server refused without acting (400/404 for
 * want of a session, 401 before a token renewal) and sent again is counted apart, in `resends`.
 */
export class Migration20261130220000CallResends extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "turn_call" add column "resends" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "turn_call" drop column "resends";`);
  }
}
