/**
 * The call policy of the turn path: one `tools/call` through the transport, with the session
 * re-send and the retry `mayRetry` allows, mapped to a `CallToolOutcome`.
 *
 * Sessions (DESIGN.md rule 6): a call uses the session this process holds for the connection, else
 * goes without one; on 400 or 404 it asks for a session (one handshake shared by every waiting
 * call) and sends the call once more: a re-send of a refused request, counted in the outcome's
 * `resends`, not in `attempts`. A call to a connection discovered as modern (2026-07-28) is
 * stateless, until an answer shows a legacy server.
 *
 * Retries (DESIGN.md rule 7), decided by `mayRetry` (`operations/retry.ts`): besides the session
 * re-send, at most one retry after a failure: after a timeout or a broken connection only for READ
 * or idempotent tools; after a failed connect (the request provably never reached the server) for
 * any tool, so that no side effect happens twice. Every attempt has a new JSON-RPC id, and an
 * abandoned id gets a best-effort `notifications/cancelled`.
 *
 * Failures (DESIGN.md rule 8): `callTool` never throws for an upstream problem; it returns a
 * `CallToolOutcome`.
 */
import { OutboundErrorCode } from '../http/outbound.js';
import { failureOfOutboundCode, mayRetry } from '../operations/retry.js';
import type { JsonObject } from '../operations/types.js';
import {
  asOutboundError,
  AUTH_HEADERS_FAILED,
  failureOutcome,
  handshakeFailure,
  refusalOf,
  replyOutcome,
  withBase,
  type Tally,
} from './outcome.js';
import { paramHeaderValues, paramHeadersOf } from './param-headers.js';
import type { McpSessions } from './session.js';
import { AuthHeadersFailed, raceSignal, type McpTransport, type Reply, type Wire } from './transport.js';
import {
  timeoutOf,
  type CallToolOptions,
  type CallToolOutcome,
  type McpEndpoint,
  type McpSettings,
  type OutcomeBody,
} from './types.js';
import { isModernVersion, MODERN_VERSIONS, modernHeaders, modernMeta } from './versions.js';

/** What every attempt of one call sends: its bodies and headers, legacy and modern, built once. */
interface CallPlan {
  name: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  retryBase: Pick<CallToolOptions, 'risk' | 'idempotent'>;
  hasTrace: boolean;
  traceHeaders: Record<string, string>;
  notify: ((method: string, params: unknown) => void) | undefined;
  /** The legacy `params` JSON. */
  params: string;
  modernVersion: string;
  /** The modern `params` JSON, or '' when the connection is legacy. */
  modernParams: string;
  paramHeaders: Record<string, string>;
}

export class McpCalls {
  readonly #transport: McpTransport;
  readonly #sessions: McpSessions;
  readonly #settings: McpSettings;

  constructor(transport: McpTransport, sessions: McpSessions, settings: McpSettings) {
    this.#transport = transport;
    this.#sessions = sessions;
    this.#settings = settings;
  }

  /**
   * Calls one tool. Never throws for an upstream problem: every failure is an outcome. See the
   * module comment for the session and retry rules.
   */
  async callTool(
    ep: McpEndpoint,
    name: string,
    args: JsonObject,
    options: CallToolOptions,
  ): Promise<CallToolOutcome> {
    const clock = this.#settings.clock;
    const started = clock.monotonic();
    const tally: Tally = { attempts: 0, resends: 0 };
    const finish = (outcome: OutcomeBody): CallToolOutcome =>
      withBase(outcome, tally, clock.monotonic() - started);
    const plan = this.#plan(ep, name, args, options);
    const { timeoutMs, signal, retryBase } = plan;
    /** The server refused the request before acting: may it be sent once more (not an attempt)? */
    const mayResend = (): boolean =>
      mayRetry({
        ...retryBase,
        attempts: tally.attempts,
        resends: tally.resends,
        failure: 'refused_before_acting',
        reachedServer: true,
      }).retry;
    // A connection discovered as modern is called statelessly, until an answer shows a legacy server.
    let modern = isModernVersion(ep.protocolVersion);
    let sessionId = modern ? undefined : this.#sessions.held(ep.id)?.sessionId;

    for (;;) {
      tally.attempts++;
      const id = this.#transport.newId();
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${modern ? plan.modernParams : plan.params}}`;
      const wire = this.#wire(plan, ep, modern, sessionId);
      let reply: Reply;
      try {
        reply = await this.#transport.send(ep, sessionId, id, body, timeoutMs, signal, wire, plan.notify);
      } catch (err) {
        if (err instanceof AuthHeadersFailed) return finish(AUTH_HEADERS_FAILED);
        const failure = asOutboundError(err);
        // On a modern connection the closed stream is the cancellation (no notification exists).
        if (failure.reachedServer && !modern)
          this.#transport.cancel(
            ep,
            sessionId,
            id,
            failure.code === OutboundErrorCode.ABORTED ? 'cancelled' : 'abandoned',
          );
        const again = mayRetry({
          ...retryBase,
          attempts: tally.attempts,
          resends: tally.resends,
          failure: failureOfOutboundCode(failure.code),
          reachedServer: failure.reachedServer,
        });
        if (again.retry) continue;
        return finish(failureOutcome(failure, timeoutMs));
      }

      // Refused before the server acted: a legacy server turning away a modern request gets the
      // legacy path, a server that wants a session (or ended ours) a handshake; either way, shared
      // with every waiting call, then the call once more.
      const refused = refusalOf(reply, modern);
      if (refused !== null && mayResend()) {
        if (refused === 'legacy') modern = false;
        const stale = refused === 'legacy' ? undefined : sessionId;
        try {
          sessionId = await raceSignal(this.#sessions.ensure(ep, stale, timeoutMs), signal);
        } catch (err) {
          return finish(handshakeFailure(err));
        }
        // The refused request did nothing: sending it again is the same attempt.
        tally.attempts--;
        tally.resends++;
        continue;
      }
      return finish(replyOutcome(reply, modern));
    }
  }

  /** The call's bodies and headers: trace context, a progress token for a receiver, modern `_meta`. */
  #plan(ep: McpEndpoint, name: string, args: JsonObject, options: CallToolOptions): CallPlan {
    const traceMeta: Record<string, string> = {};
    const traceHeaders: Record<string, string> = {};
    if (options.trace) {
      traceMeta.traceparent = traceHeaders.traceparent = options.trace.traceparent;
      if (options.trace.tracestate !== undefined)
        traceMeta.tracestate = traceHeaders.tracestate = options.trace.tracestate;
    }
    const hasTrace = options.trace !== undefined;
    // A receiver of notifications gets a progress token in `_meta`, so servers report progress.
    const { onNotification } = options;
    const progressToken = `ct-${this.#transport.peekId()}-${Math.floor(this.#settings.clock.monotonic())}`;
    if (onNotification) traceMeta.progressToken = progressToken;
    const notify = onNotification
      ? (method: string, p: unknown) => onNotification({ method, params: p, progressToken })
      : undefined;
    const params = JSON.stringify(
      hasTrace || onNotification ? { name, arguments: args, _meta: traceMeta } : { name, arguments: args },
    );
    const modern = isModernVersion(ep.protocolVersion);
    const modernVersion = ep.protocolVersion ?? MODERN_VERSIONS[0]!;
    const modernParams = modern
      ? JSON.stringify({
          name,
          arguments: args,
          _meta: modernMeta(modernVersion, this.#settings.clientInfo, traceMeta),
        })
      : '';
    const mirrored = modern && options.inputSchema ? paramHeadersOf(options.inputSchema) : null;
    return {
      name,
      timeoutMs: timeoutOf(this.#settings, ep, options.timeoutMs),
      signal: options.signal,
      retryBase: { risk: options.risk, idempotent: options.idempotent },
      hasTrace,
      traceHeaders,
      notify,
      params,
      modernVersion,
      modernParams,
      paramHeaders: mirrored?.ok ? paramHeaderValues(mirrored.headers, args) : {},
    };
  }

  /** How one attempt goes on the wire: modern headers, or the legacy trace headers, or nothing extra. */
  #wire(plan: CallPlan, ep: McpEndpoint, modern: boolean, sessionId: string | undefined): Wire | undefined {
    if (modern) {
      return {
        version: plan.modernVersion,
        headers: {
          ...plan.traceHeaders,
          ...plan.paramHeaders,
          ...modernHeaders(plan.modernVersion, 'tools/call', plan.name),
        },
      };
    }
    return plan.hasTrace
      ? { version: this.#sessions.versionFor(ep, sessionId), headers: plan.traceHeaders }
      : undefined;
  }
}
