/**
 * What a GraphQL request must get past before any real work: a valid token (from the headers
 * alone), then a body under its caller's cap. Refusals here cost no parsing and, for a request
 * without a valid token, no reading of its body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Role } from '../auth/api-token.entity.js';
import { isStaff } from '../auth/scope.js';
import type { Limits } from '../config.js';

/**
 * A refused request whose body is declared at most this large is drained (read and dropped), so
 * that its keep-alive connection stays usable; a larger or undeclared body is never read: the
 * connection is closed once the refusal is written.
 */
export const DRAIN_MAX_BYTES = 16 * 1024; // 16 KiB

/** The most a caller of this role may send in one request body or WebSocket message. */
export function bodyLimitFor(role: Role, limits: Pick<Limits, 'maxBodyBytes' | 'maxBodyBytesStaff'>): number {
  return isStaff(role) ? limits.maxBodyBytesStaff : limits.maxBodyBytes;
}

/**
 * The most one graphql-ws message may hold before the socket's `connection_init` was accepted:
 * enough for a `connection_init` with a token, nothing to parse at length for a stranger.
 */
export const WS_UNACCEPTED_MAX_BYTES = 16 * 1024; // 16 KiB

/**
 * The most one graphql-ws message may hold: {@link WS_UNACCEPTED_MAX_BYTES} until the socket is
 * accepted (`role` null), then the same cap as a request body of the socket's role.
 */
export function wsMessageLimitFor(
  role: Role | null,
  limits: Pick<Limits, 'maxBodyBytes' | 'maxBodyBytesStaff'>,
): number {
  return role === null ? WS_UNACCEPTED_MAX_BYTES : bodyLimitFor(role, limits);
}

/** A GraphQL-shaped error body, for refusals made before Apollo sees the request. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

function declaredLength(req: IncomingMessage): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined) return req.headers['transfer-encoding'] ? null : 0;
  return /^\d+$/.test(raw) ? Number(raw) : null;
}

/**
 * Answers without reading the request body past DRAIN_MAX_BYTES: a small body is drained so the
 * connection can be reused, anything else gets `Connection: close` and its socket is destroyed as
 * soon as the answer is written.
 */
export function refuseEarly(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  const length = declaredLength(req);
  const drain =
    req.method === 'GET' || req.method === 'HEAD' || (length !== null && length <= DRAIN_MAX_BYTES);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
    ...(drain ? {} : { connection: 'close' }),
  });
  if (drain) {
    res.end(body);
    return;
  }
  req.pause();
  res.end(body, () => {
    if (!req.complete) req.socket.destroy();
  });
}

/** 401 with `WWW-Authenticate: Bearer` (RFC 6750), decided from the headers alone. */
export function refuseUnauthenticated(req: IncomingMessage, res: ServerResponse, tokenGiven: boolean): void {
  refuseEarly(
    req,
    res,
    401,
    errorBody(
      'UNAUTHENTICATED',
      tokenGiven
        ? 'the API token is not valid (revoked, unknown or malformed)'
        : 'a valid API token is required (Authorization: Bearer …)',
    ),
    { 'www-authenticate': tokenGiven ? 'Bearer error="invalid_token"' : 'Bearer' },
  );
}

/**
 * Reads the body up to `limit` bytes; null when it is (or is declared) larger. Stops reading at
 * the cap rather than buffering the rest: the request is destroyed there. Rejects when the request
 * fails or closes before its end. Plain listeners rather than `for await`: the async iterator's
 * machinery was a visible share of a small request's CPU.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  const declared = declaredLength(req);
  if (declared !== null && declared > limit) return Promise.resolve(null);
  if (req.destroyed) return Promise.reject(new Error('the request closed before its body was read'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.destroy();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      stop();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    }
    function onError(err: Error): void {
      stop();
      reject(err);
    }
    function onClose(): void {
      stop();
      reject(new Error('the request closed before its body was complete'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
