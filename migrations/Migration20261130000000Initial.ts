import { Migration } from '@mikro-orm/migrations';

/** The whole domain model, and the trigger that makes the ledger append-only. */
export class Migration20261130000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "audit_event" ("id" uuid not null, "workspace_id" uuid null, "actor" varchar(200) not null, "action" varchar(64) not null, "target_type" varchar(64) not null, "target_id" varchar(200) not null, "before" jsonb null, "after" jsonb null, "created_at" timestamptz not null, constraint "audit_event_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "audit_event_workspace_id_id_index" on "audit_event" ("workspace_id", "id");`);
    this.addSql(
      `create table "ledger_entry" ("id" uuid not null, "workspace_id" uuid not null, "assistant_id" uuid not null, "turn_id" uuid not null, "turn_call_id" uuid not null, "connection_id" uuid null, "operation_id" uuid null, "operation_key" varchar(300) not null, "arguments" jsonb not null, "status" text check ("status" in ('RUNNING', 'SUCCEEDED', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'TIMEOUT', 'REJECTED', 'UNAVAILABLE')) not null, "attempts" int not null, "message" text null, "created_at" timestamptz not null, constraint "ledger_entry_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "ledger_entry_workspace_id_id_index" on "ledger_entry" ("workspace_id", "id");`,
    );
    this.addSql(
      `create table "turn_event" ("seq" bigserial primary key, "workspace_id" uuid not null, "assistant_id" uuid not null, "conversation_id" varchar(200) not null, "turn_id" uuid not null, "call_id" uuid null, "type" text check ("type" in ('TURN_STARTED', 'CALL_STARTED', 'CALL_FINISHED', 'TURN_FINISHED')) not null, "payload" jsonb not null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "turn_event_workspace_id_seq_index" on "turn_event" ("workspace_id", "seq");`);
    this.addSql(
      `create table "workspace" ("id" uuid not null, "name" varchar(200) not null, "created_at" timestamptz not null, constraint "workspace_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create table "connection" ("id" uuid not null, "workspace_id" uuid not null, "kind" text check ("kind" in ('MCP', 'OPENAPI')) not null, "name" varchar(200) not null, "slug" varchar(64) not null, "endpoint_url" text null, "description_url" text null, "description_text" text null, "description_bytes" int null, "base_url" text null, "timeout_ms" int null, "credential_kind" text check ("credential_kind" in ('NONE', 'BEARER', 'HEADER', 'OAUTH')) not null default 'NONE', "credential_header_name" varchar(128) null, "credential_last4" varchar(4) null, "credential_secret" text null, "status" text check ("status" in ('PENDING', 'READY', 'FAILED', 'NEEDS_SIGN_IN')) not null default 'PENDING', "protocol_version" varchar(64) null, "server_info" jsonb null, "last_discovery_at" timestamptz null, "last_discovery_error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "connection_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "connection_workspace_id_index" on "connection" ("workspace_id");`);
    this.addSql(
      `alter table "connection" add constraint "connection_workspace_id_slug_unique" unique ("workspace_id", "slug");`,
    );
    this.addSql(
      `create table "operation" ("id" uuid not null, "workspace_id" uuid not null, "connection_id" uuid not null, "key" varchar(300) not null, "name" text not null, "title" text null, "description" text null, "input_schema" jsonb not null, "annotations" jsonb null, "risk" text check ("risk" in ('READ', 'WRITE')) not null, "risk_set_by_admin" boolean not null, "source_risk" text check ("source_risk" in ('READ', 'WRITE')) not null, "enabled" boolean not null, "idempotent" boolean not null, "needs_review" boolean not null, "binding" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "operation_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "operation_connection_id_index" on "operation" ("connection_id");`);
    this.addSql(
      `alter table "operation" add constraint "operation_connection_id_name_unique" unique ("connection_id", "name");`,
    );
    this.addSql(
      `alter table "operation" add constraint "operation_workspace_id_key_unique" unique ("workspace_id", "key");`,
    );
    this.addSql(
      `create table "discovery_run" ("id" uuid not null, "connection_id" uuid not null, "trigger" text check ("trigger" in ('CONNECT', 'REDISCOVER', 'SIGN_IN')) not null, "actor" varchar(200) not null, "started_at" timestamptz not null, "finished_at" timestamptz null, "outcome" text check ("outcome" in ('RUNNING', 'SUCCEEDED', 'FAILED')) not null default 'RUNNING', "error_code" varchar(64) null, "error_message" text null, "added" int not null default 0, "removed" int not null default 0, "updated" int not null default 0, "flagged" int not null default 0, "skipped" jsonb not null, "diagnostics" jsonb not null, "protocol_version" varchar(64) null, "server_info" jsonb null, constraint "discovery_run_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "discovery_run_connection_id_id_index" on "discovery_run" ("connection_id", "id");`,
    );
    this.addSql(
      `create table "review_reason" ("id" uuid not null, "operation_id" uuid not null, "code" text check ("code" in ('RISK_RAISED', 'ARGUMENTS_ADDED', 'ARGUMENTS_UNDESCRIBED', 'ENDPOINT_CHANGED')) not null, "detail" text not null, "discovery_run_id" uuid null, "created_at" timestamptz not null, "resolved_at" timestamptz null, "resolved_by" varchar(200) null, constraint "review_reason_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "review_reason_operation_id_resolved_at_index" on "review_reason" ("operation_id", "resolved_at");`,
    );
    this.addSql(
      `create table "assistant" ("id" uuid not null, "workspace_id" uuid not null, "name" varchar(200) not null, "created_at" timestamptz not null, constraint "assistant_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "assistant_workspace_id_index" on "assistant" ("workspace_id");`);
    this.addSql(
      `create table "turn" ("id" uuid not null, "workspace_id" uuid not null, "assistant_id" uuid not null, "conversation_id" varchar(200) not null, "started_at" timestamptz not null, "finished_at" timestamptz null, "declared_tools" jsonb not null, "call_seq" int not null default 0, constraint "turn_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "turn_workspace_id_index" on "turn" ("workspace_id");`);
    this.addSql(
      `create index "turn_assistant_id_conversation_id_index" on "turn" ("assistant_id", "conversation_id");`,
    );
    this.addSql(
      `create table "turn_call" ("id" uuid not null, "turn_id" uuid not null, "workspace_id" uuid not null, "seq" int not null, "operation_key" varchar(300) null, "operation_id" uuid null, "declared_name" varchar(200) not null, "arguments" jsonb not null, "status" text check ("status" in ('RUNNING', 'SUCCEEDED', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'TIMEOUT', 'REJECTED', 'UNAVAILABLE')) not null, "message" text null, "attempts" int not null, "duration_ms" int null, "risk" text check ("risk" in ('READ', 'WRITE')) null, "started_at" timestamptz not null, "finished_at" timestamptz null, constraint "turn_call_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_turn_id_seq_unique" unique ("turn_id", "seq");`,
    );
    this.addSql(
      `create table "assistant_connection" ("id" uuid not null, "assistant_id" uuid not null, "connection_id" uuid not null, "enabled_by" varchar(200) not null, "created_at" timestamptz not null, constraint "assistant_connection_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "assistant_connection_connection_id_index" on "assistant_connection" ("connection_id");`,
    );
    this.addSql(
      `alter table "assistant_connection" add constraint "assistant_connection_assistant_id_connection_id_unique" unique ("assistant_id", "connection_id");`,
    );
    this.addSql(
      `create table "api_token" ("id" uuid not null, "token_hash" varchar(64) not null, "role" text check ("role" in ('ADMIN', 'OPERATOR', 'CUSTOMER', 'RUNTIME')) not null, "workspace_id" uuid null, "label" varchar(200) not null, "created_at" timestamptz not null, "revoked_at" timestamptz null, constraint "api_token_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "api_token" add constraint "api_token_token_hash_unique" unique ("token_hash");`,
    );
    this.addSql(
      `alter table "connection" add constraint "connection_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operation" add constraint "operation_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operation" add constraint "operation_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovery_run" add constraint "discovery_run_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "review_reason" add constraint "review_reason_operation_id_foreign" foreign key ("operation_id") references "operation" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "review_reason" add constraint "review_reason_discovery_run_id_foreign" foreign key ("discovery_run_id") references "discovery_run" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "assistant" add constraint "assistant_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "turn" add constraint "turn_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "turn" add constraint "turn_assistant_id_foreign" foreign key ("assistant_id") references "assistant" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_turn_id_foreign" foreign key ("turn_id") references "turn" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_operation_id_foreign" foreign key ("operation_id") references "operation" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "assistant_connection" add constraint "assistant_connection_assistant_id_foreign" foreign key ("assistant_id") references "assistant" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "assistant_connection" add constraint "assistant_connection_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_token" add constraint "api_token_workspace_id_foreign" foreign key ("workspace_id") references "workspace" ("id") on update cascade on delete cascade;`,
    );

    // The ledger is append-only: the database itself refuses UPDATE and DELETE (and TRUNCATE).
    this.addSql(`create function ledger_entry_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'ledger_entry is append-only: % is not allowed', tg_op using errcode = 'raise_exception';
end;
$$;`);
    this.addSql(
      `create trigger ledger_entry_no_update_delete before update or delete on "ledger_entry" for each row execute function ledger_entry_append_only();`,
    );
    this.addSql(
      `create trigger ledger_entry_no_truncate before truncate on "ledger_entry" for each statement execute function ledger_entry_append_only();`,
    );
  }
}
