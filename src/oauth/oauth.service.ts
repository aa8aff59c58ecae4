/**
 * OAuth sign-in for MCP connections, from the client's side (protocol 2025-06-18,
 * basic/authorization.mdx; issue 7), on oauth4webapi with every request through the outbound client.
 * Three services, built here over one set of dependencies:
 *
 * - sign-in (`sign-in.service.ts`): `beginSignIn` discovers the authorization server, registers a
 *   client or uses the operator's, stores a pending sign-in and returns the authorization URL;
 * - callback (`callback.service.ts`): `handleCallback` consumes the `state`, exchanges the code,
 *   stores the tokens sealed and runs a SIGN_IN discovery;
 * - renewal (`renewal.service.ts`): `authHeaders` and what a 401 or 403 from the MCP server means,
 *   single-flight renewal under a row lock, and the background sweep.
 *
 * Tokens, secrets, codes and verifiers never leave these modules in clear except in the
 * `authorization` header: not in errors, logs, audit rows or GraphQL responses.
 */
import type { Principal } from '../auth/principal.js';
import type { Connection } from '../connections/connection.entity.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { SecretBox } from '../connections/secrets.js';
import type { OutboundClient } from '../http/outbound.js';
import type { Logger } from '../logger.js';
import type { McpClient } from '../mcp/client.js';
import type { ToolCache } from '../turns/tool-cache.js';
import { announceToolChange } from '../turns/cache-signal.js';
import type { CallbackOutcome } from './callback-outcome.js';
import { CallbackService, type SignInDiscovery } from './callback.service.js';
import type { OAuthDeps, SignInEffects } from './deps.js';
import { outboundFetch } from './fetch.js';
import { RenewalService, type RenewalOptions, type SweepResult } from './renewal.service.js';
import {
  SignInService,
  type BeginSignInInput,
  type BeginSignInResult,
  type SignInOptions,
} from './sign-in.service.js';

export interface OAuthServiceOptions extends RenewalOptions, Omit<SignInOptions, 'publicUrl'> {
  /** The clock, in ms since the epoch. Tests move it forward. */
  now?: () => number;
}

/**
 * What OAuth sign-in, callback and renewal are built with (a part of app.ts's services); the
 * discovery a sign-in runs is passed on its own.
 */
export interface OAuthServiceDeps {
  orm: MikroORM;
  logger: Logger;
  secrets: SecretBox;
  outbound: OutboundClient;
  config: Config;
  mcp: McpClient;
  toolCache: ToolCache;
}

/** Sign-in, callback and renewal, for `Services.oauth`. */
export class OAuthService {
  readonly #signIn: SignInService;
  readonly #callback: CallbackService;
  readonly #renewal: RenewalService;

  /**
   * `discovery` is what a completed sign-in runs; app.ts passes one that forwards to the discovery
   * service built after this one (discovery reads OAuth's headers, so one of the two comes first).
   */
  constructor(services: OAuthServiceDeps, discovery: SignInDiscovery, options: OAuthServiceOptions = {}) {
    const { now = Date.now, ...rest } = options;
    const { orm, logger, secrets, outbound, config } = services;
    const deps: OAuthDeps = { orm, logger, secrets, fetch: outboundFetch(outbound), now };
    const effects: SignInEffects = {
      forgetSession: (connectionId) => services.mcp.forgetSession(connectionId),
      announce: async (connectionId, workspaceId) => {
        try {
          await announceToolChange(services, orm.em.getConnection(), {
            kind: 'connection',
            id: connectionId,
            workspaceId,
          });
        } catch (err) {
          logger.warn({ err, connectionId }, 'cache notification failed');
        }
      },
    };
    this.#signIn = new SignInService(deps, outbound, { ...rest, publicUrl: config.publicUrl });
    this.#callback = new CallbackService(deps, effects, discovery);
    this.#renewal = new RenewalService(deps, effects, rest);
  }

  /** Where the authorization server sends the browser back to. */
  get redirectUri(): string {
    return this.#signIn.redirectUri;
  }

  beginSignIn(
    connection: Connection,
    principal: Principal,
    input?: BeginSignInInput,
  ): Promise<BeginSignInResult> {
    return this.#signIn.beginSignIn(connection, principal, input);
  }

  handleCallback(query: URLSearchParams): Promise<CallbackOutcome> {
    return this.#callback.handleCallback(query);
  }

  authHeaders(connectionId: string): Promise<Record<string, string>> {
    return this.#renewal.authHeaders(connectionId);
  }

  credentialSecrets(connectionId: string): Promise<string[]> {
    return this.#renewal.credentialSecrets(connectionId);
  }

  renewAfterRejection(
    connectionId: string,
    rejected: Record<string, string>,
  ): Promise<Record<string, string>> {
    return this.#renewal.renewAfterRejection(connectionId, rejected);
  }

  markNeedsSignIn(connectionId: string, reason?: string): Promise<void> {
    return this.#renewal.markNeedsSignIn(connectionId, reason);
  }

  stepUp(connectionId: string, demanded: string): Promise<string | null> {
    return this.#renewal.stepUp(connectionId, demanded);
  }

  sweepOnce(): Promise<SweepResult> {
    return this.#renewal.sweepOnce();
  }

  startSweep(): void {
    this.#renewal.startSweep();
  }

  stopSweep(): Promise<void> {
    return this.#renewal.stopSweep();
  }
}
