import { Migration } from '@mikro-orm/migrations';

/**
 * Concurrency caps shared by every instance (issue 29, src/guards/cap.ts and cap-store.ts).
 *
 * - `call_cap`: the most calls in flight at once for an operation or a connection, and how long a
 *   call over it may wait in line.
 * - `call_cap_lease`: the slots one instance holds of a cap (a row per cap and instance). A lease
 *   not renewed by `expires_ms` (epoch ms by the instances' clock) no longer counts: a dead
 *   instance's slots come back.
 * - `ct_cap_hold`: sets an instance's slots of a cap, granting no more than the cap leaves. It locks
 *   the cap's row first and reads the leases after, in a statement of its own (a volatile function
 *   takes a fresh snapshot per statement), so two instances leasing at once never both see room.
 */
export class Migration20261202168000CallCaps extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "call_cap" ("id" uuid not null, "workspace_id" uuid not null, "connection_id" uuid not null, "operation_id" uuid null, "scope" text check ("scope" in ('CONNECTION', 'OPERATION')) not null, "max_in_flight" int not null check ("max_in_flight" between 1 and 10000), "max_wait_ms" int not null check ("max_wait_ms" between 0 and 60000), "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "call_cap_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create unique index "call_cap_scope_unique" on "call_cap" ("connection_id", "scope", coalesce("operation_id", '00000000-0000-0000-0000-000000000000'));`,
    );
    this.addSql(
      `alter table "call_cap" add constraint "call_cap_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "call_cap" add constraint "call_cap_operation_id_foreign" foreign key ("operation_id") references "operation" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "call_cap_lease" ("cap_id" uuid not null, "instance_id" text not null, "slots" int not null check ("slots" >= 0), "expires_ms" bigint not null, constraint "call_cap_lease_pkey" primary key ("cap_id", "instance_id"));`,
    );
    this.addSql(
      `alter table "call_cap_lease" add constraint "call_cap_lease_cap_id_foreign" foreign key ("cap_id") references "call_cap" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "call_cap_lease_instance_index" on "call_cap_lease" ("instance_id");`);
    this.addSql(`
create function ct_cap_hold(p_cap uuid, p_instance text, p_target int, p_now bigint, p_expires bigint, p_notify boolean)
returns int language plpgsql volatile as $$
declare
  v_max int;
  v_used int;
  v_granted int;
begin
  select max_in_flight into v_max from call_cap where id = p_cap for update;
  if not found then
    return null;
  end if;
  delete from call_cap_lease where cap_id = p_cap and expires_ms <= p_now and instance_id <> p_instance;
  select coalesce(sum(slots), 0) into v_used from call_cap_lease where cap_id = p_cap and instance_id <> p_instance;
  v_granted := greatest(0, least(p_target, v_max - v_used));
  insert into call_cap_lease (cap_id, instance_id, slots, expires_ms) values (p_cap, p_instance, v_granted, p_expires)
    on conflict (cap_id, instance_id) do update set slots = excluded.slots, expires_ms = excluded.expires_ms;
  if p_notify then
    perform pg_notify('ct_guards', json_build_object('kind', 'cap', 'scope', 'FREED', 'id', p_cap::text)::text);
  end if;
  return v_granted;
end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function ct_cap_hold(uuid, text, int, bigint, bigint, boolean);`);
    this.addSql(`drop table "call_cap_lease";`);
    this.addSql(`drop table "call_cap";`);
  }
}
