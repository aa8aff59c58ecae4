/**
 * graphql-ws on a `ws` server (I/O): graphql-ws's own `use/ws` adapter, plus a size cap per
 * message that depends on the socket. `ws` has one `maxPayload` per server, so that is set to the
 * largest cap and each message is checked here, before graphql-ws reads (JSON-parses) it: a socket
 * whose `connection_init` was not accepted yet gets a small cap, an accepted one its role's cap.
 */
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket, WebSocketServer } from 'ws';

/** Close codes of our own, beside graphql-ws's `CloseCode`. */
export enum WsCloseCode {
  /** A message over the socket's size cap (README, "Limits"). */
  MessageTooLarge = 4413,
}
export const MESSAGE_TOO_LARGE_REASON = 'Message too large';

/** How often an idle socket is pinged; a socket that does not answer within as long is dropped. */
export const DEFAULT_KEEP_ALIVE_MS = 12_000; // 12 seconds

export interface WsExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

export interface WsAdapterOptions {
  /** The most bytes `socket`'s next message may hold. */
  maxMessageBytes: (socket: WebSocket) => number;
  keepAliveMs?: number;
  /** Called with what went wrong inside the adapter or graphql-ws; the socket is closed with 4500. */
  onInternalError?: (err: unknown) => void;
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, chunk) => n + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** Serves graphql-ws on `ws`; returns a disposer that closes every socket. */
export function useWsServer<P extends Record<string, unknown>, E extends Record<PropertyKey, unknown>>(
  options: ServerOptions<P, WsExtra & Partial<E>>,
  ws: WebSocketServer,
  {
    maxMessageBytes,
    keepAliveMs = DEFAULT_KEEP_ALIVE_MS,
    onInternalError = () => undefined,
  }: WsAdapterOptions,
): { dispose: () => Promise<void> } {
  const server = makeServer(options);
  ws.options.handleProtocols = handleProtocols;
  ws.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    // Never a message or stack trace of ours to the peer.
    socket.once('error', (err) => {
      onInternalError(err);
      socket.close(CloseCode.InternalServerError, 'Internal server error');
    });
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
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (err) => (err ? reject(err) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on('message', (data: RawData) => {
            // Checked before graphql-ws parses anything of it.
            if (byteLength(data) > maxMessageBytes(socket)) {
              socket.close(WsCloseCode.MessageTooLarge, MESSAGE_TOO_LARGE_REASON);
              return;
            }
            const text = Array.isArray(data)
              ? Buffer.concat(data).toString('utf8')
              : Buffer.isBuffer(data)
                ? data.toString('utf8')
                : Buffer.from(data).toString('utf8');
            cb(text).catch((err: unknown) => {
              onInternalError(err);
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
      },
      { socket, request } as WsExtra & Partial<E>,
    );
    socket.once('close', (code: number, reason: Buffer) => {
      if (pongWait) clearTimeout(pongWait);
      clearInterval(pingInterval);
      void closed(code, reason.toString());
    });
  });
  return {
    dispose: async () => {
      for (const client of ws.clients) client.close(1001, 'Going away');
      ws.removeAllListeners();
      await new Promise<void>((resolve, reject) => ws.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
