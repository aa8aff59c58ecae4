/**
 * MCP over Streamable HTTP, one request at a time (the transport half of the client, as in the MCP
 * SDK's transport/protocol split): the headers of every request, one POST and its answer, the
 * answer stream and its resumption, and best-effort messages in the background. It knows nothing
 * of sessions beyond the id it is given, nor of retries. All I/O goes through the shared
 * `OutboundClient`; event streams are parsed by the pure `sse.ts`.
 *
 * One JSON-RPC message per POST, always with `Accept: application/json, text/event-stream`,
 * `Content-Type: application/json`, `MCP-Protocol-Version` (the negotiated or stored version) and
 * the credential; modern requests add `Mcp-Method`, `Mcp-Name` and `_meta`. An answer is plain JSON
 * or an event stream; on a stream we take the message with our id, skip notifications, empty events
 * and other ids, answer the server's requests (`ping`; elicitation declined, sampling and roots
 * refused: serverRequestAnswer), and stop reading once our answer arrives. Every answer
 * is bounded in time (per attempt), bytes, events and line length. A stream the server ends before
 * our answer, after giving an event id, is resumed with a GET carrying `Last-Event-ID` after the
 * server's `retry:` wait (2025-11-25 "Resumability and Redelivery"), at most `MAX_SSE_RESUMPTIONS`
 * times and within the same per-attempt deadline.
 */
import { sleepOn } from '../clock.js';
import { TRANSPORT_HEADER_NAMES } from '../connections/headers.js';
import {
  OutboundError,
  OutboundErrorCode,
  type OutboundClient,
  type OutboundResponse,
} from '../http/outbound.js';
import { eventMessage, headerValue, mediaType, readExcerpt, toReply, type Reply } from './reply.js';
import { parseSse, SseLimitError, type SseResumeState } from './sse.js';
import type { McpEndpoint, McpSettings } from './types.js';
import { serverAskOf, serverRequestAnswer, type ServerAsk } from './versions.js';

export { headerValue, raceSignal, type Reply } from './reply.js';

const ACCEPT = 'application/json, text/event-stream';
/** Server requests (such as `ping`) answered per answer stream; more are ignored. */
const MAX_SERVER_REQUESTS_ANSWERED = 8;
/**
 * Resumptions of one answer stream (2025-11-25 transports, "Resumability and Redelivery"): after a
 * server closes the stream before our answer, having given an event id, we GET the endpoint with
 * `Last-Event-ID` at most this many times, within the request's own deadline.
 */
export const MAX_SSE_RESUMPTIONS = 3;
/** Wait before resuming when the server gave no `retry:`. */
export const DEFAULT_SSE_RETRY_MS = 1_000; // 1 second
/** A server's `retry:` is honoured up to this; longer waits are cut to it (the deadline still rules). */
export const MAX_SSE_RETRY_MS = 30_000; // 30 seconds

/** How one request goes on the wire beyond the session: its version and extra headers. */
export interface Wire {
  version: string;
  headers?: Record<string, string>;
}

/** Raised inside the client when `getAuthHeaders` rejects. */
export class AuthHeadersFailed extends Error {}

/** The requests a server sent on one answer stream: how many we answered, what they asked for. */
interface ServerRequests {
  count: number;
  asked: ServerAsk[];
  /** The session's revision, which decides the answers (serverRequestAnswer). */
  version: string;
}

/** The limits the transport applies to every answer and background message. */
export type TransportLimits = Pick<
  McpSettings,
  'maxBodyBytes' | 'maxSseEvents' | 'notifyTimeoutMs' | 'clock'
>;

export class McpTransport {
  readonly #outbound: OutboundClient;
  readonly #limits: TransportLimits;
  /** The version a request carries when the caller names none (the session layer decides). */
  readonly #versionFor: (ep: McpEndpoint, sessionId: string | undefined) => string;
  readonly #background = new Set<Promise<void>>();
  /** One counter for the process: ids are never reused within a session. */
  #nextId = 1;

  constructor(
    outbound: OutboundClient,
    limits: TransportLimits,
    versionFor: (ep: McpEndpoint, sessionId: string | undefined) => string,
  ) {
    this.#outbound = outbound;
    this.#limits = limits;
    this.#versionFor = versionFor;
  }

  /** A new JSON-RPC request id. */
  newId(): number {
    return this.#nextId++;
  }

  /** The id the next request will get (a call's progress token is named after it). */
  peekId(): number {
    return this.#nextId;
  }

  async headers(
    ep: McpEndpoint,
    sessionId: string | undefined,
    wire?: Wire,
  ): Promise<Record<string, string>> {
    const h: Record<string, string> = {};
    const auth = ep.auth;
    if (auth.kind === 'bearer') h.authorization = `Bearer ${auth.token}`;
    else if (auth.kind === 'header') h[auth.name.toLowerCase()] = auth.value;
    if (ep.getAuthHeaders) {
      let extra: Record<string, string>;
      try {
        extra = await ep.getAuthHeaders();
      } catch (cause) {
        throw new AuthHeadersFailed('getAuthHeaders failed', { cause });
      }
      for (const name in extra) h[name.toLowerCase()] = extra[name] as string;
    }
    for (const name in h) {
      if (TRANSPORT_HEADER_NAMES.has(name)) {
        throw new OutboundError(
          OutboundErrorCode.HEADER_INVALID,
          `the credential header "${name}" is a transport header`,
          {
            reachedServer: false,
            data: { header: name },
          },
        );
      }
    }
    h.accept = ACCEPT;
    h['content-type'] = 'application/json';
    h['mcp-protocol-version'] = wire?.version ?? this.#versionFor(ep, sessionId);
    if (wire?.headers) Object.assign(h, wire.headers);
    if (sessionId !== undefined) h['mcp-session-id'] = sessionId;
    return h;
  }

  /**
   * POSTs one JSON-RPC request and reads its answer. Resolves with what the server said; rejects
   * with an `OutboundError` (or `AuthHeadersFailed`) when there was no answer.
   */
  async send(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    body: string,
    timeoutMs: number,
    signal?: AbortSignal,
    wire?: Wire,
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply> {
    const deadline = this.#limits.clock.monotonic() + timeoutMs;
    const headers = await this.headers(ep, sessionId, wire);
    const res = await this.#outbound.request(ep.url, {
      method: 'POST',
      headers,
      body,
      timeoutMs,
      maxBodyBytes: this.#limits.maxBodyBytes,
      signal,
    });
    if (res.status < 200 || res.status >= 300) {
      const wwwAuthenticate = headerValue(res, 'www-authenticate');
      return { type: 'http', status: res.status, bodyExcerpt: await readExcerpt(res), wwwAuthenticate };
    }
    const type = mediaType(res);
    if (type === 'application/json' || type.endsWith('+json')) {
      const text = await res.text();
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return { type: 'protocol', problem: 'INVALID_JSON', detail: 'the answer is not valid JSON' };
      }
      return toReply(message, id, res);
    }
    if (type === 'text/event-stream')
      return this.#readStream(ep, sessionId, id, res, { deadline, signal, wire }, onNotification);
    await res.dump();
    if (type === '' && (res.status === 202 || res.status === 204)) {
      return { type: 'protocol', problem: 'NO_RESPONSE', detail: `HTTP ${res.status} without an answer` };
    }
    return {
      type: 'protocol',
      problem: 'UNEXPECTED_CONTENT_TYPE',
      detail: `the answer is ${type === '' ? 'without a content type' : JSON.stringify(type.slice(0, 60))}, not JSON or an event stream`,
    };
  }

  /**
   * Reads an answer stream until our answer. A stream the server ends before it, after giving an
   * event id, is resumed: after the server's `retry:` (or `DEFAULT_SSE_RETRY_MS`), a GET with
   * `Last-Event-ID` and the same session, whose stream is read the same way, at most
   * `MAX_SSE_RESUMPTIONS` times and never past the request's deadline.
   */
  async #readStream(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    first: OutboundResponse,
    request: { deadline: number; signal: AbortSignal | undefined; wire: Wire | undefined },
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply> {
    const resume: SseResumeState = { lastEventId: undefined, reconnectMs: undefined };
    const version = request.wire?.version ?? this.#versionFor(ep, sessionId);
    const answered: ServerRequests = { count: 0, asked: [], version };
    let res = first;
    for (let resumptions = 0; ; resumptions++) {
      const reply = await this.#readEvents(ep, sessionId, id, res, resume, answered, onNotification);
      if (reply !== null) return reply;
      const ended = `the stream ended without the answer to id ${id}`;
      if (resume.lastEventId === undefined)
        return { type: 'protocol', problem: 'NO_RESPONSE', detail: ended };
      if (resumptions >= MAX_SSE_RESUMPTIONS) {
        return {
          type: 'protocol',
          problem: 'NO_RESPONSE',
          detail: `${ended}, after ${MAX_SSE_RESUMPTIONS} resumptions`,
        };
      }
      const next = await this.#resumeStream(ep, sessionId, resume, request);
      if (typeof next === 'string') {
        return { type: 'protocol', problem: 'NO_RESPONSE', detail: `${ended}, and ${next}` };
      }
      res = next;
    }
  }

  /** The GET that resumes a stream, or why it could not. Throws `OutboundError` (timeout, abort). */
  async #resumeStream(
    ep: McpEndpoint,
    sessionId: string | undefined,
    resume: SseResumeState,
    request: { deadline: number; signal: AbortSignal | undefined; wire: Wire | undefined },
  ): Promise<OutboundResponse | string> {
    const wait = Math.min(resume.reconnectMs ?? DEFAULT_SSE_RETRY_MS, MAX_SSE_RETRY_MS);
    const host = new URL(ep.url).hostname;
    const clock = this.#limits.clock;
    if (clock.monotonic() + wait >= request.deadline) {
      throw new OutboundError(
        OutboundErrorCode.TIMEOUT,
        `${host} closed the answer stream and asked to resume it after ${wait} ms, past the request's deadline`,
        { reachedServer: true, data: { timeoutMs: Math.round(request.deadline - clock.monotonic()) } },
      );
    }
    try {
      await sleepOn(clock, wait, request.signal);
    } catch {
      throw new OutboundError(OutboundErrorCode.ABORTED, 'the call was aborted', { reachedServer: true });
    }
    const headers = await this.headers(ep, sessionId, request.wire && { version: request.wire.version });
    delete headers['content-type'];
    headers.accept = 'text/event-stream';
    headers['last-event-id'] = resume.lastEventId!;
    const res = await this.#outbound.request(ep.url, {
      method: 'GET',
      headers,
      timeoutMs: Math.max(1, Math.floor(request.deadline - clock.monotonic())),
      maxBodyBytes: this.#limits.maxBodyBytes,
      signal: request.signal,
    });
    if (res.status < 200 || res.status >= 300) {
      await res.dump();
      return `resuming it with GET was answered HTTP ${res.status}`;
    }
    if (mediaType(res) !== 'text/event-stream') {
      await res.dump();
      return 'resuming it with GET was not answered with an event stream';
    }
    return res;
  }

  /** One stream's events: our answer, or null when the stream ended without it. */
  async #readEvents(
    ep: McpEndpoint,
    sessionId: string | undefined,
    id: number,
    res: OutboundResponse,
    resume: SseResumeState,
    answered: ServerRequests,
    onNotification?: (method: string, params: unknown) => void,
  ): Promise<Reply | null> {
    try {
      const events = parseSse(
        res.body,
        {
          maxLineBytes: this.#limits.maxBodyBytes,
          maxBytes: this.#limits.maxBodyBytes,
          maxEvents: this.#limits.maxSseEvents,
        },
        resume,
      );
      for await (const event of events) {
        // Priming events and keep-alives carry no data.
        if (event.data === '') continue;
        const parsed = eventMessage(event.data);
        if ('problem' in parsed) return parsed.problem;
        const { message } = parsed;
        if (typeof message.method === 'string') {
          this.#onServerMessage(ep, sessionId, message, message.method, answered, onNotification);
          continue;
        }
        if (message.id === id) {
          const reply = toReply(message, id, res);
          if (reply.type === 'result' && answered.asked.length > 0) reply.asked = answered.asked;
          return reply;
        }
        // An answer to another request of ours: not this one.
      }
      return null;
    } catch (err) {
      if (err instanceof SseLimitError) {
        return { type: 'protocol', problem: 'SSE_LIMIT_EXCEEDED', detail: err.message };
      }
      throw err;
    }
  }

  /**
   * A request from the server is answered so that it does not wait on us (a few per stream, so a
   * hostile stream cannot make us flood it); a notification goes to the receiver, if any.
   */
  #onServerMessage(
    ep: McpEndpoint,
    sessionId: string | undefined,
    message: Record<string, unknown>,
    method: string,
    answered: ServerRequests,
    onNotification?: (method: string, params: unknown) => void,
  ): void {
    if (message.id !== undefined && message.id !== null) {
      if (answered.count >= MAX_SERVER_REQUESTS_ANSWERED) return;
      answered.count++;
      const ask = serverAskOf(method);
      if (ask !== null && !answered.asked.includes(ask)) answered.asked.push(ask);
      const answer = { jsonrpc: '2.0', id: message.id, ...serverRequestAnswer(method, answered.version) };
      this.post(ep, sessionId, JSON.stringify(answer));
    } else if (message.id === undefined && onNotification) {
      try {
        onNotification(method, message.params);
      } catch {
        // The receiver's problem must not end the call.
      }
    }
  }

  /** Best effort, in the background: notifications and answers to server requests. */
  post(ep: McpEndpoint, sessionId: string | undefined, body: string): void {
    this.track(async () => {
      const headers = await this.headers(ep, sessionId);
      const res = await this.#outbound.request(ep.url, {
        method: 'POST',
        headers,
        body,
        timeoutMs: this.#limits.notifyTimeoutMs,
        maxBodyBytes: this.#limits.maxBodyBytes,
      });
      await res.dump();
    });
  }

  cancel(ep: McpEndpoint, sessionId: string | undefined, requestId: number, reason: string): void {
    this.post(
      ep,
      sessionId,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } }),
    );
  }

  track(task: () => Promise<void>): void {
    const p = task().catch(() => undefined);
    this.#background.add(p);
    void p.finally(() => this.#background.delete(p));
  }

  /** Resolves once every best-effort message sent so far has settled. For tests and shutdown. */
  async whenIdle(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }

  /**
   * Sends a notification and waits for its 202 (or a 200 with a body). Null when accepted; rejects
   * like `send` when there was no answer.
   */
  async notify(
    ep: McpEndpoint,
    sessionId: string | undefined,
    method: string,
    timeoutMs: number,
    version: string,
  ): Promise<Exclude<Reply, { type: 'result' }> | null> {
    const headers = await this.headers(ep, sessionId, { version });
    const res = await this.#outbound.request(ep.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method }),
      timeoutMs,
      maxBodyBytes: this.#limits.maxBodyBytes,
    });
    if (res.status >= 200 && res.status < 300) {
      await res.dump();
      return null;
    }
    return {
      type: 'http',
      status: res.status,
      bodyExcerpt: await readExcerpt(res),
      wwwAuthenticate: headerValue(res, 'www-authenticate'),
    };
  }

  /** Ends a session on the server, best effort, in the background. A 405 is fine. */
  delete(ep: McpEndpoint, sessionId: string, version?: string): void {
    this.track(() => this.deleteNow(ep, sessionId, version));
  }

  async deleteNow(ep: McpEndpoint, sessionId: string, version?: string): Promise<void> {
    try {
      const headers = await this.headers(ep, sessionId, version === undefined ? undefined : { version });
      delete headers['content-type'];
      const res = await this.#outbound.request(ep.url, {
        method: 'DELETE',
        headers,
        timeoutMs: this.#limits.notifyTimeoutMs,
        maxBodyBytes: this.#limits.maxBodyBytes,
      });
      await res.dump();
    } catch {
      // Best effort: an undeleted session expires on the server.
    }
  }
}
