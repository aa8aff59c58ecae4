/**
 * graphql-ws on a `ws` server (I/O): graphql-ws's own `use/ws` adapter, plus a size cap per
 * message that depends on the socket, and a short leash for sockets not accepted yet.
 * - `ws` refuses a frame over the server's `maxPayload` at its header, before buffering it (close
 *   1009): the server is made with the small cap of an unaccepted socket, and `accept()` raises a
 *   socket's own cap once its `connection_init` is accepted. Each message is also checked here,
 *   before graphql-ws reads (JSON-parses) it, against the socket's cap (its role's, once accepted).
 * - Sockets not accepted yet are capped per instance (`maxUnaccepted`, which `full()` tells the
 *   upgrade's check); one past it is terminated at once.
 * - A socket refused before acceptance gets its close frame, then is terminated after
 *   `refusedLingerMs`, rather than held for `ws`'s 30 s closing handshake that its peer may never
 *   answer.
 * - Time: the keep-alive, the refused linger and graphql-ws's own connection_init wait stay on real
 *   time (src/clock.ts): they leash a socket's resources, and no caller waits on their outcome.
 */
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket, WebSocketServer } from 'ws';

/** Close codes of our own, beside graphql-ws's `CloseCode`. */
export enum WsCloseCode {
  /** A message over the socket's size cap (docs/limits.md). */
  MessageTooLarge = 4413,
}
export const MESSAGE_TOO_LARGE_REASON = 'Message too large';

/** How often an idle socket is pinged; a socket that does not answer within as long is dropped. */
export const DEFAULT_KEEP_ALIVE_MS = 12_000; // 12 seconds
/** How long a socket refused before acceptance has, after its close frame, before it is terminated. */
export const DEFAULT_REFUSED_LINGER_MS = 250; // a quarter of a second

export interface WsExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

export interface WsAdapterOptions {
  /** The most bytes `socket`'s next message may hold. */
  maxMessageBytes: (socket: WebSocket) => number;
  /** `ws`'s frame cap for an accepted socket (the server's `maxPayload` holds until then). */
  acceptedFrameBytes: number;
  /** Sockets open and not accepted yet, at most, not counting those `vouched` for. */
  maxUnaccepted: number;
  /** Whether an upgrade was already authenticated (its socket does not count towards `maxUnaccepted`). */
  vouched?: (request: IncomingMessage) => boolean;
  keepAliveMs?: number;
  refusedLingerMs?: number;
  /** Called with what went wrong inside the adapter or graphql-ws; the socket is closed with 4500. */
  onInternalError?: (err: unknown) => void;
}

/**
 * `ws` copies the server's `maxPayload` into each socket's receiver, which checks every frame
 * header against it; it has no public setter, so an accepted socket's is raised here.
 */
function setFrameCap(socket: WebSocket, bytes: number): void {
  const receiver = (socket as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver;
  if (typeof receiver?._maxPayload !== 'number')
    throw new Error("ws changed: a socket's receiver has no _maxPayload to raise (src/http/ws-adapter.ts)");
  receiver._maxPayload = bytes;
}

export interface WsAdapter {
  /** `socket`'s connection_init was accepted: its role's caps apply, and it no longer counts as unaccepted. */
  accept(socket: WebSocket): void;
  /** Whether another socket that nobody vouched for would be one too many. */
  full(): boolean;
  /** Closes every socket. */
  dispose(): Promise<void>;
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, chunk) => n + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** Pings `socket` every `keepAliveMs`, and terminates it when a pong takes longer; returns the stop. */
function keepAlive(socket: WebSocket, keepAliveMs: number): () => void {
  let pongWait: NodeJS.Timeout | null = null;
  const pingInterval = setInterval(() => {
    if (socket.readyState !== socket.OPEN) return;
    pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
    socket.once('pong', () => {
      if (pongWait) clearTimeout(pongWait);
      pongWait = null;
    });
    socket.ping();
  }, keepAliveMs);
  return () => {
    if (pongWait) clearTimeout(pongWait);
    clearInterval(pingInterval);
  };
}

/**
 * `socket` as graphql-ws's abstract socket: a message over its cap hangs up (4413) before
 * graphql-ws parses any of it, and a failure inside graphql-ws closes with 4500.
 */
function graphqlWsSocket(
  socket: WebSocket,
  {
    hangUp,
    maxMessageBytes,
    onInternalError,
  }: {
    hangUp: (socket: WebSocket, code?: number, reason?: string) => void;
    maxMessageBytes: (socket: WebSocket) => number;
    onInternalError: (err: unknown) => void;
  },
): Parameters<ReturnType<typeof makeServer>['opened']>[0] {
  return {
    protocol: socket.protocol,
    send: (data) =>
      new Promise<void>((resolve, reject) => {
        if (socket.readyState !== socket.OPEN) return resolve();
        socket.send(data, (err) => (err ? reject(err) : resolve()));
      }),
    close: (code, reason) => hangUp(socket, code, reason),
    onMessage: (cb) =>
      socket.on('message', (data: RawData) => {
        // Checked before graphql-ws parses anything of it.
        if (byteLength(data) > maxMessageBytes(socket)) {
          hangUp(socket, WsCloseCode.MessageTooLarge, MESSAGE_TOO_LARGE_REASON);
          return;
        }
        const text = Array.isArray(data)
          ? Buffer.concat(data).toString('utf8')
          : Buffer.isBuffer(data)
            ? data.toString('utf8')
            : Buffer.from(data).toString('utf8');
        cb(text).catch((err: unknown) => {
          onInternalError(err);
          hangUp(socket, CloseCode.InternalServerError, 'Internal server error');
        });
      }),
  };
}

/** Serves graphql-ws on `ws` (whose `maxPayload` is the cap of a socket not accepted yet). */
export function useWsServer<P extends Record<string, unknown>, E extends Record<PropertyKey, unknown>>(
  options: ServerOptions<P, WsExtra & Partial<E>>,
  ws: WebSocketServer,
  {
    maxMessageBytes,
    acceptedFrameBytes,
    maxUnaccepted,
    vouched = () => false,
    keepAliveMs = DEFAULT_KEEP_ALIVE_MS,
    refusedLingerMs = DEFAULT_REFUSED_LINGER_MS,
    onInternalError = () => undefined,
  }: WsAdapterOptions,
): WsAdapter {
  const server = makeServer(options);
  ws.options.handleProtocols = handleProtocols;
  const accepted = new WeakSet<WebSocket>();
  const unaccepted = new Set<WebSocket>();
  /** Closes `socket` with `code`; one not accepted yet is terminated soon after its close frame. */
  const hangUp = (socket: WebSocket, code?: number, reason?: string): void => {
    socket.close(code, reason);
    if (accepted.has(socket)) return;
    const linger = setTimeout(() => socket.terminate(), refusedLingerMs);
    socket.once('close', () => clearTimeout(linger));
  };
  ws.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    if (!vouched(request)) {
      if (unaccepted.size >= maxUnaccepted) {
        socket.terminate(); // the upgrade raced past verifyClient's own check
        return;
      }
      unaccepted.add(socket);
    }
    // Never a message or stack trace of ours to the peer. `ws` has sent its own close frame (1009
    // for a frame over the cap) and would read on for 30 s: a socket not accepted yet goes now.
    socket.once('error', (err) => {
      // A frame over the cap or a malformed one is the peer's doing (`ws`'s WS_ERR_* codes), not ours.
      if (!String((err as { code?: unknown }).code).startsWith('WS_ERR_')) onInternalError(err);
      if (!accepted.has(socket)) socket.terminate();
      else socket.close(CloseCode.InternalServerError, 'Internal server error');
    });
    const stopKeepAlive = keepAlive(socket, keepAliveMs);
    const closed = server.opened(graphqlWsSocket(socket, { hangUp, maxMessageBytes, onInternalError }), {
      socket,
      request,
    } as WsExtra & Partial<E>);
    socket.once('close', (code: number, reason: Buffer) => {
      unaccepted.delete(socket);
      stopKeepAlive();
      void closed(code, reason.toString());
    });
  });
  return {
    accept: (socket) => {
      setFrameCap(socket, acceptedFrameBytes);
      accepted.add(socket);
      unaccepted.delete(socket);
    },
    full: () => unaccepted.size >= maxUnaccepted,
    dispose: async () => {
      for (const client of ws.clients) client.close(1001, 'Going away');
      ws.removeAllListeners();
      await new Promise<void>((resolve, reject) => ws.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
