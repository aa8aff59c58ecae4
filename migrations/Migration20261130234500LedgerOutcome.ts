import { Migration } from '@mikro-orm/migrations';

const STATUSES = `'RUNNING', 'SUCCEEDED', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'TIMEOUT', 'REJECTED', 'UNAVAILABLE', 'OUTCOME_UNKNOWN'`;
const OLD_STATUSES = `'RUNNING', 'SUCCEEDED', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'TIMEOUT', 'REJECTED', 'UNAVAILABLE'`;

/**
 * The ledger invariant (DESIGN.md rule 14): a WRITE's `ledger_entry` row is now its *intent*, written
 * (status RUNNING) in the statement that records the call as started, before the request goes out.
 * Its *outcome* is a row of `ledger_outcome`, written with the call's record afterwards, or by the
 * sweep as OUTCOME_UNKNOWN when it never came. Both tables are append-only. Rows written before
 * this migration keep their final status in `ledger_entry` and have no outcome row.
 */
export class Migration20261130234500LedgerOutcome extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "ledger_entry" add column "call_seq" int null, add column "declared_name" varchar(200) null;`,
    );
    this.addSql(
      `create table "ledger_outcome" ("id" uuid not null, "ledger_entry_id" uuid not null, "workspace_id" uuid not null, "status" text check ("status" in (${STATUSES})) not null, "attempts" int not null, "message" text null, "closed_by" text check ("closed_by" in ('CALL', 'SWEEP')) not null, "created_at" timestamptz not null, constraint "ledger_outcome_pkey" primary key ("id"), constraint "ledger_outcome_ledger_entry_id_unique" unique ("ledger_entry_id"));`,
    );
    // The sweep's question: intents without an outcome, oldest first.
    this.addSql(
      `create index "ledger_entry_open_intent_index" on "ledger_entry" ("created_at") where "status" = 'RUNNING';`,
    );
    this.addSql(`create function ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only: % is not allowed', tg_table_name, tg_op using errcode = 'raise_exception';
end;
$$;`);
    this.addSql(
      `create trigger ledger_outcome_no_update_delete before update or delete on "ledger_outcome" for each row execute function ledger_append_only();`,
    );
    this.addSql(
      `create trigger ledger_outcome_no_truncate before truncate on "ledger_outcome" for each statement execute function ledger_append_only();`,
    );
    for (const table of ['turn_call', 'ledger_entry']) {
      this.addSql(`alter table "${table}" drop constraint "${table}_status_check";`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_status_check" check ("status" in (${STATUSES}));`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of ['turn_call', 'ledger_entry']) {
      this.addSql(`alter table "${table}" drop constraint "${table}_status_check";`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_status_check" check ("status" in (${OLD_STATUSES})) not valid;`,
      );
    }
    this.addSql(`drop table "ledger_outcome";`);
    this.addSql(`drop function ledger_append_only();`);
    this.addSql(`drop index "ledger_entry_open_intent_index";`);
    this.addSql(`alter table "ledger_entry" drop column "call_seq", drop column "declared_name";`);
  }
}
