import { Entity, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import type { JsonObject } from '../operations/types.js';
import { OAuthClient } from './oauth-client.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

/**
 * One sign-in between `beginSignIn` and the callback. The `state` is stored as its SHA-256 only;
 * the PKCE verifier is sealed. Single use: the callback sets `usedAt` with a conditional update, so
 * two callbacks with one state cannot both proceed. Rows are deleted some time after expiry.
 */
@Entity({ tableName: 'oauth_sign_in' })
export class OAuthSignIn {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'string', length: 64, unique: true })
  stateHash: string;

  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade', index: true })
  connection: Ref<Connection>;

  @ManyToOne(() => OAuthClient, { ref: true, deleteRule: 'cascade' })
  client: Ref<OAuthClient>;

  /** Who started it: the token label, for the discovery run and the audit trail. */
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  actor: string;

  @Property({ type: 'uuid', nullable: true })
  actorTokenId: string | null = null;

  @Property({ type: 'text' })
  issuer: string;

  /** RFC 8707 resource indicator, sent on the authorization and token requests. */
  @Property({ type: 'text' })
  resource: string;

  @Property({ type: 'text', nullable: true })
  scope: string | null = null;

  @Property({ type: 'text' })
  redirectUri: string;

  /** The authorization server's metadata as discovered at `beginSignIn`. No secrets. */
  @Property({ type: 'json' })
  serverMetadata: JsonObject;

  /** AES-256-GCM sealed PKCE code verifier. Never exposed. */
  @Property({ type: 'text', hidden: true })
  codeVerifier: string;

  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  @Property({ type: 'datetime', index: true })
  expiresAt: Date;

  @Property({ type: 'datetime', nullable: true })
  usedAt: Date | null = null;

  constructor(init: {
    stateHash: string;
    connection: Ref<Connection>;
    client: Ref<OAuthClient>;
    actor: string;
    issuer: string;
    resource: string;
    redirectUri: string;
    serverMetadata: JsonObject;
    codeVerifier: string;
    expiresAt: Date;
  }) {
    this.stateHash = init.stateHash;
    this.connection = init.connection;
    this.client = init.client;
    this.actor = init.actor;
    this.issuer = init.issuer;
    this.resource = init.resource;
    this.redirectUri = init.redirectUri;
    this.serverMetadata = init.serverMetadata;
    this.codeVerifier = init.codeVerifier;
    this.expiresAt = init.expiresAt;
  }
}
