/**
 * MCP sessions (DESIGN.md rule 6), the session half of the client: the `initialize` +
 * `notifications/initialized` handshake and the protocol version it negotiates, and this process's
 * session per connection id. A call uses the held session when there is one, else goes without;
 * when a server refuses a call for want of a session (400/404), the call asks `ensure` for one: a
 * single handshake, shared by every call waiting at that moment, keeps the `Mcp-Session-Id`.
 * Discovery runs a handshake of its own and never touches the sessions calls use.
 */
import type { McpTransport, Reply } from './transport.js';
import { replyError, transportError } from './failures.js';
import { isObject, type JsonObject } from '../operations/types.js';
import {
  McpClientError,
  McpErrorCode,
  MCP_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type InitializeResult,
  type McpEndpoint,
} from './types.js';
import { isLegacyVersion, LEGACY_VERSIONS, REQUESTED_LEGACY_VERSION } from './versions.js';

/** `Mcp-Session-Id` must be visible ASCII (0x21–0x7E); we also bound its length. */
const SESSION_ID = /^[\x21-\x7e]{1,4096}$/;

interface SessionState {
  sessionId: string | undefined;
  /** The version the handshake negotiated. */
  version: string;
  /** A handshake completed for this state: `sessionId` is what the server gave (maybe none). */
  ready: boolean;
  /** The handshake in flight, shared by every call that needs it. */
  pending: Promise<string | undefined> | null;
}

export interface Handshake {
  result: InitializeResult;
  sessionId: string | undefined;
}

export class McpSessions {
  readonly #states = new Map<string, SessionState>();
  readonly #transport: McpTransport;
  readonly #clientInfo: { name: string; version: string };

  constructor(transport: McpTransport, clientInfo: { name: string; version: string }) {
    this.#transport = transport;
    this.#clientInfo = clientInfo;
  }

  /** The session held for a connection, if a handshake completed and none is running. */
  held(connectionId: string): { sessionId: string | undefined } | null {
    const state = this.#states.get(connectionId);
    return state?.ready && !state.pending ? { sessionId: state.sessionId } : null;
  }

  /**
   * The version a legacy request carries: the session's negotiated one, else the one stored for
   * the connection, else the one we ask for.
   */
  versionFor(ep: McpEndpoint, sessionId: string | undefined): string {
    const state = this.#states.get(ep.id);
    if (state?.ready && state.sessionId === sessionId) return state.version;
    return isLegacyVersion(ep.protocolVersion) ? ep.protocolVersion! : MCP_PROTOCOL_VERSION;
  }

  /** `initialize` + `notifications/initialized`. Throws like discovery does. */
  async handshake(ep: McpEndpoint, timeoutMs: number): Promise<Handshake> {
    const id = this.#transport.newId();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: this.#clientInfo },
    });
    let reply: Reply;
    try {
      reply = await this.#transport.send(ep, undefined, id, body, timeoutMs);
    } catch (err) {
      throw transportError(err, 'initialize');
    }
    if (reply.type !== 'result') throw replyError(reply, 'initialize');
    const result = reply.result;
    if (!isObject(result) || typeof result.protocolVersion !== 'string') {
      throw new McpClientError(
        McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
        'initialize: the result has no protocolVersion',
        {
          reason: 'INVALID_RESPONSE',
        },
      );
    }
    const sessionHeader = reply.response.headers['mcp-session-id'];
    let sessionId: string | undefined;
    if (sessionHeader !== undefined) {
      if (typeof sessionHeader !== 'string' || !SESSION_ID.test(sessionHeader)) {
        throw new McpClientError(
          McpErrorCode.UPSTREAM_PROTOCOL_ERROR,
          'initialize: the Mcp-Session-Id is not visible ASCII (0x21-0x7E); refused',
          { reason: 'SESSION_ID_INVALID' },
        );
      }
      sessionId = sessionHeader;
    }
    const version = result.protocolVersion;
    if (!LEGACY_VERSIONS.includes(version)) {
      if (sessionId !== undefined) this.#transport.delete(ep, sessionId, REQUESTED_LEGACY_VERSION);
      throw new McpClientError(
        McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
        `initialize: we asked for protocol ${MCP_PROTOCOL_VERSION} and the server answered ${JSON.stringify(version.slice(0, 40))}, which this client does not speak (it speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        { protocolVersion: version.slice(0, 40), requested: MCP_PROTOCOL_VERSION },
      );
    }
    let initialized: Exclude<Reply, { type: 'result' }> | null;
    try {
      initialized = await this.#transport.notify(
        ep,
        sessionId,
        'notifications/initialized',
        timeoutMs,
        version,
      );
    } catch (err) {
      if (sessionId !== undefined) this.#transport.delete(ep, sessionId, version);
      throw transportError(err, 'notifications/initialized');
    }
    if (initialized !== null) {
      if (sessionId !== undefined) this.#transport.delete(ep, sessionId, version);
      throw replyError(initialized, 'notifications/initialized');
    }
    return {
      sessionId,
      result: {
        protocolVersion: result.protocolVersion,
        serverInfo: isObject(result.serverInfo) ? (result.serverInfo as JsonObject) : {},
        capabilities: isObject(result.capabilities) ? (result.capabilities as JsonObject) : {},
        instructions: typeof result.instructions === 'string' ? result.instructions : null,
      },
    };
  }

  /**
   * Returns a usable session id for the connection (or `undefined` for a server without
   * sessions), running at most one handshake at a time per connection. `stale` is the id the
   * caller just saw refused: if another call already replaced it, that replacement is used.
   */
  ensure(ep: McpEndpoint, stale: string | undefined, timeoutMs: number): Promise<string | undefined> {
    let state = this.#states.get(ep.id);
    if (state?.pending) return state.pending;
    if (state?.ready && state.sessionId !== stale) return Promise.resolve(state.sessionId);
    if (!state) {
      state = { sessionId: undefined, version: MCP_PROTOCOL_VERSION, ready: false, pending: null };
      this.#states.set(ep.id, state);
    }
    const s = state;
    s.ready = false;
    s.sessionId = undefined;
    s.pending = this.handshake(ep, timeoutMs).then(
      (hs) => {
        s.sessionId = hs.sessionId;
        s.version = hs.result.protocolVersion;
        s.ready = true;
        s.pending = null;
        return hs.sessionId;
      },
      (err: unknown) => {
        s.pending = null;
        throw err;
      },
    );
    return s.pending;
  }

  /** Runs `initialize` and keeps the session for this connection's later calls. */
  async initialize(ep: McpEndpoint, timeoutMs: number): Promise<InitializeResult> {
    const hs = await this.handshake(ep, timeoutMs);
    const previous = this.#states.get(ep.id);
    if (previous?.ready && previous.sessionId !== undefined && previous.sessionId !== hs.sessionId) {
      this.#transport.delete(ep, previous.sessionId, previous.version);
    }
    this.#states.set(ep.id, {
      sessionId: hs.sessionId,
      version: hs.result.protocolVersion,
      ready: true,
      pending: null,
    });
    return hs.result;
  }

  /** Drops this process's session for a connection, without telling the server. */
  forget(connectionId: string): void {
    this.#states.delete(connectionId);
  }

  /** DELETEs this process's session for a connection (best effort) and forgets it. */
  async end(ep: McpEndpoint): Promise<void> {
    const state = this.#states.get(ep.id);
    this.#states.delete(ep.id);
    if (state?.ready && state.sessionId !== undefined)
      await this.#transport.deleteNow(ep, state.sessionId, state.version);
  }
}
