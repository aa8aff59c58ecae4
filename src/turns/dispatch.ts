/**
 * Calls one operation (I/O) and turns whatever happens into a CallResult. Never throws for an
 * upstream problem.
 *
 * Retries (DESIGN.md rule 7) are `mayRetry`'s decision (`operations/retry.ts`): at most one; a
 * WRITE only when the first request provably never reached the server.
 */
import type { TraceContext } from './trace.js';
import { ConnectionKind, CredentialKind } from '../connections/connection.entity.js';
import {
  connectionSecrets,
  credentialHeaders,
  keyRefusal,
  mcpEndpoint,
  openedKey,
} from '../connections/endpoint.js';
import { makeScrubber, type Scrubber } from '../connections/scrub.js';
import { bearerChallenge } from '../oauth/challenge.js';
import { isOutboundError, type OutboundError } from '../http/outbound.js';
import type { CallToolOutcome, McpEndpoint, ServerNotification } from '../mcp/client.js';
import { failureOfOutboundCode, mayRetry } from '../operations/retry.js';
import type { JsonObject } from '../operations/types.js';
import { buildRequest } from '../openapi/request.js';
import type { TurnDeps } from './deps.js';
import { rejectionMessage, uncheckableMessage } from './arguments.js';
import { failure, fromHttpAnswer, fromMcpOutcome, type CallResult } from './result.js';
import { argumentCheckOf, type CachedOperation } from './tool-cache.js';
import { CallStatus } from './call-status.js';
import { brokeText, timeoutText, unreachableText } from './failure-text.js';

async function callOpenApi(
  services: TurnDeps,
  op: CachedOperation,
  tool: string,
  args: JsonObject,
  trace: TraceContext | null,
): Promise<CallResult> {
  const clock = services.clock;
  const started = clock.monotonic();
  const built = buildRequest(op.binding!, args);
  if (!built.ok) return failure(CallStatus.REJECTED, built.message);
  const { request } = built;
  const refused = keyRefused(op, tool, request.url);
  if (refused) return refused;
  // The answer must not echo the key to the model or the records (OpenAPI has no OAuth).
  const { key, scrubber } = openedKey(services, op.connection);
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5', ...request.headers };
  if (request.contentType) headers['content-type'] = request.contentType;
  Object.assign(headers, credentialHeaders(services, op.connection, request.url, key));
  if (trace) Object.assign(headers, trace);
  const timeoutMs = op.connection.timeoutMs ?? services.config.outbound.timeoutMs;
  const maxChars = services.config.toolResultMaxChars;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await services.outbound.request(request.url, {
        method: request.method,
        headers,
        body: request.body,
        timeoutMs,
      });
      const body = await res.text();
      const contentType = String(res.headers['content-type'] ?? '');
      const result = fromHttpAnswer(tool, { status: res.status, contentType, body }, maxChars, scrubber);
      // `Object.assign`, not a spread then more properties (slow in V8 on Node 20).
      return Object.assign(result, {
        attempts: attempt,
        resends: 0,
        durationMs: Math.round(clock.monotonic() - started),
      });
    } catch (err) {
      const durationMs = Math.round(clock.monotonic() - started);
      if (!isOutboundError(err)) throw err;
      const again = mayRetry({
        attempts: attempt,
        resends: 0,
        failure: failureOfOutboundCode(err.code),
        reachedServer: err.reachedServer,
        risk: op.risk,
        idempotent: op.idempotent,
      });
      if (again.retry) continue;
      return outboundFailure(err, tool, timeoutMs, attempt, durationMs);
    }
  }
}

/** What the model is told when the API behind `tool` gave no answer (the outbound error's code). */
function outboundFailure(
  err: OutboundError,
  tool: string,
  timeoutMs: number,
  attempt: number,
  durationMs: number,
): CallResult {
  if (err.code === 'TIMEOUT') {
    return failure(CallStatus.TIMEOUT, timeoutText(`The API behind ${tool}`, timeoutMs), attempt, durationMs);
  }
  if (err.code === 'BODY_TOO_LARGE') {
    return failure(
      CallStatus.UPSTREAM_ERROR,
      `The API behind ${tool} answered with more data than the service reads. Ask for less (filters, smaller pages).`,
      attempt,
      durationMs,
    );
  }
  if (err.code === 'CONNECT_FAILED') {
    return failure(CallStatus.UPSTREAM_ERROR, unreachableText(`The API behind ${tool}`), attempt, durationMs);
  }
  if (err.code === 'TRANSPORT_ERROR') {
    return failure(CallStatus.UPSTREAM_ERROR, brokeText(`the API behind ${tool}`), attempt, durationMs);
  }
  // Refused by policy (address, scheme, header): a configuration problem, not the model's.
  return failure(
    CallStatus.UPSTREAM_ERROR,
    `The API behind ${tool} is not reachable from this service (${err.code}). The team will check.`,
    attempt,
    durationMs,
  );
}

/**
 * The call's result when the connection's key may not go to `url` (issue 11): nothing is sent,
 * neither with the key nor without it, and trying again cannot help.
 */
function keyRefused(op: CachedOperation, tool: string, url: string): CallResult | null {
  const refusal = keyRefusal(op.connection, url);
  if (refusal === null) return null;
  return failure(
    CallStatus.UNAVAILABLE,
    `The tool ${tool} cannot be called: ${refusal}. Nothing was sent, and trying again will not help; tell the customer the team will check.`,
  );
}

/** Dispatches a call to an MCP server or an OpenAPI endpoint. */
export async function dispatch(
  services: TurnDeps,
  op: CachedOperation,
  tool: string,
  args: JsonObject,
  /** The server's notifications during the call, with the scrub for this call's secrets. */
  onNotification?: (notification: ServerNotification, scrub: (text: string) => string) => void,
  /** The runtime's W3C trace context, validated (`trace.ts`): passed on to the tool server. */
  trace: TraceContext | null = null,
  /** Cancels the call (a READ's, from the MCP endpoint's notifications/cancelled). */
  signal?: AbortSignal,
): Promise<CallResult> {
  if (op.connection.status === 'NEEDS_SIGN_IN') {
    return failure(
      CallStatus.UNAVAILABLE,
      `The tool ${tool} needs the operator to sign in to its server again. Nothing was done; tell the customer the team will check.`,
    );
  }
  // Arguments are checked against the input schema before any request (issue 14): a refusal
  // costs the model one turn, a bad request may cost a side effect or an opaque server error.
  const check = argumentCheckOf(op);
  if (!check.ok) return failure(CallStatus.REJECTED, uncheckableMessage(tool, check.reason));
  const verdict = check.validate(args);
  if (!verdict.ok) return failure(CallStatus.REJECTED, rejectionMessage(tool, verdict.problems));
  if (op.connection.kind === ConnectionKind.OPENAPI) return callOpenApi(services, op, tool, args, trace);
  const refused = keyRefused(op, tool, op.connection.endpointUrl ?? '');
  if (refused) return refused;
  // Whatever credential this call sends, the answer must not echo it to the model or the records:
  // every text the server sends is scrubbed before it is cut, stored or returned.
  const opened = openedKey(services, op.connection);
  const endpoint = mcpEndpoint(services, op.connection, opened.key);
  const secrets =
    op.connection.credentialKind === CredentialKind.OAUTH
      ? oauthSecrets(services, op, endpoint)
      : { final: async () => opened.scrubber, line: () => opened.scrubber, seen: [] };
  const scrubText = (text: string): string => secrets.line().text(text);
  const notify = onNotification ? (n: ServerNotification) => onNotification(n, scrubText) : undefined;
  let outcome = await services.mcp.callTool(endpoint, op.name, args, {
    risk: op.risk,
    idempotent: op.idempotent,
    inputSchema: op.inputSchema,
    onNotification: notify,
    ...(trace ? { trace } : {}),
    ...(signal ? { signal } : {}),
  });
  if (
    outcome.kind === 'auth_required' &&
    op.connection.credentialKind === CredentialKind.OAUTH &&
    mayRetry({
      failure: 'credential_rejected',
      attempts: outcome.attempts,
      resends: outcome.resends,
      renewals: 0,
      reachedServer: true,
      risk: op.risk,
      idempotent: op.idempotent,
    }).retry
  ) {
    outcome = await retryWithRenewedToken(services, op, args, outcome, secrets.seen, notify, trace);
  }
  const stepUp = await stepUpAfterRefusal(services, op, outcome);
  if (stepUp !== null)
    return { ...failure(CallStatus.UNAVAILABLE, stepUpMessage(tool)), ...callCounts(outcome) };
  return fromMcpOutcome(tool, outcome, services.config.toolResultMaxChars, await secrets.final());
}

/** What scrubs one call's answer (`final`) and its progress and log lines (`line`). */
interface CallScrubbers {
  final: () => Promise<Scrubber>;
  line: () => Scrubber;
  /** The tokens this call sent (OAuth): a renewal adds its token. */
  seen: string[];
}

/**
 * The scrubbers of a signed-in connection's call: its OAuth secrets, read while the call runs,
 * and every token the call sends (a token renewed mid-call joins the rule). `final` waits for the
 * stored secrets; `line` (progress and log lines) does not: lines that come before they are known
 * are scrubbed of what this call sent. If the stored secrets cannot be read, the tokens this call
 * sent are still scrubbed.
 */
function oauthSecrets(services: TurnDeps, op: CachedOperation, endpoint: McpEndpoint): CallScrubbers {
  const stored = connectionSecrets(services, op.connection).catch((err: unknown) => {
    services.logger.warn({ err, connectionId: op.connection.id }, 'could not read the secrets to scrub');
    return [] as string[];
  });
  const seen: string[] = [];
  const getAuthHeaders = endpoint.getAuthHeaders;
  if (getAuthHeaders) {
    endpoint.getAuthHeaders = async () => {
      const headers = await getAuthHeaders();
      seen.push(...bearerValues(headers));
      return headers;
    };
  }
  let storedSecrets: string[] | null = null;
  void stored.then((list) => (storedSecrets = list));
  let lineScrubber: Scrubber | null = null;
  let scrubbedFor = '';
  return {
    seen,
    final: async () => makeScrubber([...(await stored), ...seen]),
    line: () => {
      const state = `${storedSecrets === null ? 0 : 1}:${seen.length}`;
      if (!lineScrubber || scrubbedFor !== state) {
        lineScrubber = makeScrubber([...(storedSecrets ?? []), ...seen]);
        scrubbedFor = state;
      }
      return lineScrubber;
    },
  };
}

/**
 * A 403 `insufficient_scope` with the scope the server wants, on a signed-in connection: the
 * sign-in ends with that wider scope kept for the next one (`OAuthService.stepUp`). The server
 * refused the request, so nothing was done. Returns the scope, or null when this is not a step-up.
 */
async function stepUpAfterRefusal(
  services: TurnDeps,
  op: CachedOperation,
  outcome: CallToolOutcome,
): Promise<string | null> {
  if (outcome.kind !== 'http_error' || outcome.status !== 403) return null;
  if (op.connection.credentialKind !== CredentialKind.OAUTH) return null;
  const challenge = bearerChallenge(outcome.wwwAuthenticate);
  if (challenge?.error !== 'insufficient_scope' || challenge.scope === null) return null;
  try {
    return await services.oauth.stepUp(op.connection.id, challenge.scope);
  } catch (err) {
    services.logger.warn({ err, connectionId: op.connection.id }, 'oauth step-up failed');
    return null;
  }
}

function stepUpMessage(tool: string): string {
  return `The tool ${tool} needs a wider permission than the operator granted. Nothing was done; tell the customer the team will check.`;
}

function callCounts(outcome: CallToolOutcome): Pick<CallResult, 'attempts' | 'resends' | 'durationMs'> {
  return { attempts: outcome.attempts, resends: outcome.resends, durationMs: Math.round(outcome.durationMs) };
}

/** The token part of `Authorization: Bearer …` values. */
function bearerValues(headers: Record<string, string>): string[] {
  return Object.values(headers).map((v) => v.replace(/^Bearer\s+/i, ''));
}

/**
 * A 401 on a signed-in connection: renew the token once (or take a renewal another call already
 * made) and retry. A second 401 means the sign-in is gone: the connection needs sign-in, and the
 * operator sees it. The server refused the first request, so repeating it cannot double a side effect.
 */
async function retryWithRenewedToken(
  services: TurnDeps,
  op: CachedOperation,
  args: JsonObject,
  first: CallToolOutcome,
  secrets: string[],
  onNotification?: (n: ServerNotification) => void,
  trace: TraceContext | null = null,
): Promise<CallToolOutcome> {
  const oauth = services.oauth;
  const connectionId = op.connection.id;
  let renewed: Record<string, string>;
  try {
    renewed = await oauth.renewAfterRejection(connectionId, await oauth.authHeaders(connectionId));
    secrets.push(...bearerValues(renewed));
  } catch (err) {
    services.logger.info(
      { connectionId, code: (err as { code?: string }).code },
      'token renewal after a 401 failed',
    );
    return first;
  }
  const endpoint = { ...mcpEndpoint(services, op.connection), getAuthHeaders: async () => renewed };
  const second = await services.mcp.callTool(endpoint, op.name, args, {
    risk: op.risk,
    idempotent: op.idempotent,
    inputSchema: op.inputSchema,
    onNotification,
    ...(trace ? { trace } : {}),
  });
  if (second.kind === 'auth_required') {
    await oauth
      .markNeedsSignIn(connectionId)
      .catch((err: unknown) =>
        services.logger.warn({ err, connectionId }, 'could not mark the connection as needing sign-in'),
      );
  }
  // The refused request did nothing: sending it again with the new token is the same attempt.
  return {
    ...second,
    attempts: first.attempts + second.attempts - 1,
    resends: first.resends + second.resends + 1,
    durationMs: first.durationMs + second.durationMs,
  };
}
