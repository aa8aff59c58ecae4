import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import type { JsonObject } from '../operations/types.js';
import { OAuthClient } from './oauth-client.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

/**
 * The OAuth tokens of one connection, keyed by the server URI (`resource`) and the `issuer`
 * (MCP-NOTES.md, authorization 6). Both tokens are sealed with AES-256-GCM, bound to the connection
 * (see `tokenAad`); the expiry is plain so the sweep can select on it.
 *
 * `version` goes up on every change of the tokens. A refresh runs under a row lock and re-reads the
 * row: if the version moved, another process already refreshed and its token is used as is.
 */
@Entity({ tableName: 'oauth_credential' })
@Index({ properties: ['expiresAt'] })
export class OAuthCredential {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade', unique: true })
  connection: Ref<Connection>;

  @ManyToOne(() => OAuthClient, { ref: true, deleteRule: 'cascade' })
  client: Ref<OAuthClient>;

  @Property({ type: 'text' })
  issuer: string;

  @Property({ type: 'text' })
  resource: string;

  /** The authorization server's metadata, kept so that a refresh needs no discovery. No secrets. */
  @Property({ type: 'json' })
  serverMetadata: JsonObject;

  @Property({ type: 'text', nullable: true })
  scope: string | null = null;

  /** Sealed. Null once the sign-in is gone (refresh refused, or 401 after a refresh). */
  @Property({ type: 'text', nullable: true, hidden: true })
  accessToken: string | null = null;

  /** Sealed. Null when the server gave none, or once the sign-in is gone. */
  @Property({ type: 'text', nullable: true, hidden: true })
  refreshToken: string | null = null;

  /** Null when the server gave no lifetime. */
  @Property({ type: 'datetime', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'integer' })
  version: number & Opt = 0;

  @Property({ type: 'string', length: MAX_NAME_CHARS })
  signedInBy: string;

  @Property({ type: 'datetime' })
  signedInAt: Date;

  @Property({ type: 'datetime', nullable: true })
  refreshedAt: Date | null = null;

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date & Opt = new Date();

  constructor(init: {
    connection: Ref<Connection>;
    client: Ref<OAuthClient>;
    issuer: string;
    resource: string;
    serverMetadata: JsonObject;
    signedInBy: string;
    signedInAt: Date;
  }) {
    this.connection = init.connection;
    this.client = init.client;
    this.issuer = init.issuer;
    this.resource = init.resource;
    this.serverMetadata = init.serverMetadata;
    this.signedInBy = init.signedInBy;
    this.signedInAt = init.signedInAt;
  }
}
