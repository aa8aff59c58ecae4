import { Migration } from '@mikro-orm/migrations';

/**
 * `turn_call` and `turn_event` partitioned by day (issue 15), so that a retention setting drops
 * whole old days (src/db/partitions.ts) instead of deleting rows, and the call path writes into
 * small, recent tables.
 *
 * - `turn_call` by range of its id: ids are UUIDv7 made at the call's start, so a day is the range
 *   of ids between the UUIDv7 floors of two UTC midnights. Lookups by id and the usage roll-up's
 *   id ranges reach one partition. The unique (turn_id, seq) becomes a plain index (a unique index
 *   of a partitioned table must hold the partition key; seq is unique by construction, from the
 *   turn's counter). No foreign keys: a workspace or turn with calls is never deleted (they are
 *   history), and an operation deleted later leaves `operation_id` pointing at nothing, which every
 *   reader left-joins; a foreign key cost three lookups and row locks per recorded call.
 * - `turn_event` by range of `created_at`; its primary key becomes (seq, created_at). seq stays
 *   global and increasing (the same sequence).
 *
 * Each table gets a DEFAULT partition, so an insert never fails for want of a day's partition; the
 * service moves such rows into their day when it creates it. Partitions for the days of existing
 * rows and for today and the next two days (UTC) are created here; the service keeps creating
 * them ahead. Rows are copied, then the old tables dropped (a long lock on a large history: see
 * README, "Running at scale").
 */
export class Migration20261201110000TurnPartitions extends Migration {
  override async up(): Promise<void> {
    // turn_call
    this.addSql(`alter table "turn_call" rename to "turn_call_unpartitioned";`);
    this.addSql(
      `create table "turn_call" (like "turn_call_unpartitioned" including defaults including constraints including storage including comments) partition by range ("id");`,
    );
    this.addSql(`create table "turn_call_default" partition of "turn_call" default;`);
    // turn_event: the sequence must outlive the old table.
    this.addSql(`alter sequence "turn_event_seq_seq" owned by none;`);
    this.addSql(`alter table "turn_event" rename to "turn_event_unpartitioned";`);
    this.addSql(
      `create table "turn_event" (like "turn_event_unpartitioned" including defaults including constraints including storage including comments) partition by range ("created_at");`,
    );
    this.addSql(`alter sequence "turn_event_seq_seq" owned by "turn_event"."seq";`);
    this.addSql(`create table "turn_event_default" partition of "turn_event" default;`);
    // One partition per UTC day of the existing rows (ids outside 2020 … three days ahead are left
    // to the default partition), and today and the next two days.
    this.addSql(`do $$
declare
  today date := (now() at time zone 'UTC')::date;
  d date;
  first_call date;
  first_event date;
begin
  select min(to_timestamp((('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint) / 1000.0) at time zone 'UTC')::date
    into first_call from "turn_call_unpartitioned"
    where substr(id::text, 15, 1) = '7'
      and (('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint)
          between 1577836800000 and (extract(epoch from now()) * 1000)::bigint + 3 * 86400000;
  select min(created_at at time zone 'UTC')::date into first_event from "turn_event_unpartitioned";
  for d in select generate_series(least(coalesce(first_call, today), today), today + 2, interval '1 day')::date loop
    execute format(
      'create table %I partition of "turn_call" for values from (%L) to (%L)',
      'turn_call_p' || to_char(d, 'YYYYMMDD'),
      (lpad(to_hex((extract(epoch from d::timestamp at time zone 'UTC') * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid,
      (lpad(to_hex((extract(epoch from (d + 1)::timestamp at time zone 'UTC') * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid);
  end loop;
  for d in select generate_series(least(coalesce(first_event, today), today), today + 2, interval '1 day')::date loop
    execute format(
      'create table %I partition of "turn_event" for values from (%L) to (%L)',
      'turn_event_p' || to_char(d, 'YYYYMMDD'),
      d::timestamp at time zone 'UTC',
      (d + 1)::timestamp at time zone 'UTC');
  end loop;
end $$;`);
    this.addSql(`insert into "turn_call" select * from "turn_call_unpartitioned";`);
    this.addSql(`insert into "turn_event" select * from "turn_event_unpartitioned";`);
    this.addSql(`drop table "turn_call_unpartitioned";`);
    this.addSql(`drop table "turn_event_unpartitioned";`);
    // Indexes after the copy (built once per partition).
    this.addSql(`alter table "turn_call" add constraint "turn_call_pkey" primary key ("id");`);
    this.addSql(`create index "turn_call_turn_id_seq_index" on "turn_call" ("turn_id", "seq");`);
    // Usage's live reads (migration 20261201101000).
    this.addSql(
      `create index "turn_call_workspace_id_started_at_index" on "turn_call" ("workspace_id", "started_at");`,
    );
    this.addSql(
      `alter table "turn_event" add constraint "turn_event_pkey" primary key ("seq", "created_at");`,
    );
    this.addSql(`create index "turn_event_workspace_id_seq_index" on "turn_event" ("workspace_id", "seq");`);
    this.addSql(`create index "turn_event_call_id_index" on "turn_event" ("call_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "turn_call" rename to "turn_call_partitioned";`);
    this.addSql(
      `create table "turn_call" (like "turn_call_partitioned" including defaults including constraints including storage including comments);`,
    );
    this.addSql(`insert into "turn_call" select * from "turn_call_partitioned";`);
    this.addSql(`drop table "turn_call_partitioned";`);
    this.addSql(`alter table "turn_call" add constraint "turn_call_pkey" primary key ("id");`);
    this.addSql(
      `alter table "turn_call" add constraint "turn_call_turn_id_seq_unique" unique ("turn_id", "seq");`,
    );
    this.addSql(
      `create index "turn_call_workspace_id_started_at_index" on "turn_call" ("workspace_id", "started_at");`,
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
    this.addSql(`alter sequence "turn_event_seq_seq" owned by none;`);
    this.addSql(`alter table "turn_event" rename to "turn_event_partitioned";`);
    this.addSql(
      `create table "turn_event" (like "turn_event_partitioned" including defaults including constraints including storage including comments);`,
    );
    this.addSql(`insert into "turn_event" select * from "turn_event_partitioned";`);
    this.addSql(`drop table "turn_event_partitioned";`);
    this.addSql(`alter sequence "turn_event_seq_seq" owned by "turn_event"."seq";`);
    this.addSql(`alter table "turn_event" add constraint "turn_event_pkey" primary key ("seq");`);
    this.addSql(`create index "turn_event_workspace_id_seq_index" on "turn_event" ("workspace_id", "seq");`);
    this.addSql(`create index "turn_event_call_id_index" on "turn_event" ("call_id");`);
  }
}
