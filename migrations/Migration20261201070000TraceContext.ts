import { Migration } from '@mikro-orm/migrations';

/** The W3C trace context the runtime sent with a call (issue 14, item 7), kept on its TurnCall. */
export class Migration20261201070000TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table "turn_call" add column "traceparent" varchar(256) null, add column "tracestate" varchar(512) null;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table "turn_call" drop column "traceparent", drop column "tracestate";');
  }
}
