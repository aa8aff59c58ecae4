import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth sign-in for MCP connections (issue 7): our clients at authorization servers, pending
 * sign-ins (hashed `state`, sealed PKCE verifier), and the sealed tokens of each connection.
 */
export class Migration20261130100000OAuth extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "oauth_client" ("id" uuid not null, "connection_id" uuid not null, "issuer" text not null, "redirect_uri" text not null, "client_id" text not null, "client_secret" text null, "auth_method" varchar(32) not null, "source" text check ("source" in ('DYNAMIC', 'OPERATOR')) not null, "created_at" timestamptz not null, constraint "oauth_client_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "oauth_client_connection_id_issuer_index" on "oauth_client" ("connection_id", "issuer");`,
    );
    this.addSql(
      `create table "oauth_sign_in" ("id" uuid not null, "state_hash" varchar(64) not null, "connection_id" uuid not null, "client_id" uuid not null, "actor" varchar(200) not null, "actor_token_id" uuid null, "issuer" text not null, "resource" text not null, "scope" text null, "redirect_uri" text not null, "server_metadata" jsonb not null, "code_verifier" text not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "oauth_sign_in_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "oauth_sign_in" add constraint "oauth_sign_in_state_hash_unique" unique ("state_hash");`,
    );
    this.addSql(`create index "oauth_sign_in_connection_id_index" on "oauth_sign_in" ("connection_id");`);
    this.addSql(`create index "oauth_sign_in_expires_at_index" on "oauth_sign_in" ("expires_at");`);
    this.addSql(
      `create table "oauth_credential" ("id" uuid not null, "connection_id" uuid not null, "client_id" uuid not null, "issuer" text not null, "resource" text not null, "server_metadata" jsonb not null, "scope" text null, "access_token" text null, "refresh_token" text null, "expires_at" timestamptz null, "version" int not null, "signed_in_by" varchar(200) not null, "signed_in_at" timestamptz not null, "refreshed_at" timestamptz null, "updated_at" timestamptz not null, constraint "oauth_credential_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "oauth_credential" add constraint "oauth_credential_connection_id_unique" unique ("connection_id");`,
    );
    this.addSql(`create index "oauth_credential_expires_at_index" on "oauth_credential" ("expires_at");`);
    this.addSql(
      `alter table "oauth_client" add constraint "oauth_client_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "oauth_sign_in" add constraint "oauth_sign_in_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "oauth_sign_in" add constraint "oauth_sign_in_client_id_foreign" foreign key ("client_id") references "oauth_client" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "oauth_credential" add constraint "oauth_credential_connection_id_foreign" foreign key ("connection_id") references "connection" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "oauth_credential" add constraint "oauth_credential_client_id_foreign" foreign key ("client_id") references "oauth_client" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "oauth_credential" cascade;`);
    this.addSql(`drop table if exists "oauth_sign_in" cascade;`);
    this.addSql(`drop table if exists "oauth_client" cascade;`);
  }
}
