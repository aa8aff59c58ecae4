/**
 * The end of an OAuth sign-in (I/O), from the callback's query: consumes the `state` atomically,
 * exchanges the code (with `resource`), stores the tokens sealed, sets the connection's credential
 * to OAUTH, and runs a SIGN_IN discovery. What the page says is in `callback-outcome.ts`.
 */
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import * as oauth from 'oauth4webapi';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import { Connection, ConnectionStatus, CredentialKind } from '../connections/connection.entity.js';
import { DiscoveryOutcome, DiscoveryRun, DiscoveryTrigger } from '../discovery/discovery-run.entity.js';
import type { DiscoveryResult } from '../discovery/discover.js';
import {
  callbackFailure,
  DISCOVERY_INTERNAL_FAILURE,
  signedIn,
  type CallbackDiscovery,
  type CallbackOutcome,
} from './callback-outcome.js';
import { storedClient } from './client-auth.js';
import type { OAuthDeps, SignInEffects } from './deps.js';
import { safeOAuthCode } from './errors.js';
import { expiresAtFrom } from './expiry.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthCredential } from './oauth-credential.entity.js';
import { OAuthSignIn } from './oauth-sign-in.entity.js';
import { codeVerifierAad, tokenAad } from './sealing.js';
import { transportOptions } from './server-discovery.js';
import { describeStateProblem, hashState, isWellFormedState, signInStateProblem } from './state.js';
import { classifyTokenFailure } from './token-failure.js';

/** Runs the discovery that follows a sign-in (the `DiscoveryService`). */
export interface SignInDiscovery {
  run(
    connectionId: string,
    trigger: DiscoveryTrigger,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
  ): Promise<DiscoveryResult>;
}

/** A pending sign-in whose `state` this callback consumed, with what it needs from it. */
interface Consumed {
  signIn: OAuthSignIn;
  state: string;
  stateHash: string;
  connection: Connection;
  clientRow: OAuthClient;
}

export class CallbackService {
  readonly #deps: OAuthDeps;
  readonly #effects: SignInEffects;
  readonly #discovery: SignInDiscovery;

  constructor(deps: OAuthDeps, effects: SignInEffects, discovery: SignInDiscovery) {
    this.#deps = deps;
    this.#effects = effects;
    this.#discovery = discovery;
  }

  /**
   * Finishes a sign-in from the callback's query. Never throws: every failure is an outcome for the
   * page. An unknown, used or expired `state` changes nothing. A valid one is consumed first, so a
   * replay is refused even if this attempt fails later.
   */
  async handleCallback(query: URLSearchParams): Promise<CallbackOutcome> {
    try {
      return await this.#handleCallback(query);
    } catch (err) {
      // Never the error itself on the page. The log gets it: token requests failed earlier with
      // their own outcome, so what is left (database, sealing) holds no token in clear.
      this.#deps.logger.error({ err }, 'oauth callback failed');
      return callbackFailure(
        500,
        'The sign-in could not be completed because of an internal error. It has been logged.',
        null,
      );
    }
  }

  async #handleCallback(query: URLSearchParams): Promise<CallbackOutcome> {
    const em = this.#deps.orm.em.fork();
    const consumed = await this.#consume(em, query.get('state'));
    if ('status' in consumed) return consumed;
    const { signIn, connection, clientRow } = consumed;
    const tokens = await this.#exchange(consumed, query);
    if ('status' in tokens) return tokens;
    await this.#store(em, signIn, clientRow, tokens.tokens, tokens.requestedAt);
    // A session begun under another identity must not be reused.
    this.#effects.forgetSession(connection.id);
    await this.#effects.announce(connection.id, connection.workspace.id);
    this.#deps.logger.info({ connectionId: connection.id, issuer: signIn.issuer }, 'oauth sign-in completed');
    return signedIn(connection.name, await this.#discover(connection.id, signIn.actor));
  }

  /** Consumes the `state`, atomically: of two callbacks with one state, exactly one gets the row. */
  async #consume(em: EntityManager, state: string | null): Promise<Consumed | CallbackOutcome> {
    if (!isWellFormedState(state))
      return callbackFailure(400, describeStateProblem('MISSING'), null, 'MISSING');
    const stateHash = hashState(state);
    const nowMs = this.#deps.now();
    const consumed = await em.nativeUpdate(
      OAuthSignIn,
      { stateHash, usedAt: null, expiresAt: { $gt: new Date(nowMs) } },
      { usedAt: new Date(nowMs) },
    );
    const signIn = await em.findOne(OAuthSignIn, { stateHash });
    if (consumed !== 1 || signIn === null) {
      const problem = (consumed === 1 ? null : signInStateProblem(signIn, nowMs)) ?? 'UNKNOWN';
      this.#deps.logger.info({ problem }, 'oauth callback refused');
      return callbackFailure(400, describeStateProblem(problem), null, problem);
    }
    const connection = await em.findOne(Connection, { id: signIn.connection.id });
    if (connection === null)
      return callbackFailure(410, 'The connection was deleted during the sign-in.', null);
    const clientRow = await em.findOneOrFail(OAuthClient, { id: signIn.client.id });
    return { signIn, state, stateHash, connection, clientRow };
  }

  /** Checks the authorization response and exchanges its code for tokens. Changes nothing. */
  async #exchange(
    { signIn, state, stateHash, connection, clientRow }: Consumed,
    query: URLSearchParams,
  ): Promise<{ tokens: oauth.TokenEndpointResponse; requestedAt: number } | CallbackOutcome> {
    const { logger, secrets } = this.#deps;
    const connectionId = connection.id;
    const name = connection.name;
    // Stored by sign-in from oauth4webapi's own validated AuthorizationServer: read back as that type.
    const server = signIn.serverMetadata as unknown as oauth.AuthorizationServer;
    const { client, auth } = storedClient(clientRow, secrets);

    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(server, client, query, state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        const code = safeOAuthCode(err.error);
        logger.info({ connectionId, error: code }, 'oauth sign-in refused by the authorization server');
        return callbackFailure(
          400,
          `The authorization server did not grant access (${code}). Nothing was changed.`,
          name,
        );
      }
      logger.warn({ connectionId }, 'oauth callback with an invalid authorization response');
      return callbackFailure(
        400,
        'The answer of the authorization server is not valid for this sign-in (wrong issuer, or no code). Nothing was changed.',
        name,
      );
    }

    const verifier = secrets.open(signIn.codeVerifier, codeVerifierAad(stateHash));
    const requestedAt = this.#deps.now();
    let tokens: oauth.TokenEndpointResponse;
    try {
      const res = await oauth.authorizationCodeGrantRequest(
        server,
        client,
        auth,
        params,
        signIn.redirectUri,
        verifier,
        {
          additionalParameters: { resource: signIn.resource },
          ...transportOptions(this.#deps.fetch),
        },
      );
      tokens = await oauth.processAuthorizationCodeResponse(server, client, res);
    } catch (err) {
      const failure = classifyTokenFailure(err);
      logger.warn({ connectionId, code: failure.code }, 'oauth code exchange failed');
      return callbackFailure(
        502,
        `The sign-in code could not be exchanged for a token: ${failure.message}. Nothing was changed.`,
        name,
      );
    }
    if (tokens.token_type !== 'bearer') {
      return callbackFailure(
        502,
        `The authorization server issued a "${safeOAuthCode(tokens.token_type)}" token; only bearer tokens are supported. Nothing was changed.`,
        name,
      );
    }
    return { tokens, requestedAt };
  }

  /** Stores the tokens sealed and makes OAuth the connection's credential, in one transaction. */
  async #store(
    em: EntityManager,
    signIn: OAuthSignIn,
    clientRow: OAuthClient,
    tokens: oauth.TokenEndpointResponse,
    requestedAt: number,
  ): Promise<void> {
    const { secrets } = this.#deps;
    const connectionId = signIn.connection.id;
    await em.fork().transactional(async (tx) => {
      const c = await tx.findOneOrFail(
        Connection,
        { id: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      let credential = await tx.findOne(
        OAuthCredential,
        { connection: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const init = {
        connection: tx.getReference(Connection, connectionId, { wrapped: true }),
        client: tx.getReference(OAuthClient, clientRow.id, { wrapped: true }),
        issuer: signIn.issuer,
        resource: signIn.resource,
        serverMetadata: signIn.serverMetadata,
        signedInBy: signIn.actor,
        signedInAt: new Date(requestedAt),
      };
      if (credential === null) {
        credential = new OAuthCredential(init);
        tx.persist(credential);
      } else {
        Object.assign(credential, init);
      }
      credential.accessToken = secrets.seal(tokens.access_token, tokenAad(connectionId, 'access'));
      credential.refreshToken =
        tokens.refresh_token === undefined
          ? null
          : secrets.seal(tokens.refresh_token, tokenAad(connectionId, 'refresh'));
      credential.expiresAt = expiresAtFrom(tokens.expires_in, requestedAt);
      credential.scope = typeof tokens.scope === 'string' ? tokens.scope : signIn.scope;
      credential.refreshedAt = null;
      credential.version += 1;

      c.credentialKind = CredentialKind.OAUTH;
      c.credentialSecret = null;
      c.credentialHeaderName = null;
      c.credentialLast4 = null;
      // Usable again: READY if a discovery ever succeeded (its operations stand), else PENDING
      // until the discovery below succeeds.
      const succeeded = await tx.count(DiscoveryRun, {
        connection: connectionId,
        outcome: DiscoveryOutcome.SUCCEEDED,
      });
      c.status = succeeded > 0 ? ConnectionStatus.READY : ConnectionStatus.PENDING;
      audit(
        tx,
        { label: signIn.actor },
        {
          workspaceId: c.workspace.id,
          action: 'SIGN_IN',
          targetType: 'Connection',
          targetId: c.nodeId,
          after: {
            issuer: signIn.issuer,
            resource: signIn.resource,
            scope: credential.scope,
            renewable: tokens.refresh_token !== undefined,
            expiresAt: credential.expiresAt?.toISOString() ?? null,
          },
        },
      );
    });
  }

  /** The SIGN_IN discovery, as the page reports it. Never throws. */
  async #discover(connectionId: string, actor: string): Promise<CallbackDiscovery> {
    try {
      const { run } = await this.#discovery.run(connectionId, DiscoveryTrigger.SIGN_IN, { label: actor });
      return {
        outcome: run.outcome,
        added: run.added,
        errorCode: run.errorCode,
        errorMessage: run.errorMessage,
      };
    } catch (err) {
      this.#deps.logger.error({ err, connectionId }, 'discovery after sign-in failed');
      return { ...DISCOVERY_INTERNAL_FAILURE };
    }
  }
}
