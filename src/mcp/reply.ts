/**
 * What the server said to one request, as the transport hands it on: a JSON-RPC result or error, an
 * HTTP refusal with a bounded excerpt of its body, or a protocol problem. The helpers here read one
 * JSON-RPC message (or an event's data) as the answer to our id; `transport.ts` does the I/O.
 */
import { OutboundError, OutboundErrorCode, type OutboundResponse } from '../http/outbound.js';
import { isObject, type JsonValue } from '../operations/types.js';
import type { ProtocolProblem, RpcErrorInfo } from './types.js';
import type { ServerAsk } from './versions.js';

/** Bytes of an error body read for its excerpt; the rest is discarded. */
const EXCERPT_READ_BYTES = 4 * 1024; // 4 KiB
/** Characters of an error body kept in `bodyExcerpt`. */
const EXCERPT_CHARS = 500;
export type Reply =
  | {
      type: 'result';
      result: unknown;
      response: OutboundResponse;
      /** What the server asked us for on the stream before its answer (declined or refused). */
      asked?: ServerAsk[];
    }
  | { type: 'rpc_error'; error: RpcErrorInfo }
  | { type: 'http'; status: number; bodyExcerpt: string; wwwAuthenticate: string | null }
  | { type: 'protocol'; problem: ProtocolProblem; detail: string };

export function headerValue(res: OutboundResponse, name: string): string | null {
  const v = res.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : null;
}

export function mediaType(res: OutboundResponse): string {
  const ct = headerValue(res, 'content-type');
  if (ct === null) return '';
  const semi = ct.indexOf(';');
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

/** Reads at most a few KiB of an error body, as one printable line. Never throws. */
export async function readExcerpt(res: OutboundResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= EXCERPT_READ_BYTES) break;
    }
  } catch {
    // An excerpt is a courtesy: a body that fails to arrive leaves what we have.
  }
  const text = Buffer.concat(chunks, total).subarray(0, EXCERPT_READ_BYTES).toString('utf8');
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

function parseRpcError(value: unknown): RpcErrorInfo | null {
  if (!isObject(value) || typeof value.code !== 'number' || typeof value.message !== 'string') return null;
  const info: RpcErrorInfo = { code: value.code, message: value.message };
  if (value.data !== undefined) info.data = value.data as JsonValue;
  return info;
}

/** Interprets one JSON-RPC message as the answer to `id`. */
export function toReply(message: unknown, id: number, response: OutboundResponse): Reply {
  if (Array.isArray(message)) {
    return {
      type: 'protocol',
      problem: 'INVALID_RESPONSE',
      detail: 'a batch answer, which 2025-06-18 does not allow',
    };
  }
  if (!isObject(message) || message.jsonrpc !== '2.0') {
    return {
      type: 'protocol',
      problem: 'INVALID_RESPONSE',
      detail: 'the answer is not a JSON-RPC 2.0 message',
    };
  }
  if (message.id !== id) {
    return {
      type: 'protocol',
      problem: 'RESPONSE_ID_MISMATCH',
      detail: `the answer is for id ${JSON.stringify(message.id) ?? 'undefined'}, expected ${id}`,
    };
  }
  if ('error' in message) {
    const error = parseRpcError(message.error);
    return error
      ? { type: 'rpc_error', error }
      : {
          type: 'protocol',
          problem: 'INVALID_RESPONSE',
          detail: 'the JSON-RPC error has no numeric code or no message',
        };
  }
  if ('result' in message) return { type: 'result', result: message.result, response };
  return { type: 'protocol', problem: 'INVALID_RESPONSE', detail: 'the answer has neither result nor error' };
}

export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void =>
      reject(new OutboundError(OutboundErrorCode.ABORTED, 'the call was aborted', { reachedServer: true }));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

/** An event's data as a JSON-RPC message object, or the protocol problem it is. */
export function eventMessage(
  data: string,
): { message: Record<string, unknown> } | { problem: Extract<Reply, { type: 'protocol' }> } {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return {
      problem: {
        type: 'protocol',
        problem: 'INVALID_JSON',
        detail: 'an event of the stream is not valid JSON',
      },
    };
  }
  if (!isObject(message)) {
    return {
      problem: {
        type: 'protocol',
        problem: 'INVALID_RESPONSE',
        detail: 'an event of the stream is not a JSON-RPC message',
      },
    };
  }
  return { message };
}
