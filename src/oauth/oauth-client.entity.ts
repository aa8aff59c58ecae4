import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import type { TokenEndpointAuthMethod } from './metadata.js';

/** Where a client id came from. */
export enum OAuthClientSource {
  /** We registered it with the authorization server (RFC 7591). */
  DYNAMIC = 'DYNAMIC',
  /** An operator gave it to `beginSignIn`. */
  OPERATOR = 'OPERATOR',
}

/**
 * Our OAuth client at one authorization server, for one connection and one redirect URI. Rows are
 * never updated: new operator credentials make a new row, and the newest one is used, so a sign-in
 * in flight keeps the client it started with.
 */
@Entity({ tableName: 'oauth_client' })
@Index({ properties: ['connection', 'issuer'] })
export class OAuthClient {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade' })
  connection: Ref<Connection>;

  @Property({ type: 'text' })
  issuer: string;

  @Property({ type: 'text' })
  redirectUri: string;

  @Property({ type: 'text' })
  clientId: string;

  /** AES-256-GCM sealed (see `clientSecretAad`). Never exposed. */
  @Property({ type: 'text', nullable: true, hidden: true })
  clientSecret: string | null = null;

  @Property({ type: 'string', length: 32 })
  authMethod: TokenEndpointAuthMethod;

  @Enum({ items: () => OAuthClientSource })
  source: OAuthClientSource;

  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(init: {
    connection: Ref<Connection>;
    issuer: string;
    redirectUri: string;
    clientId: string;
    authMethod: TokenEndpointAuthMethod;
    source: OAuthClientSource;
  }) {
    this.connection = init.connection;
    this.issuer = init.issuer;
    this.redirectUri = init.redirectUri;
    this.clientId = init.clientId;
    this.authMethod = init.authMethod;
    this.source = init.source;
  }
}
