/**
 * The start of an OAuth sign-in (I/O): discovers the authorization server, registers a client
 * (RFC 7591) or uses the operator's, and stores a pending sign-in: `state` (hashed; single use;
 * 10 minutes; bound to the connection and the operator) and a PKCE S256 verifier (sealed). The
 * callback (`callback.service.ts`) finishes it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import * as oauth from 'oauth4webapi';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import { Connection, ConnectionKind } from '../connections/connection.entity.js';
import type { OutboundClient } from '../http/outbound.js';
import type { JsonObject } from '../operations/types.js';
import { authorizationUrl } from './authorization-request.js';
import { OAUTH_CALLBACK_PATH } from './callback-outcome.js';
import { operatorClient, readRegistration, registeredAuthMethod, type ClientInput } from './client-auth.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError, OAuthErrorCode } from './errors.js';
import { chooseAuthMethod, mergeScopes } from './metadata.js';
import { OAuthClient, OAuthClientSource } from './oauth-client.entity.js';
import { OAuthCredential } from './oauth-credential.entity.js';
import { OAuthSignIn } from './oauth-sign-in.entity.js';
import { clientSecretAad, codeVerifierAad } from './sealing.js';
import { discoverAuthorization, transportOptions, type AuthorizationTarget } from './server-discovery.js';
import { DEFAULT_SIGN_IN_TTL_MS, hashState } from './state.js';
import { classifyTokenFailure } from './token-failure.js';

/** The name we register under (RFC 7591 `client_name`). */
export const DEFAULT_CLIENT_NAME = 'ImpelLabs connected tools';

export interface SignInOptions {
  /** The service's public address; the redirect URI is `${publicUrl}${OAUTH_CALLBACK_PATH}`. */
  publicUrl: string;
  /** Lifetime of a pending sign-in (`state`). */
  signInTtlMs?: number;
  clientName?: string;
}

/** An operator-registered client id and secret; without them, a stored or registered client is used. */
export type BeginSignInInput = ClientInput;

export interface BeginSignInResult {
  authorizationUrl: string;
  expiresAt: Date;
}

export class SignInService {
  readonly #deps: OAuthDeps;
  readonly #outbound: OutboundClient;
  readonly #signInTtlMs: number;
  readonly #clientName: string;
  /** Where the authorization server sends the browser back to. */
  readonly redirectUri: string;

  constructor(deps: OAuthDeps, outbound: OutboundClient, options: SignInOptions) {
    const { publicUrl, signInTtlMs = DEFAULT_SIGN_IN_TTL_MS, clientName = DEFAULT_CLIENT_NAME } = options;
    this.#deps = deps;
    this.#outbound = outbound;
    this.#signInTtlMs = signInTtlMs;
    this.#clientName = clientName;
    this.redirectUri = `${publicUrl}${OAUTH_CALLBACK_PATH}`;
  }

  /**
   * Starts a sign-in for an MCP connection the principal may see (the caller checks that). Throws
   * `OAuthError` for what the operator can fix (with `field`), such as a server that offers no
   * dynamic registration when no client id was given. The URL carries `resource` (RFC 8707) and the
   * scopes from the metadata.
   */
  async beginSignIn(
    connection: Connection,
    principal: Principal,
    input: BeginSignInInput = {},
  ): Promise<BeginSignInResult> {
    if (connection.kind !== ConnectionKind.MCP || !connection.endpointUrl) {
      throw new OAuthError(OAuthErrorCode.NOT_APPLICABLE, 'only MCP connections sign in with OAuth', {
        field: ['input', 'connectionId'],
      });
    }
    const { clientId, clientSecret } = operatorClient(input);
    const { orm, secrets, logger } = this.#deps;

    const target = await discoverAuthorization(this.#outbound, this.#deps.fetch, connection.endpointUrl);
    const em = orm.em.fork();
    // Step-up (2025-11-25 authorization, "Scope Selection Strategy"): the scopes the last sign-in
    // with this authorization server held, plus any a 403 `insufficient_scope` demanded since.
    const previous = await em.findOne(OAuthCredential, { connection: connection.id });
    if (previous?.scope && previous.issuer === target.issuer) {
      target.scope = mergeScopes(target.scope, previous.scope) ?? target.scope;
    }
    const client = await this.#clientFor(em, connection.id, target, clientId, clientSecret);

    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    const codeChallenge = await oauth.calculatePKCECodeChallenge(verifier);
    const stateHash = hashState(state);
    const expiresAt = new Date(this.#deps.now() + this.#signInTtlMs);
    const signIn = new OAuthSignIn({
      stateHash,
      connection: em.getReference(Connection, connection.id, { wrapped: true }),
      client: em.getReference(OAuthClient, client.id, { wrapped: true }),
      actor: principal.label,
      issuer: target.issuer,
      resource: target.resource,
      redirectUri: this.redirectUri,
      // oauth4webapi's AuthorizationServer is plain JSON from the metadata document, typed as an interface.
      serverMetadata: target.server as unknown as JsonObject,
      codeVerifier: secrets.seal(verifier, codeVerifierAad(stateHash)),
      expiresAt,
    });
    signIn.actorTokenId = principal.tokenId;
    signIn.scope = target.scope;
    em.persist(signIn);
    audit(em, principal, {
      workspaceId: connection.workspace.id,
      action: 'BEGIN_SIGN_IN',
      targetType: 'Connection',
      targetId: connection.nodeId,
      after: {
        issuer: target.issuer,
        resource: target.resource,
        client: client.source,
        scope: target.scope,
      },
    });
    await em.flush();

    logger.info(
      { connectionId: connection.id, issuer: target.issuer, client: client.source },
      'oauth sign-in started',
    );
    return {
      authorizationUrl: authorizationUrl({
        endpoint: target.server.authorization_endpoint!,
        clientId: client.clientId,
        redirectUri: this.redirectUri,
        state,
        codeChallenge,
        resource: target.resource,
        scope: target.scope,
      }),
      expiresAt,
    };
  }

  /** The operator's client, else the newest stored one for this server, else a new registration. */
  async #clientFor(
    em: EntityManager,
    connectionId: string,
    target: AuthorizationTarget,
    clientId: string | null,
    clientSecret: string | null,
  ): Promise<OAuthClient> {
    const base = {
      connection: em.getReference(Connection, connectionId, { wrapped: true }),
      issuer: target.issuer,
      redirectUri: this.redirectUri,
    };
    if (clientId !== null) {
      const method = chooseAuthMethod(
        target.server.token_endpoint_auth_methods_supported,
        clientSecret ? 'secret' : 'public',
      );
      if (method === null) {
        throw new OAuthError(
          OAuthErrorCode.CLIENT_INVALID,
          'the authorization server accepts neither client_secret_basic nor client_secret_post for a client secret',
          { field: ['input', 'clientSecret'] },
        );
      }
      const client = new OAuthClient({
        ...base,
        clientId,
        authMethod: method,
        source: OAuthClientSource.OPERATOR,
      });
      if (clientSecret !== null)
        client.clientSecret = this.#deps.secrets.seal(clientSecret, clientSecretAad(client.id));
      em.persist(client);
      return client;
    }
    const stored = await em.findOne(
      OAuthClient,
      { connection: connectionId, issuer: target.issuer, redirectUri: this.redirectUri },
      { orderBy: { id: 'desc' } },
    );
    if (stored) return stored;
    return this.#register(em, base, target);
  }

  /** A dynamic client registration (RFC 7591), flushed at once. */
  async #register(
    em: EntityManager,
    base: Pick<ConstructorParameters<typeof OAuthClient>[0], 'connection' | 'issuer' | 'redirectUri'>,
    target: AuthorizationTarget,
  ): Promise<OAuthClient> {
    if (typeof target.server.registration_endpoint !== 'string') {
      throw new OAuthError(
        OAuthErrorCode.CLIENT_REQUIRED,
        `the authorization server ${new URL(target.issuer).host} does not offer dynamic client registration: ` +
          `give a client id (and secret) registered for the redirect URI ${this.redirectUri}`,
        { field: ['input', 'clientId'] },
      );
    }
    const method = chooseAuthMethod(target.server.token_endpoint_auth_methods_supported, 'register');
    if (method === null) {
      throw new OAuthError(
        OAuthErrorCode.REGISTRATION_FAILED,
        'the authorization server supports no client authentication method we can register with',
        { field: ['input', 'connectionId'] },
      );
    }
    let registered: Awaited<ReturnType<typeof readRegistration>>;
    try {
      const res = await oauth.dynamicClientRegistrationRequest(
        target.server,
        {
          client_name: this.#clientName,
          redirect_uris: [this.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          // No `scope`: servers validate it against their own list and refuse the registration.
          token_endpoint_auth_method: method,
        },
        transportOptions(this.#deps.fetch),
      );
      registered = await readRegistration(res);
    } catch (err) {
      const failure = classifyTokenFailure(err);
      throw new OAuthError(
        OAuthErrorCode.REGISTRATION_FAILED,
        `dynamic client registration failed: ${failure.message}`,
        { field: ['input', 'connectionId'] },
      );
    }
    const secret =
      typeof registered.client_secret === 'string' && registered.client_secret !== ''
        ? registered.client_secret
        : null;
    const client = new OAuthClient({
      ...base,
      clientId: registered.client_id,
      authMethod: registeredAuthMethod(secret, registered.token_endpoint_auth_method, method),
      source: OAuthClientSource.DYNAMIC,
    });
    if (secret !== null) client.clientSecret = this.#deps.secrets.seal(secret, clientSecretAad(client.id));
    em.persist(client);
    // Flushed now: a registration we hold must not be lost if the sign-in row fails later.
    await em.flush();
    return client;
  }
}
