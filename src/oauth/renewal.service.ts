/**
 * Use and renewal of OAuth tokens (I/O; the rules are in `refresh.ts` and `expiry.ts`).
 *
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
 */
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import * as oauth from 'oauth4webapi';
import { audit } from '../audit/audit.js';
import { Connection, ConnectionStatus } from '../connections/connection.entity.js';
import { toGlobalId } from '../graphql/node.js';
import { storedClient } from './client-auth.js';
import type { OAuthDeps, SignInEffects } from './deps.js';
import { OAuthError, OAuthErrorCode } from './errors.js';
import { DEFAULT_REFRESH_SKEW_MS, expiresAtFrom, isUnexpired, needsRefresh } from './expiry.js';
import { resourceCoversEndpoint, mergeScopes } from './metadata.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthCredential } from './oauth-credential.entity.js';
import { OAuthSignIn } from './oauth-sign-in.entity.js';
import { NO_REFRESH_TOKEN_REASON, refreshStep, tokenOf, type RefreshOutcome } from './refresh.js';
import { clientSecretAad, tokenAad } from './sealing.js';
import { transportOptions } from './server-discovery.js';
import { classifyTokenFailure } from './token-failure.js';

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
/** The actor of audit rows written by renewal, which no person started. */
const SYSTEM_ACTOR = 'oauth renewal';

export interface RenewalOptions {
  /** A token expiring within this many ms is renewed before use. */
  refreshSkewMs?: number;
  sweepIntervalMs?: number;
  sweepWindowMs?: number;
  sweepBatch?: number;
  signInRetentionMs?: number;
}

export interface SweepResult {
  renewed: number;
  failed: number;
}

export class RenewalService {
  readonly #deps: OAuthDeps;
  readonly #effects: SignInEffects;
  readonly #refreshSkewMs: number;
  readonly #sweepIntervalMs: number;
  readonly #sweepWindowMs: number;
  readonly #sweepBatch: number;
  readonly #signInRetentionMs: number;
  /** Single flight: the refresh in progress per connection id, shared by every caller. */
  readonly #inflight = new Map<string, Promise<RefreshOutcome>>();
  #sweepTimer: NodeJS.Timeout | null = null;
  #sweeping: Promise<void> | null = null;
  #sweepOn = false;

  constructor(deps: OAuthDeps, effects: SignInEffects, options: RenewalOptions = {}) {
    const {
      refreshSkewMs = DEFAULT_REFRESH_SKEW_MS,
      sweepIntervalMs = DEFAULT_SWEEP_INTERVAL_MS,
      sweepWindowMs = DEFAULT_SWEEP_WINDOW_MS,
      sweepBatch = DEFAULT_SWEEP_BATCH,
      signInRetentionMs = DEFAULT_SIGN_IN_RETENTION_MS,
    } = options;
    this.#deps = deps;
    this.#effects = effects;
    this.#refreshSkewMs = refreshSkewMs;
    this.#sweepIntervalMs = sweepIntervalMs;
    this.#sweepWindowMs = Math.max(sweepWindowMs, refreshSkewMs);
    this.#sweepBatch = sweepBatch;
    this.#signInRetentionMs = signInRetentionMs;
  }

  // ------------------------------------------------------------------ use

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
    const { orm, secrets } = this.#deps;
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
    const row = await this.#deps.orm.em
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
    if (pending) return tokenOf(connectionId, await pending);
    if (!needsRefresh(row.expiresAt, this.#deps.now(), this.#refreshSkewMs)) {
      return this.#deps.secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
    }
    return tokenOf(connectionId, await this.#refreshShared(connectionId, row.version, this.#refreshSkewMs));
  }

  // ------------------------------------------------------------------ renewal

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
    let ended = false;
    const outcome = await this.#deps.orm.em.fork().transactional(async (tx): Promise<RefreshOutcome> => {
      const row = await tx.findOne(
        OAuthCredential,
        { connection: connectionId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (row === null || row.accessToken === null) return { kind: 'needs_sign_in', reason: 'no token' };
      const current = this.#deps.secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
      const nowMs = this.#deps.now();
      const step = refreshStep(
        { version: row.version, expiresAt: row.expiresAt, hasRefreshToken: row.refreshToken !== null },
        seenVersion,
        minValidityMs,
        nowMs,
      );
      if (step === 'keep') return { kind: 'token', accessToken: current, refreshed: false };
      if (step === 'end') {
        ended = true;
        await this.#endSignIn(tx, row, NO_REFRESH_TOKEN_REASON);
        return { kind: 'needs_sign_in', reason: NO_REFRESH_TOKEN_REASON };
      }
      const renewed = await this.#renew(tx, row, current, nowMs);
      ended = renewed.kind === 'needs_sign_in';
      return renewed;
    });
    if (ended) await this.#publishConnection(connectionId);
    return outcome;
  }

  /** The refresh-token grant for a locked credential that has a refresh token, and its outcome stored. */
  async #renew(
    tx: EntityManager,
    row: OAuthCredential,
    current: string,
    nowMs: number,
  ): Promise<RefreshOutcome> {
    const { secrets, logger } = this.#deps;
    const connectionId = row.connection.id;
    const clientRow = await tx.findOneOrFail(OAuthClient, { id: row.client.id });
    const { client, auth } = storedClient(clientRow, secrets);
    // Stored by sign-in from oauth4webapi's own validated AuthorizationServer: read back as that type.
    const server = row.serverMetadata as unknown as oauth.AuthorizationServer;
    const refreshToken = secrets.open(row.refreshToken!, tokenAad(connectionId, 'refresh'));
    let tokens: oauth.TokenEndpointResponse;
    try {
      const res = await oauth.refreshTokenGrantRequest(server, client, auth, refreshToken, {
        additionalParameters: { resource: row.resource },
        ...transportOptions(this.#deps.fetch),
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
        if (isUnexpired(row.expiresAt, this.#deps.now()))
          return { kind: 'token', accessToken: current, refreshed: false };
        return { kind: 'unavailable', message: failure.message };
      }
      const reason = `renewal refused: ${failure.code}`;
      logger.info(
        { connectionId, code: failure.code },
        'oauth token renewal refused; the connection needs a sign-in',
      );
      await this.#endSignIn(tx, row, reason);
      return { kind: 'needs_sign_in', reason };
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
    audit(
      tx,
      { label: SYSTEM_ACTOR },
      {
        workspaceId: connection.workspace.id,
        action: 'SIGN_IN_ENDED',
        targetType: 'Connection',
        targetId: toGlobalId('Connection', connection.id),
        after: { reason },
      },
    );
  }

  // ------------------------------------------------------------------ what the MCP server says

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
    if (pending) return { authorization: `Bearer ${tokenOf(connectionId, await pending)}` };
    const current = this.#deps.secrets.open(row.accessToken, tokenAad(connectionId, 'access'));
    if (rejected.authorization !== `Bearer ${current}`) return { authorization: `Bearer ${current}` };
    const outcome = await this.#refreshShared(connectionId, row.version, 'force');
    return { authorization: `Bearer ${tokenOf(connectionId, outcome)}` };
  }

  /**
   * For a 401 from the MCP server after a renewal (the token is refused although fresh): the sign-in
   * is over. Drops the tokens and sets the connection to NEEDS_SIGN_IN. Idempotent.
   */
  async markNeedsSignIn(
    connectionId: string,
    reason = 'the server refused a renewed token (HTTP 401)',
  ): Promise<void> {
    await this.#deps.orm.em.fork().transactional(async (tx) => {
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
    this.#effects.forgetSession(connectionId);
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
    await this.#deps.orm.em.fork().transactional(async (tx) => {
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
    this.#effects.forgetSession(connectionId);
    await this.#publishConnection(connectionId);
    this.#deps.logger.info({ connectionId, scope: wider }, 'oauth step-up: the connection needs sign-in');
    return wider;
  }

  async #publishConnection(connectionId: string): Promise<void> {
    const connection = await this.#deps.orm.em.fork().findOne(Connection, { id: connectionId });
    if (connection) await this.#effects.announce(connectionId, connection.workspace.id);
  }

  // ------------------------------------------------------------------ sweep

  /**
   * Renews every token that expires within the sweep window, soonest first, one at a time (through
   * the same single flight and row lock as calls), and deletes long-expired sign-ins. Never throws.
   */
  async sweepOnce(): Promise<SweepResult> {
    const result: SweepResult = { renewed: 0, failed: 0 };
    const { orm, logger } = this.#deps;
    const em = orm.em.fork();
    const nowMs = this.#deps.now();
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
          logger.error({ err, connectionId: row.connection.id }, 'oauth sweep could not renew a token');
        }
      }
    } catch (err) {
      logger.error({ err }, 'oauth sweep failed');
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
      const next = (): void => {
        this.#sweeping = null;
        this.#schedule();
      };
      this.#sweeping = this.sweepOnce().then(next, next);
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
