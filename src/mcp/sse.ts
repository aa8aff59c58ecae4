/**
 * A streaming, bounded parser for `text/event-stream` (the WHATWG "server-sent events" format), as
 * MCP servers use it to answer a POST. Pure: it sees bytes, never a socket.
 *
 * It works on bytes and splits lines at CR, LF or CRLF (also across chunks), so a multi-byte
 * character split between two chunks is decoded whole. Every resource is bounded: the length of a
 * line, the number of events and the total bytes. Past a bound it throws `SseLimitError`.
 */
import { AppError } from '../errors.js';

/** Longest line accepted, in bytes, without its line ending. */
export const DEFAULT_SSE_MAX_LINE_BYTES = 2 * 1024 * 1024; // 2 MiB
/** Events dispatched per stream. */
export const DEFAULT_SSE_MAX_EVENTS = 10_000;
/** Bytes read per stream. */
export const DEFAULT_SSE_MAX_BYTES = 2 * 1024 * 1024; // 2 MiB

export interface SseEvent {
  /** The `event:` field; `message` when absent. */
  event: string;
  /** The `data:` lines joined by `\n`. May be empty (`data:` with no value); callers skip those. */
  data: string;
  /** The `id:` field of this event, when it had one. */
  id: string | undefined;
  /** The `retry:` field in ms, when it had a valid one. */
  retry: number | undefined;
}

export interface SseLimits {
  maxLineBytes?: number;
  maxEvents?: number;
  maxBytes?: number;
}

/** Raised when a stream passes one of its bounds. `limit` says which one. */
export class SseLimitError extends AppError {
  override readonly name = 'SseLimitError';
  constructor(
    readonly limit: 'line' | 'events' | 'bytes',
    readonly max: number,
  ) {
    super('SSE_LIMIT_EXCEEDED', `the event stream passed its ${limit} limit (${max})`);
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Incremental parser: `push` bytes, get the events they complete. `end` discards an unterminated
 * event, as the format requires.
 */
export class SseParser {
  readonly #maxLineBytes: number;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #events = 0;
  /** Pieces of the current, unterminated line. */
  #partial: Buffer[] = [];
  #partialBytes = 0;
  /** A chunk ended on CR: an LF opening the next chunk belongs to the same line ending. */
  #skipLf = false;
  #firstLine = true;
  #data: string[] = [];
  #hasData = false;
  #event = '';
  #id: string | undefined = undefined;
  #retry: number | undefined = undefined;
  /**
   * The stream's last event ID (WHATWG: set when a block carrying `id:` ends, even one without
   * data, such as a 2025-11-25 server's priming event; an empty `id:` clears it).
   */
  lastEventId: string | undefined = undefined;
  /** The stream's reconnection time in ms, from the last valid `retry:` field. */
  reconnectMs: number | undefined = undefined;

  constructor(limits: SseLimits = {}) {
    const {
      maxLineBytes = DEFAULT_SSE_MAX_LINE_BYTES,
      maxEvents = DEFAULT_SSE_MAX_EVENTS,
      maxBytes = DEFAULT_SSE_MAX_BYTES,
    } = limits;
    this.#maxLineBytes = maxLineBytes;
    this.#maxEvents = maxEvents;
    this.#maxBytes = maxBytes;
  }

  push(chunk: Uint8Array): SseEvent[] {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#maxBytes) throw new SseLimitError('bytes', this.#maxBytes);
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const out: SseEvent[] = [];
    let start = 0;
    if (this.#skipLf && buf.length > 0) {
      if (buf[0] === LF) start = 1;
      this.#skipLf = false;
    }
    for (let i = start; i < buf.length; i++) {
      const b = buf[i];
      if (b !== LF && b !== CR) continue;
      const length = this.#partialBytes + (i - start);
      if (length > this.#maxLineBytes) throw new SseLimitError('line', this.#maxLineBytes);
      let line: Buffer;
      if (this.#partial.length === 0) {
        line = buf.subarray(start, i);
      } else {
        this.#partial.push(buf.subarray(start, i));
        line = Buffer.concat(this.#partial, length);
        this.#partial = [];
        this.#partialBytes = 0;
      }
      this.#line(line, out);
      if (b === CR) {
        if (i + 1 < buf.length) {
          if (buf[i + 1] === LF) i++;
        } else {
          this.#skipLf = true;
        }
      }
      start = i + 1;
    }
    if (start < buf.length) {
      const rest = buf.subarray(start);
      this.#partialBytes += rest.length;
      if (this.#partialBytes > this.#maxLineBytes) throw new SseLimitError('line', this.#maxLineBytes);
      // Copy: the caller may reuse its chunk buffer.
      this.#partial.push(Buffer.from(rest));
    }
    return out;
  }

  /** The stream ended. An event without its closing blank line is discarded. */
  end(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#reset();
  }

  #reset(): void {
    this.#data = [];
    this.#hasData = false;
    this.#event = '';
    this.#id = undefined;
    this.#retry = undefined;
  }

  #line(raw: Buffer, out: SseEvent[]): void {
    let line = raw.toString('utf8');
    if (this.#firstLine) {
      this.#firstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line === '') {
      if (this.#id !== undefined) this.lastEventId = this.#id === '' ? undefined : this.#id;
      if (this.#hasData) {
        if (++this.#events > this.#maxEvents) throw new SseLimitError('events', this.#maxEvents);
        out.push({
          event: this.#event || 'message',
          data: this.#data.join('\n'),
          id: this.#id,
          retry: this.#retry,
        });
      }
      this.#reset();
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* ':' comment */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'data':
        this.#data.push(value);
        this.#hasData = true;
        break;
      case 'event':
        this.#event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.#retry = this.reconnectMs = Number(value);
        break;
      default:
        break;
    }
  }
}

/** What a client needs to resume a stream (2025-11-25 transports, "Resumability and Redelivery"). */
export interface SseResumeState {
  lastEventId: string | undefined;
  reconnectMs: number | undefined;
}

/**
 * Parses a byte stream into events, lazily. Breaking out of the loop returns the source iterator,
 * which closes the underlying body. `resume`, when given, follows the stream's last event ID and
 * reconnection time as they change.
 */
export async function* parseSse(
  source: AsyncIterable<Uint8Array>,
  limits: SseLimits = {},
  resume?: SseResumeState,
): AsyncGenerator<SseEvent> {
  const parser = new SseParser(limits);
  if (resume) {
    parser.lastEventId = resume.lastEventId;
    parser.reconnectMs = resume.reconnectMs;
  }
  for await (const chunk of source) {
    const events = parser.push(chunk);
    if (resume) {
      resume.lastEventId = parser.lastEventId;
      resume.reconnectMs = parser.reconnectMs;
    }
    for (const event of events) yield event;
  }
  parser.end();
}
