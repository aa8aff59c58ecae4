/**
 * What the OAuth services (sign-in, callback, renewal) are built with: each takes these explicitly,
 * plus its own options, rather than the whole `Services` bag.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../connections/secrets.js';
import type { Logger } from '../logger.js';
import type { OAuthFetch } from './fetch.js';

export interface OAuthDeps {
  orm: MikroORM;
  logger: Logger;
  /** Seals and opens tokens, client secrets and verifiers (AADs in `sealing.ts`). */
  secrets: SecretBox;
  /** oauth4webapi's fetch, over the outbound client (`fetch.ts`). */
  fetch: OAuthFetch;
  /** The clock, in ms since the epoch. Tests move it forward. */
  now: () => number;
}

/** What a change of a connection's sign-in must reach beyond the database. */
export interface SignInEffects {
  /** Forgets the connection's MCP session: one begun under another identity must not be reused. */
  forgetSession(connectionId: string): void;
  /** Tells every instance the connection changed (status, credential). Best effort: never throws. */
  announce(connectionId: string, workspaceId: string): Promise<void>;
}
