/**
 * MCP client over Streamable HTTP, for discovery and for the turn path. It speaks the legacy
 * handshake revisions (asking for 2025-06-18, accepting 2025-11-25, 2025-03-26 and 2024-11-05)
 * and the stateless 2026-07-28 revision; `versions.ts` holds the rules of each and how the era is
 * chosen per connection, `docs/mcp-versions.md` how the session rule maps onto each.
 *
 * This class only wires the parts together, in the manner of the MCP SDK's transport/protocol split:
 * - `transport.ts`: one request and its answer (JSON or an event stream, resumed when cut), the
 *   headers of every request, best-effort messages in the background;
 * - `session.ts`: the `initialize` handshake, the negotiated version and this process's session per
 *   connection (DESIGN.md rule 6);
 * - `call.ts`: the call policy of `callTool`: the session re-send, the retry `mayRetry` allows
 *   (DESIGN.md rule 7), and `outcome.ts` for the outcome of each case (rule 8);
 * - `discovery.ts`: `server/discover` and every page of `tools/list`;
 * - `types.ts`: the endpoint, options, results, outcomes and `McpClientError`.
 *
 * Failures (DESIGN.md rule 8): `callTool` never throws for an upstream problem; it returns a
 * `CallToolOutcome`. Discovery (`initialize`, `listTools`, `discover`) throws `McpClientError`, or
 * the `OutboundError` of a refusal (`URL_REFUSED`, `ADDRESS_REFUSED`, `HEADER_INVALID`,
 * `REDIRECT_REFUSED`, `BODY_TOO_LARGE`) as it is.
 */
import { systemClock } from '../clock.js';
import type { OutboundClient } from '../http/outbound.js';
import type { JsonObject } from '../operations/types.js';
import { McpCalls } from './call.js';
import { McpDiscovery } from './discovery.js';
import { McpSessions } from './session.js';
import { DEFAULT_MAX_TOOLS } from './tool-mapping.js';
import { McpTransport } from './transport.js';
import {
  DEFAULT_DISCOVERY_TIMEOUT_MS,
  DEFAULT_MAX_PAGES,
  DEFAULT_MAX_SSE_EVENTS,
  DEFAULT_MCP_TIMEOUT_MS,
  DEFAULT_NOTIFY_TIMEOUT_MS,
  timeoutOf,
  type CallToolOptions,
  type CallToolOutcome,
  type DiscoverResult,
  type InitializeResult,
  type ListToolsResult,
  type McpClientOptions,
  type McpEndpoint,
  type McpSettings,
} from './types.js';

export * from './types.js';
export { DEFAULT_SSE_RETRY_MS, MAX_SSE_RESUMPTIONS, MAX_SSE_RETRY_MS } from './transport.js';

export class McpClient {
  readonly #settings: McpSettings;
  readonly #transport: McpTransport;
  readonly #sessions: McpSessions;
  readonly #discovery: McpDiscovery;
  readonly #calls: McpCalls;

  constructor(outbound: OutboundClient, options: McpClientOptions = {}) {
    const {
      timeoutMs = DEFAULT_MCP_TIMEOUT_MS,
      maxBodyBytes = outbound.maxBodyBytes,
      maxSseEvents = DEFAULT_MAX_SSE_EVENTS,
      maxTools = DEFAULT_MAX_TOOLS,
      maxPages = DEFAULT_MAX_PAGES,
      discoveryTimeoutMs = DEFAULT_DISCOVERY_TIMEOUT_MS,
      notifyTimeoutMs = DEFAULT_NOTIFY_TIMEOUT_MS,
      clientInfo = { name: 'connected-tools', version: '0.1.0' },
      clock = systemClock,
    } = options;
    this.#settings = {
      timeoutMs,
      maxBodyBytes,
      maxSseEvents,
      maxTools,
      maxPages,
      discoveryTimeoutMs,
      notifyTimeoutMs,
      clientInfo,
      clock,
    };
    // The transport asks the sessions which version a request carries, at send time.
    this.#transport = new McpTransport(outbound, this.#settings, (ep, sessionId) =>
      this.#sessions.versionFor(ep, sessionId),
    );
    this.#sessions = new McpSessions(this.#transport, clientInfo);
    this.#discovery = new McpDiscovery(this.#transport, this.#sessions, this.#settings);
    this.#calls = new McpCalls(this.#transport, this.#sessions, this.#settings);
  }

  /** Runs `initialize` and keeps the session for this connection's later calls. */
  initialize(ep: McpEndpoint): Promise<InitializeResult> {
    return this.#sessions.initialize(ep, timeoutOf(this.#settings, ep));
  }

  /** Drops this process's session for a connection, without telling the server. */
  forgetSession(connectionId: string): void {
    this.#sessions.forget(connectionId);
  }

  /** DELETEs this process's session for a connection (best effort) and forgets it. */
  endSession(ep: McpEndpoint): Promise<void> {
    return this.#sessions.end(ep);
  }

  /**
   * Lists every tool with this process's session for the connection, running `initialize` first
   * when there is none. Throws `McpClientError` or a refusal's `OutboundError`.
   */
  listTools(ep: McpEndpoint): Promise<ListToolsResult> {
    return this.#discovery.listTools(ep);
  }

  /** A whole discovery, modern or legacy (`discovery.ts`). */
  discover(ep: McpEndpoint): Promise<DiscoverResult> {
    return this.#discovery.discover(ep);
  }

  /**
   * Calls one tool. Never throws for an upstream problem: every failure is an outcome (`call.ts`
   * has the session and retry rules).
   */
  callTool(
    ep: McpEndpoint,
    name: string,
    args: JsonObject,
    options: CallToolOptions,
  ): Promise<CallToolOutcome> {
    return this.#calls.callTool(ep, name, args, options);
  }

  /** Resolves once every best-effort message sent so far has settled. For tests and shutdown. */
  whenIdle(): Promise<void> {
    return this.#transport.whenIdle();
  }
}
