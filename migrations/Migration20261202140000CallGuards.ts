import { Migration } from '@mikro-orm/migrations';

const STATUSES = `'RUNNING', 'SUCCEEDED', 'TOOL_ERROR', 'UPSTREAM_ERROR', 'TIMEOUT', 'REJECTED', 'UNAVAILABLE', 'OUTCOME_UNKNOWN'`;

/**
 * Rate limits and circuit breakers shared by every instance (issue 29, src/guards/).
 *
 * - `call_limit`: one token bucket per limit (an operation, a connection, or one workspace on a
 *   connection). `tokens` and `refilled_ms` are the bucket; instances lease tokens from it in one
 *   statement (src/guards/store.ts, LEASE_SQL). `refilled_ms` is epoch ms by the instances' clock.
 * - `call_breaker`: a breaker's shared state, one row per connection or operation that has one
 *   (a connection without a row has the default breaker, closed). `forced` is the operator's hand.
 * - `turn_call.status` may be RATE_LIMITED: a call a limit refused, recorded, never sent.
 */
export class Migration20261202140000CallGuards extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "call_limit" ("id" uuid not null, "workspace_id" uuid not null, "connection_id" uuid not null, "operation_id" uuid null, "for_workspace_id" uuid null, "scope" text check ("scope" in ('CONNECTION', 'OPERATION', 'WORKSPACE')) not null, "calls" int not null check ("calls" > 0), "period_ms" int not null check ("period_ms" in (1000, 60000)), "burst" int not null check ("burst" > 0), "tokens" double precision not null, "refilled_ms" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "call_limit_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create unique index "call_limit_scope_unique" on "call_limit" ("connection_id", "scope", coalesce("operation_id", '00000000-0000-0000-0000-000000000000'), coalesce("for_workspace_id", '00000000-0000-0000-0000-000000000000'));`,
    );
    this.addSql(
      `alter table "call_limit" add constraint "call_limit_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "call_limit" add constraint "call_limit_operation_id_foreign" foreign key ("operation_id") references "operation" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "call_breaker" ("scope" text check ("scope" in ('CONNECTION', 'OPERATION')) not null, "scope_id" uuid not null, "workspace_id" uuid null, "enabled" boolean not null default true, "forced" text check ("forced" in ('OPEN', 'CLOSED')) null, "state" text check ("state" in ('CLOSED', 'OPEN', 'HALF_OPEN')) not null default 'CLOSED', "opened_at" timestamptz null, "reason" text null, "retry_at_ms" bigint null, "cooldown_ms" int null, "probe_until_ms" bigint null, "updated_at" timestamptz not null, constraint "call_breaker_pkey" primary key ("scope", "scope_id"));`,
    );
    this.addSql(`alter table "turn_call" drop constraint "turn_call_status_check";`);
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_status_check" check ("status" in (${STATUSES}, 'RATE_LIMITED'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "turn_call" drop constraint "turn_call_status_check";`);
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_status_check" check ("status" in (${STATUSES})) not valid;`,
    );
    this.addSql(`drop table "call_breaker";`);
    this.addSql(`drop table "call_limit";`);
  }
}
