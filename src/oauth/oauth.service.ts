/**
 * OAuth sign-in for MCP connections, from the client's side (protocol 2025-06-18,
 * basic/authorization.mdx; issue 7), on oauth4webapi with every request through the outbound client.
 *
 * - `beginSignIn` discovers the authorization server, registers a client (RFC 7591) or uses the
 *   operator's, and stores a pending sign-in: `state` (hashed; single use; 10 minutes; bound to the
 *   connection and the operator) and a PKCE S256 verifier (sealed). It returns the authorization URL,
 *   which carries `resource` (RFC 8707) and the scopes from the metadata.
 * - `handleCallback` consumes the state atomically, exchanges the code (with `resource`), stores the
 *   tokens sealed, sets the connection's credential to OAUTH, and runs a SIGN_IN discovery.
 * - `authHeaders` gives `Authorization: Bearer …`, renewing first when the token expires within
 *   60 s. Renewal is single-flight per connection in this process, and across processes it runs
 *   under a row lock with a version check, so one refresh token is never spent twice (servers that
 *   rotate refresh tokens revoke the whole grant on reuse).
 * - A refresh the authorization server refuses (`invalid_grant`, a client error) ends the sign-in:
 *   tokens are dropped and the connection goes to NEEDS_SIGN_IN. A refresh that fails for transport
 *   reasons (unreachable, timeout, 5xx) changes nothing: the current token is used while it is still
 *   valid, and the next call or sweep tries again.
 * - A background sweep renews tokens about to expire, so that an idle connection works on its next
 *   call.
 *
 * Tokens, secrets, codes and verifiers never leave this module in clear except in the
 * `authorization` header: not in errors, logs, audit rows or GraphQL responses.
 */
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import * as oauth from 'oauth4webapi';
import { AuditEvent } from '../audit/audit-event.entity.js';
import type { Principal } from '../auth/principal.js';
import {
  Connection,
  ConnectionKind,
  ConnectionStatus,
  CredentialKind,
} from '../connections/connection.entity.js';
import { announceToolChange } from '../turns/cache-signal.js';
import { DiscoveryOutcome, DiscoveryRun, DiscoveryTrigger } from '../discovery/discovery-run.entity.js';
import { toGlobalId } from '../graphql/node.js';
import { isOutboundError } from '../http/outbound.js';
import type { JsonObject } from '../operations/types.js';
import type { Services } from '../services.js';
import { OAuthError, OAuthErrorCode, safeOAuthCode } from './errors.js';
import { DEFAULT_REFRESH_SKEW_MS, expiresAtFrom, isUnexpired, needsRefresh } from './expiry.js';
import { outboundFetch, type OAuthFetch } from './fetch.js';
import {
  chooseAuthMethod,
  mergeScopes,
  resourceCoversEndpoint,
  type TokenEndpointAuthMethod,
} from './metadata.js';
import { OAuthClient, OAuthClientSource } from './oauth-client.entity.js';
import { OAuthCredential } from './oauth-credential.entity.js';
import { OAuthSignIn } from './oauth-sign-in.entity.js';
import { discoverAuthorization, transportOptions, type AuthorizationTarget } from './server-discovery.js';
import {
  DEFAULT_SIGN_IN_TTL_MS,
  describeStateProblem,
  hashState,
  isWellFormedState,
  signInStateProblem,
  type StateProblem,
} from './state.js';

/** The callback route; the redirect URI is `${publicUrl}${OAUTH_CALLBACK_PATH}`. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';
/** How often the sweep looks for tokens about to expire. */
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000; // 30 seconds
/**
 * The sweep renews tokens expiring within this window: the 60 s skew plus two sweep intervals, so
 * a token is renewed by the sweep well before a call would have to renew it inline.
 */
export const DEFAULT_SWEEP_WINDOW_MS = DEFAULT_REFRESH_SKEW_MS + 2 * DEFAULT_SWEEP_INTERVAL_MS; // 2 minutes
/** Credentials renewed per sweep, soonest expiry first; the rest wait for the next one. */
export const DEFAULT_SWEEP_BATCH = 100;
/**
 * Sign-ins are kept this long after they expire, so that a late or replayed callback is told
 * "expired" or "already used" rather than "unknown". Then the sweep deletes them.
 */
export const DEFAULT_SIGN_IN_RETENTION_MS = 24 * 60 * 60_000; // 1 day
/** The name we register under (RFC 7591 `client_name`). */
export const DEFAULT_CLIENT_NAME = 'ImpelLabs connected tools';
/** The actor of audit rows written by renewal, which no person started. */
const SYSTEM_ACTOR = 'oauth renewal';

export interface OAuthServiceOptions {
  /** A token expiring within this many ms is renewed before use. */
  refreshSkewMs?: number;
  sweepIntervalMs?: number;
  sweepWindowMs?: number;
  sweepBatch?: number;
  /** Lifetime of a pending sign-in (`state`). */
  signInTtlMs?: number;
  signInRetentionMs?: number;
  clientName?: string;
  /** The clock, in ms since the epoch. Tests move it forward. */
  now?: () => number;
}

export interface BeginSignInInput {
  /** An operator-registered client id; without it, a stored or dynamically registered client is used. */
  clientId?: string | null;
  /** Its secret, if it is a confidential client. Stored sealed. */
  clientSecret?: string | null;
}

export interface BeginSignInResult {
  authorizationUrl: string;
  expiresAt: Date;
}

/** What the callback page shows. Every string is plain text; the page escapes it. */
export interface CallbackOutcome {
  ok: boolean;
  /** HTTP status of the page. */
  status: number;
  title: string;
  message: string;
  connectionName: string | null;
  /** Set when a discovery ran after the sign-in. */
  discovery: {
    outcome: DiscoveryOutcome;
    added: number;
    errorCode: string | null;
    errorMessage: string | null;
  } | null;
  /** Set when the callback was refused because of its `state`. */
  stateProblem: StateProblem | null;
}

export interface SweepResult {
  renewed: number;
  failed: number;
}

/** The AAD that binds a sealed token to its connection: a copied blob won't open elsewhere. */
export function tokenAad(connectionId: string, kind: 'access' | 'refresh'): string {
  return `oauth:${connectionId}:${kind}`;
}

export function clientSecretAad(clientRowId: string): string {
  return `oauth-client:${clientRowId}:secret`;
}

export function codeVerifierAad(stateHash: string): string {
  return `oauth-sign-in:${stateHash}:verifier`;
}

/** A refresh outcome that the caller turns into a token or an error. */
type RefreshOutcome =
  | { kind: 'token'; accessToken: string; refreshed: boolean }
  | { kind: 'needs_sign_in'; reason: string }
  | { kind: 'unavailable'; message: string };

/** Why a token request failed, with a message safe to show. */
interface TokenFailure {
  /** The authorization server refused: the sign-in is over. Otherwise a transport problem. */
  permanent: boolean;
  code: string;
  message: string;
}

/**
 * Classifies an error of an oauth4webapi token request. OAuth error bodies (`invalid_grant`…) and
 * client-authentication challenges are the server's answer; transport failures and 5xx are not.
 * The original error is never kept: its `cause` may hold the response body.
 */
type Registration = Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;

/**
 * A dynamic registration answer, read tolerantly: a 200/201 with a `client_id` is a registration,
 * even when it leaves out fields RFC 7591 asks for (seen: no `client_secret_expires_at` next to a
 * secret, which oauth4webapi refuses). Anything else goes through oauth4webapi, which turns the
 * server's OAuth error into a ResponseBodyError.
 */
export async function readRegistration(res: Response): Promise<Registration> {
  if (res.status !== 200 && res.status !== 201) return oauth.processDynamicClientRegistrationResponse(res);
  const body: unknown = await res.json().catch(() => null);
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof fields.client_id !== 'string' || fields.client_id === '') {
    throw new OAuthError(OAuthErrorCode.REGISTRATION_FAILED, 'the registration answer has no client_id');
  }
  return fields as Registration;
}

export function classifyTokenFailure(err: unknown): TokenFailure {
  if (err instanceof oauth.ResponseBodyError) {
    const code = safeOAuthCode(err.error);
    return {
      permanent: err.status < 500,
      code,
      message: `the authorization server answered HTTP ${err.status} (${code})`,
    };
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return {
      permanent: true,
      code: 'invalid_client',
      message: `the authorization server refused our client (HTTP ${err.status})`,
    };
  }
  if (isOutboundError(err)) {
    return { permanent: false, code: err.code, message: err.message };
  }
  if (err instanceof oauth.OperationProcessingError && err.cause instanceof Response) {
    const status = err.cause.status;
    return {
      permanent: status >= 400 && status < 500,
      code: `http_${status}`,
      message: `the authorization server answered HTTP ${status}`,
    };
  }
  return {
    permanent: false,
    code: 'invalid_response',
    message: 'the authorization server gave an answer we could not use',
  };
}

/** The application/x-www-form-urlencoded form of one value (the WHATWG serializer). */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-urlencoded, then Base64. The WHATWG
 * serializer leaves `-`, `.`, `_` and `*` as they are; oauth4webapi's own encoder escapes them too,
 * which is allowed but which servers that do not decode the header (seen: the MCP conformance
 * suite's, with the id `pre-registered-client`) refuse.
 */
function clientSecretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const pair = `${formEncode(client.client_id)}:${formEncode(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`);
  };
}

function clientAuthFor(method: string, secret: string | null): oauth.ClientAuth {
  if (method === 'client_secret_basic' && secret !== null) return clientSecretBasic(secret);
  if (method === 'client_secret_post' && secret !== null) return oauth.ClientSecretPost(secret);
  return oauth.None();
}

/** A value an operator typed as a client id or secret: printable, no spaces around, bounded. */
function checkClientValue(value: string, max: number): boolean {
  return value.length > 0 && value.length <= max && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value);
}

export class OAuthService {
  readonly #services: Services;
  readonly #fetch: OAuthFetch;
  readonly #now: () => number;
  readonly #refreshSkewMs: number;
  readonly #sweepIntervalMs: number;
  readonly #sweepWindowMs: number;
  readonly #sweepBatch: number;
  readonly #signInTtlMs: number;
  readonly #signInRetentionMs: number;
  readonly #clientName: string;
  /** Single flight: the refresh in progress per connection id, shared by every caller. */
  readonly #inflight = new Map<string, Promise<RefreshOutcome>>();
  #sweepTimer: NodeJS.Timeout | null = null;
  #sweeping: Promise<void> | null = null;
  #sweepOn = false;

  constructor(services: Services, options: OAuthServiceOptions = {}) {
    const {
      refreshSkewMs = DEFAULT_REFRESH_SKEW_MS,
      sweepIntervalMs = DEFAULT_SWEEP_INTERVAL_MS,
      sweepWindowMs = DEFAULT_SWEEP_WINDOW_MS,
      sweepBatch = DEFAULT_SWEEP_BATCH,
      signInTtlMs = DEFAULT_SIGN_IN_TTL_MS,
      signInRetentionMs = DEFAULT_SIGN_IN_RETENTION_MS,
      clientName = DEFAULT_CLIENT_NAME,
      now = Date.now,
    } = options;
    this.#services = services;
    this.#fetch = outboundFetch(services.outbound);
    this.#now = now;
    this.#refreshSkewMs = refreshSkewMs;
    this.#sweepIntervalMs = sweepIntervalMs;
    this.#sweepWindowMs = Math.max(sweepWindowMs, refreshSkewMs);
    this.#sweepBatch = sweepBatch;
    this.#signInTtlMs = signInTtlMs;
    this.#signInRetentionMs = signInRetentionMs;
    this.#clientName = clientName;
  }

  /** Where the authorization server sends the browser back to. */
  get redirectUri(): string {
    return `${this.#services.config.publicUrl}${OAUTH_CALLBACK_PATH}`;
  }

  // ------------------------------------------------------------------ sign-in

  /**
   * Starts a sign-in for an MCP connection the principal may see (the caller checks that). Throws
   * `OAuthError` for what the operator can fix (with `field`), such as a server that offers no
   * dynamic registration when no client id was given.
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
    const clientId = input.clientId == null || input.clientId === '' ? null : input.clientId;
    const clientSecret = input.clientSecret == null || input.clientSecret === '' ? null : input.clientSecret;
    if (clientId !== null && !checkClientValue(clientId, 512)) {
      throw new OAuthError(
        OAuthErrorCode.CLIENT_INVALID,
        'the client id must be 1–512 printable characters',
        {
          field: ['input', 'clientId'],
        },
      );
    }
    if (clientSecret !== null && clientId === null) {
      throw new OAuthError(OAuthErrorCode.CLIENT_INVALID, 'a client secret needs its client id', {
        field: ['input', 'clientId'],
      });
    }
    if (clientSecret !== null && !checkClientValue(clientSecret, 2048)) {
      throw new OAuthError(
        OAuthErrorCode.CLIENT_INVALID,
        'the client secret must be 1–2048 printable characters',
        {
          field: ['input', 'clientSecret'],
        },
      );
    }

    const target = await discoverAuthorization(this.#services.outbound, this.#fetch, connection.endpointUrl);
    const em = this.#services.orm.em.fork();
    // Step-up (2025-11-25 authorization, "Scope Selection Strategy"): the scopes the last sign-in
    // with this authorization server held, plus any a 403 `insufficient_scope` demanded since.
    const previous = await em.findOne(OAuthCredential, { connection: connection.id });
    if (previous?.scope && previous.issuer === target.issuer) {
      target.scope = mergeScopes(target.scope, previous.scope) ?? target.scope;
    }
    const client = await this.#clientFor(em, connection.id, target, clientId, clientSecret);

    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const stateHash = hashState(state);
    const expiresAt = new Date(this.#now() + this.#signInTtlMs);
    const signIn = new OAuthSignIn({
      stateHash,
      connection: em.getReference(Connection, connection.id, { wrapped: true }),
      client: em.getReference(OAuthClient, client.id, { wrapped: true }),
      actor: principal.label,
      issuer: target.issuer,
      resource: target.resource,
      redirectUri: this.redirectUri,
      serverMetadata: target.server as unknown as JsonObject,
      codeVerifier: this.#services.secrets.seal(verifier, codeVerifierAad(stateHash)),
      expiresAt,
    });
    signIn.actorTokenId = principal.tokenId;
    signIn.scope = target.scope;
    em.persist(signIn);
    em.persist(
      new AuditEvent({
        workspaceId: connection.workspace.id,
        actor: principal.label,
        action: 'BEGIN_SIGN_IN',
        targetType: 'Connection',
        targetId: connection.nodeId,
        before: null,
        after: {
          issuer: target.issuer,
          resource: target.resource,
          client: client.source,
          scope: target.scope,
        },
      }),
    );
    await em.flush();

    const url = new URL(target.server.authorization_endpoint!);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', challenge);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('resource', target.resource);
    if (target.scope !== null) url.searchParams.set('scope', target.scope);
    this.#services.logger.info(
      { connectionId: connection.id, issuer: target.issuer, client: client.source },
      'oauth sign-in started',
    );
    return { authorizationUrl: url.href, expiresAt };
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
        client.clientSecret = this.#services.secrets.seal(clientSecret, clientSecretAad(client.id));
      em.persist(client);
      return client;
    }
    const stored = await em.findOne(
      OAuthClient,
      { connection: connectionId, issuer: target.issuer, redirectUri: this.redirectUri },
      { orderBy: { id: 'desc' } },
    );
    if (stored) return stored;
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
    let registered: Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;
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
        transportOptions(this.#fetch),
      );
      registered = await readRegistration(res);
    } catch (err) {
      const failure = classifyTokenFailure(err);
      throw new OAuthError(
        OAuthErrorCode.REGISTRATION_FAILED,
        `dynamic client registration failed: ${failure.message}`,
        {
          field: ['input', 'connectionId'],
        },
      );
    }
    const secret =
      typeof registered.client_secret === 'string' && registered.client_secret !== ''
        ? registered.client_secret
        : null;
    const granted = registered.token_endpoint_auth_method;
    const authMethod: TokenEndpointAuthMethod =
      secret === null
        ? 'none'
        : granted === 'client_secret_basic' || granted === 'client_secret_post'
          ? granted
          : method === 'none'
            ? 'client_secret_basic'
            : method;
    const client = new OAuthClient({
      ...base,
      clientId: registered.client_id,
      authMethod,
      source: OAuthClientSource.DYNAMIC,
    });
    if (secret !== null)
      client.clientSecret = this.#services.secrets.seal(secret, clientSecretAad(client.id));
    em.persist(client);
    // Flushed now: a registration we hold must not be lost if the sign-in row fails later.
    await em.flush();
    return client;
  }

  #clientOf(client: OAuthClient): { client: oauth.Client; auth: oauth.ClientAuth } {
    const secret =
      client.clientSecret === null
        ? null
        : this.#services.secrets.open(client.clientSecret, clientSecretAad(client.id));
    return {
      client: { client_id: client.clientId, token_endpoint_auth_method: client.authMethod },
      auth: clientAuthFor(client.authMethod, secret),
    };
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
      this.#services.logger.error({ err }, 'oauth callback failed');
      return this.#failure(
        500,
        'The sign-in could not be completed because of an internal error. It has been logged.',
        null,
      );
    }
  }

  #failure(
    status: number,
    message: string,
    connectionName: string | null,
    stateProblem: StateProblem | null = null,
  ): CallbackOutcome {
    return {
      ok: false,
      status,
      title: 'Sign-in failed',
      message,
      connectionName,
      discovery: null,
      stateProblem,
    };
  }

  async #handleCallback(query: URLSearchParams): Promise<CallbackOutcome> {
    const state = query.get('state');
    if (!isWellFormedState(state))
      return this.#failure(400, describeStateProblem('MISSING'), null, 'MISSING');
    const stateHash = hashState(state);
    const em = this.#services.orm.em.fork();
    const nowMs = this.#now();
    // Consumed atomically: of two callbacks with one state, exactly one gets a row.
    const consumed = await em.nativeUpdate(
      OAuthSignIn,
      { stateHash, usedAt: null, expiresAt: { $gt: new Date(nowMs) } },
      { usedAt: new Date(nowMs) },
    );
    const signIn = await em.findOne(OAuthSignIn, { stateHash });
    if (consumed !== 1 || signIn === null) {
      const problem = (consumed === 1 ? null : signInStateProblem(signIn, nowMs)) ?? 'UNKNOWN';
      this.#services.logger.info({ problem }, 'oauth callback refused');
      return this.#failure(400, describeStateProblem(problem), null, problem);
    }
    const connectionId = signIn.connection.id;
    const connection = await em.findOne(Connection, { id: connectionId });
    if (connection === null)
      return this.#failure(410, 'The connection was deleted during the sign-in.', null);
    const name = connection.name;
    const clientRow = await em.findOneOrFail(OAuthClient, { id: signIn.client.id });
    const server = signIn.serverMetadata as unknown as oauth.AuthorizationServer;
    const { client, auth } = this.#clientOf(clientRow);

    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(server, client, query, state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        const code = safeOAuthCode(err.error);
        this.#services.logger.info(
          { connectionId, error: code },
          'oauth sign-in refused by the authorization server',
        );
        return this.#failure(
          400,
          `The authorization server did not grant access (${code}). Nothing was changed.`,
          name,
        );
      }
      this.#services.logger.warn({ connectionId }, 'oauth callback with an invalid authorization response');
      return this.#failure(
        400,
        'The answer of the authorization server is not valid for this sign-in (wrong issuer, or no code). Nothing was changed.',
        name,
      );
    }

    const verifier = this.#services.secrets.open(signIn.codeVerifier, codeVerifierAad(stateHash));
    const requestedAt = this.#now();
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
          ...transportOptions(this.#fetch),
        },
      );
      tokens = await oauth.processAuthorizationCodeResponse(server, client, res);
    } catch (err) {
      const failure = classifyTokenFailure(err);
      this.#services.logger.warn({ connectionId, code: failure.code }, 'oauth code exchange failed');
      return this.#failure(
        502,
        `The sign-in code could not be exchanged for a token: ${failure.message}. Nothing was changed.`,
        name,
      );
    }
    if (tokens.token_type !== 'bearer') {
      return this.#failure(
        502,
        `The authorization server issued a "${safeOAuthCode(tokens.token_type)}" token; only bearer tokens are supported. Nothing was changed.`,
        name,
      );
    }

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
      credential.accessToken = this.#services.secrets.seal(
        tokens.access_token,
        tokenAad(connectionId, 'access'),
      );
      credential.refreshToken =
        tokens.refresh_token === undefined
          ? null
          : this.#services.secrets.seal(tokens.refresh_token, tokenAad(connectionId, 'refresh'));
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
      tx.persist(
        new AuditEvent({
          workspaceId: c.workspace.id,
          actor: signIn.actor,
          action: 'SIGN_IN',
          targetType: 'Connection',
          targetId: c.nodeId,
          before: null,
          after: {
            issuer: signIn.issuer,
            resource: signIn.resource,
            scope: credential.scope,
            renewable: tokens.refresh_token !== undefined,
            expiresAt: credential.expiresAt?.toISOString() ?? null,
          },
        }),
      );
    });
    // A session begun under another identity must not be reused.
    this.#services.mcp.forgetSession(connectionId);
    await this.#publish(connectionId, connection.workspace.id);
    this.#services.logger.info({ connectionId, issuer: signIn.issuer }, 'oauth sign-in completed');

    let discovery: CallbackOutcome['discovery'] = null;
    const runner = this.#services.discovery as Services['discovery'] | undefined;
    if (runner) {
      try {
        const result = await runner.run(connectionId, DiscoveryTrigger.SIGN_IN, { label: signIn.actor });
        const run = result.run;
        discovery = {
          outcome: run.outcome,
          added: run.added,
          errorCode: run.errorCode,
          errorMessage: run.errorMessage,
        };
      } catch (err) {
        this.#services.logger.error({ err, connectionId }, 'discovery after sign-in failed');
        discovery = {
          outcome: DiscoveryOutcome.FAILED,
          added: 0,
          errorCode: 'INTERNAL',
          errorMessage: 'the discovery failed because of an internal error',
        };
      }
    }
    const message =
      discovery === null
        ? 'Signed in. The tools of this connection will be read at the next discovery.'
        : discovery.outcome === DiscoveryOutcome.SUCCEEDED
          ? `Signed in. Discovery succeeded: ${discovery.added} new ${discovery.added === 1 ? 'tool' : 'tools'}.`
          : `Signed in, but the discovery failed (${discovery.errorCode ?? 'unknown'}: ${discovery.errorMessage ?? 'no detail'}).`;
    return {
      ok: true,
      status: 200,
      title: 'Signed in',
      message,
      connectionName: name,
      discovery,
      stateProblem: null,
    };
  }

  // ------------------------------------------------------------------ use and renewal

  /**
   * `{ authorization: 'Bearer …' }` for a connection signed in with OAuth, renewed first when it
   * expires within the skew (60 s). Throws `OAuthError` NEEDS_SIGN_IN when there is no usable
   * sign-in (never signed in, refresh refused), or TOKEN_ENDPOINT_UNAVAILABLE when a renewal that
   * was due failed for transport reasons and the current token has already expired.
   */
  async authHeaders(connectionId: string): Promise<Record<string, string>> {
    const token = await this.#accessToken(connectionId);
    return { authorization: `Bearer ${token}` };
  }

  /**
   * Every OAuth secret a connection holds, in clear: its access and refresh tokens and the client
   * secrets of its OAuth clients. Only for scrubbing what its servers send back (DESIGN.md rule 15);
   * never log them. A secret that cannot be opened is left out (it cannot be sent either).
   */
  async credentialSecrets(connectionId: string): Promise<string[]> {
    const { orm, secrets } = this.#services;
    const em = orm.em.fork();
    const row = await em.findOne(OAuthCredential, { connection: connectionId });
    const clients = await em.find(OAuthClient, { connection: connectionId, clientSecret: { $ne: null } });
    const out: string[] = [];
    const open = (sealed: string | null, aad: string): void => {
      if (sealed === null) return;
      try {
        out.push(secrets.open(sealed, aad));
      } catch {
        // Unreadable under this SECRET_KEY: it cannot go out either.
      }
    };
    if (row !== null) {
      open(row.accessToken, tokenAad(connectionId, 'access'));
      open(row.refreshToken, tokenAad(connectionId, 'refresh'));
    }
    for (const client of clients) open(client.clientSecret, clientSecretAad(client.id));
    return out;
  }

  /**
   * The credential of a connection, if it may be used: it has a token, and it was issued for the
   * server the connection points at now. A connection whose endpoint was changed to another server
   * after the sign-in must not send that server the old server's token.
   */
  async #usableCredential(connectionId: string): Promise<OAuthCredential & { accessToken: string }> {
    const row = await this.#services.orm.em
      .fork()
      .findOne(OAuthCredential, { connection: connectionId }, { populate: ['connection'] });
    if (row === null || row.accessToken === null) {
      throw new OAuthError(OAuthErrorCode.NEEDS_SIGN_IN, 'the connection needs an OAuth sign-in');
    }
    const endpointUrl = row.connection.getEntity().endpointUrl;
    if (endpointUrl === null || !resourceCoversEndpoint(row.resource, endpointUrl)) {
      throw new OAuthError(
        OAuthErrorCode.NEEDS_SIGN_IN,
        "the connection's endpoint changed since its sign-in, and the token is for the old server; sign in again",
      );
    }
    return row as OAuthCredential & { accessToken: string };
  }

  async #accessToken(connectionId: string): Promise<string> {
    const row = await this.#usableCredential(connectionId);
    const pending = this.#inflight.get(connectionId);
    if (pending) return this.#unwrap(connectionId, await pending);
    if (!needsRefresh(row.expiresAt, this.#now(), this.#refreshSkewMs)) {
      return this.#services.secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
    }
    return this.#unwrap(
      connectionId,
      await this.#refreshShared(connectionId, row.version, this.#refreshSkewMs),
    );
  }

  #unwrap(connectionId: string, outcome: RefreshOutcome): string {
    switch (outcome.kind) {
      case 'token':
        return outcome.accessToken;
      case 'needs_sign_in':
        throw new OAuthError(
          OAuthErrorCode.NEEDS_SIGN_IN,
          `the OAuth sign-in of connection ${connectionId} has ended (${outcome.reason}); sign in again`,
        );
      case 'unavailable':
        throw new OAuthError(
          OAuthErrorCode.TOKEN_ENDPOINT_UNAVAILABLE,
          `the token could not be renewed just now: ${outcome.message}`,
        );
    }
  }

  /** One refresh per connection at a time in this process; late callers share its outcome. */
  #refreshShared(
    connectionId: string,
    seenVersion: number,
    minValidityMs: number | 'force',
  ): Promise<RefreshOutcome> {
    let pending = this.#inflight.get(connectionId);
    if (!pending) {
      pending = this.#refresh(connectionId, seenVersion, minValidityMs).finally(() =>
        this.#inflight.delete(connectionId),
      );
      this.#inflight.set(connectionId, pending);
    }
    return pending;
  }

  /**
   * Renews under a row lock (`SELECT … FOR UPDATE`), which another process renewing the same
   * connection holds too: whoever comes second sees a new `version` and takes that token instead of
   * spending the refresh token again. The lock is held during the token request (bounded by the
   * outbound deadline) on purpose: that is what makes the refresh happen once.
   */
  async #refresh(
    connectionId: string,
    seenVersion: number,
    minValidityMs: number | 'force',
  ): Promise<RefreshOutcome> {
    const { secrets, logger } = this.#services;
    let ended: string | null = null;
    const outcome = await this.#services.orm.em.fork().transactional(async (tx): Promise<RefreshOutcome> => {
      const row = await tx.findOne(
        OAuthCredential,
        { connection: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (row === null || row.accessToken === null) return { kind: 'needs_sign_in', reason: 'no token' };
      const current = secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
      const nowMs = this.#now();
      const due = minValidityMs === 'force' || needsRefresh(row.expiresAt, nowMs, minValidityMs);
      if (row.version !== seenVersion || !due) {
        return { kind: 'token', accessToken: current, refreshed: false };
      }
      if (row.refreshToken === null) {
        if (isUnexpired(row.expiresAt, nowMs))
          return { kind: 'token', accessToken: current, refreshed: false };
        ended = 'expired, and the server gave no refresh token';
        await this.#endSignIn(tx, row, ended);
        return { kind: 'needs_sign_in', reason: ended };
      }
      const clientRow = await tx.findOneOrFail(OAuthClient, { id: row.client.id });
      const { client, auth } = this.#clientOf(clientRow);
      const server = row.serverMetadata as unknown as oauth.AuthorizationServer;
      const refreshToken = secrets.open(row.refreshToken, tokenAad(connectionId, 'refresh'));
      let tokens: oauth.TokenEndpointResponse;
      try {
        const res = await oauth.refreshTokenGrantRequest(server, client, auth, refreshToken, {
          additionalParameters: { resource: row.resource },
          ...transportOptions(this.#fetch),
        });
        tokens = await oauth.processRefreshTokenResponse(server, client, res);
        if (tokens.token_type !== 'bearer')
          throw new OAuthError(OAuthErrorCode.NEEDS_SIGN_IN, 'not a bearer token');
      } catch (err) {
        const failure =
          err instanceof OAuthError
            ? { permanent: true, code: 'unsupported_token_type', message: err.message }
            : classifyTokenFailure(err);
        if (!failure.permanent) {
          logger.warn({ connectionId, code: failure.code }, 'oauth token renewal failed; will retry');
          if (isUnexpired(row.expiresAt, this.#now()))
            return { kind: 'token', accessToken: current, refreshed: false };
          return { kind: 'unavailable', message: failure.message };
        }
        ended = `renewal refused: ${failure.code}`;
        logger.info(
          { connectionId, code: failure.code },
          'oauth token renewal refused; the connection needs a sign-in',
        );
        await this.#endSignIn(tx, row, ended);
        return { kind: 'needs_sign_in', reason: ended };
      }
      row.accessToken = secrets.seal(tokens.access_token, tokenAad(connectionId, 'access'));
      // A server that rotates gives a new refresh token; one that doesn't keeps the old one valid.
      if (tokens.refresh_token !== undefined)
        row.refreshToken = secrets.seal(tokens.refresh_token, tokenAad(connectionId, 'refresh'));
      row.expiresAt = expiresAtFrom(tokens.expires_in, nowMs);
      if (typeof tokens.scope === 'string') row.scope = tokens.scope;
      row.refreshedAt = new Date(nowMs);
      row.version += 1;
      logger.info(
        { connectionId, version: row.version, rotated: tokens.refresh_token !== undefined },
        'oauth token renewed',
      );
      return { kind: 'token', accessToken: tokens.access_token, refreshed: true };
    });
    if (ended !== null) await this.#publishConnection(connectionId);
    return outcome;
  }

  /** Drops the tokens and sets NEEDS_SIGN_IN, inside the caller's transaction (row already locked). */
  async #endSignIn(tx: EntityManager, row: OAuthCredential, reason: string): Promise<void> {
    row.accessToken = null;
    row.refreshToken = null;
    row.expiresAt = null;
    row.version += 1;
    const connection = await tx.findOne(Connection, { id: row.connection.id });
    if (connection === null) return;
    connection.status = ConnectionStatus.NEEDS_SIGN_IN;
    tx.persist(
      new AuditEvent({
        workspaceId: connection.workspace.id,
        actor: SYSTEM_ACTOR,
        action: 'SIGN_IN_ENDED',
        targetType: 'Connection',
        targetId: toGlobalId('Connection', connection.id),
        before: null,
        after: { reason },
      }),
    );
  }

  /**
   * For a 401 from the MCP server to a request that carried `rejected` (the headers `authHeaders`
   * gave): renews the token now, whatever its expiry, and returns the new headers to retry once
   * with. If another caller renewed meanwhile, its token is returned without a second renewal.
   * Throws like `authHeaders`. If the retry gets 401 again, call `markNeedsSignIn`.
   */
  async renewAfterRejection(
    connectionId: string,
    rejected: Record<string, string>,
  ): Promise<Record<string, string>> {
    const row = await this.#usableCredential(connectionId);
    const pending = this.#inflight.get(connectionId);
    if (pending) return { authorization: `Bearer ${this.#unwrap(connectionId, await pending)}` };
    const current = this.#services.secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
    if (rejected.authorization !== `Bearer ${current}`) return { authorization: `Bearer ${current}` };
    const outcome = await this.#refreshShared(connectionId, row.version, 'force');
    return { authorization: `Bearer ${this.#unwrap(connectionId, outcome)}` };
  }

  /**
   * For a 401 from the MCP server after a renewal (the token is refused although fresh): the sign-in
   * is over. Drops the tokens and sets the connection to NEEDS_SIGN_IN. Idempotent.
   */
  async markNeedsSignIn(
    connectionId: string,
    reason = 'the server refused a renewed token (HTTP 401)',
  ): Promise<void> {
    await this.#services.orm.em.fork().transactional(async (tx) => {
      const row = await tx.findOne(
        OAuthCredential,
        { connection: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (row !== null && row.accessToken !== null) {
        await this.#endSignIn(tx, row, reason);
        return;
      }
      const connection = await tx.findOne(Connection, { id: connectionId });
      if (connection !== null) connection.status = ConnectionStatus.NEEDS_SIGN_IN;
    });
    this.#services.mcp.forgetSession(connectionId);
    await this.#publishConnection(connectionId);
  }

  /**
   * A 403 with `error="insufficient_scope", scope="…"` from the MCP server (2025-11-25
   * authorization, "Scope Challenge Handling"): the token is valid but too narrow. This service has
   * no person in the loop during a turn, so the sign-in ends here: the credential keeps the wider
   * scope (what it held plus what was demanded), the connection goes to NEEDS_SIGN_IN, and the
   * next `beginSignIn` asks for that scope. Returns the scope to ask for, or null when nothing
   * changed (not signed in, a demand that is empty, malformed or past the bounds of `mergeScopes`).
   */
  async stepUp(connectionId: string, demanded: string): Promise<string | null> {
    let wider: string | null = null;
    await this.#services.orm.em.fork().transactional(async (tx) => {
      const row = await tx.findOne(
        OAuthCredential,
        { connection: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (row === null || row.accessToken === null || mergeScopes(demanded) === null) return;
      wider = mergeScopes(row.scope, demanded);
      if (wider === null) return;
      row.scope = wider;
      await this.#endSignIn(tx, row, `the server asks for a wider scope: ${wider}`);
    });
    if (wider === null) return null;
    this.#services.mcp.forgetSession(connectionId);
    await this.#publishConnection(connectionId);
    this.#services.logger.info({ connectionId, scope: wider }, 'oauth step-up: the connection needs sign-in');
    return wider;
  }

  async #publishConnection(connectionId: string): Promise<void> {
    const connection = await this.#services.orm.em.fork().findOne(Connection, { id: connectionId });
    if (connection) await this.#publish(connectionId, connection.workspace.id);
  }

  /** Tells every instance the connection changed (status, credential). Best effort. */
  async #publish(connectionId: string, workspaceId: string): Promise<void> {
    try {
      await announceToolChange(this.#services, this.#services.orm.em.getConnection(), {
        kind: 'connection',
        id: connectionId,
        workspaceId,
      });
    } catch (err) {
      this.#services.logger.warn({ err, connectionId }, 'cache notification failed');
    }
  }

  // ------------------------------------------------------------------ sweep

  /**
   * Renews every token that expires within the sweep window, soonest first, one at a time (through
   * the same single flight and row lock as calls), and deletes long-expired sign-ins. Never throws.
   */
  async sweepOnce(): Promise<SweepResult> {
    const result: SweepResult = { renewed: 0, failed: 0 };
    const em = this.#services.orm.em.fork();
    const nowMs = this.#now();
    try {
      await em.nativeDelete(OAuthSignIn, { expiresAt: { $lt: new Date(nowMs - this.#signInRetentionMs) } });
      const due = await em.find(
        OAuthCredential,
        {
          expiresAt: { $ne: null, $lte: new Date(nowMs + this.#sweepWindowMs) },
          refreshToken: { $ne: null },
        },
        { orderBy: { expiresAt: 'asc' }, limit: this.#sweepBatch },
      );
      for (const row of due) {
        // One bad row (a secret sealed under another key, say) must not stop the others.
        try {
          const outcome = await this.#refreshShared(row.connection.id, row.version, this.#sweepWindowMs);
          if (outcome.kind === 'token') {
            if (outcome.refreshed) result.renewed++;
          } else {
            result.failed++;
          }
        } catch (err) {
          result.failed++;
          this.#services.logger.error(
            { err, connectionId: row.connection.id },
            'oauth sweep could not renew a token',
          );
        }
      }
    } catch (err) {
      this.#services.logger.error({ err }, 'oauth sweep failed');
    }
    return result;
  }

  /** Starts the background sweep (every `sweepIntervalMs`, never overlapping). Idempotent. */
  startSweep(): void {
    if (this.#sweepOn) return;
    this.#sweepOn = true;
    this.#schedule();
  }

  #schedule(): void {
    if (!this.#sweepOn) return;
    this.#sweepTimer = setTimeout(() => {
      this.#sweepTimer = null;
      this.#sweeping = this.sweepOnce().then(
        () => {
          this.#sweeping = null;
          this.#schedule();
        },
        () => {
          this.#sweeping = null;
          this.#schedule();
        },
      );
    }, this.#sweepIntervalMs);
    this.#sweepTimer.unref();
  }

  /** Stops the sweep and waits for the running sweep and every renewal in flight. */
  async stopSweep(): Promise<void> {
    this.#sweepOn = false;
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepTimer = null;
    await this.#sweeping;
    await Promise.allSettled([...this.#inflight.values()]);
  }
}
