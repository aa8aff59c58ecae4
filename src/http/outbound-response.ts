/**
 * An outbound response and its deadline: one timer per request covering connect, headers and the
 * whole body, and a body counted while it streams and cut at the cap, never buffered first.
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { systemClock, type Clock, type ClockTimer } from '../clock.js';
import { OutboundError, OutboundErrorCode } from './outbound-error.js';
import { translateError } from './outbound-connect.js';

export const DUMP_LIMIT_BYTES = 64 * 1024; // 64 KiB

export interface OutboundResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The final URL, after redirects. */
  readonly url: URL;
  /**
   * The body as a stream, counted as it arrives: it throws `BODY_TOO_LARGE` past the cap. Read it at
   * most once, through this or through `text`/`json`/`dump`. Breaking out of the loop closes it.
   */
  readonly body: AsyncIterable<Buffer>;
  /** The whole body as UTF-8, capped. */
  text(): Promise<string>;
  /** The whole body parsed as JSON, capped; `INVALID_JSON` if it does not parse. */
  json(): Promise<unknown>;
  /** Discards the body. Never throws. Call it on every response whose body you don't read. */
  dump(): Promise<void>;
}

export function noop(): void {}

/**
 * What undici is given to abort a request: an `EventEmitter` (undici takes one in place of an
 * `AbortSignal`) that emits `abort` once. An `AbortSignal` (an `EventTarget`) and its listeners
 * cost a few microseconds more per request, on the path of every call.
 */
export class DeadlineSignal extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * One request's deadline across its redirect hops: one timer on the injected clock, and the signal undici gets (it aborts
 * the connect wait, the headers and the body alike), which the caller's signal aborts too. It also
 * names what ended the request: the deadline is `TIMEOUT`, the caller's signal `ABORTED`, anything
 * else is translated by `translateError`.
 *
 * `end()` (the body read, drained or failed) stops the timer. `AbortSignal.timeout` would do the
 * same job, but costs more than a whole call's parsing to create (a weakly held timer per signal),
 * and each one fires at its deadline, long after the call, with a `DOMException` and its stack.
 */
export class Deadline {
  /** The host of the current hop, for messages. */
  host: string;
  readonly timeoutMs: number;
  readonly signal = new DeadlineSignal();
  readonly #clock: Clock;
  readonly #timer: ClockTimer;
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort: (() => void) | undefined;
  #timedOut = false;

  constructor(host: string, timeoutMs: number, caller: AbortSignal | undefined, clock: Clock = systemClock) {
    this.host = host;
    this.timeoutMs = timeoutMs;
    this.#clock = clock;
    this.#timer = clock.setTimeout(() => {
      this.#timedOut = true;
      this.signal.abort();
    }, timeoutMs);
    this.#timer.unref();
    this.#caller = caller;
    if (caller) {
      this.#onCallerAbort = () => this.signal.abort();
      caller.addEventListener('abort', this.#onCallerAbort, { once: true });
    }
  }

  /** The request is over (its body read, drained or failed): the timer and the caller's listener go. */
  end(): void {
    this.#clock.clearTimeout(this.#timer);
    if (this.#onCallerAbort) this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }

  /** The failure an error stands for, given what (if anything) aborted the request. Ends the request. */
  failure(err: unknown): OutboundError {
    this.end();
    if (this.#timedOut) {
      return new OutboundError(
        OutboundErrorCode.TIMEOUT,
        `request to ${this.host} timed out after ${this.timeoutMs} ms`,
        { reachedServer: true, data: { host: this.host, timeoutMs: this.timeoutMs } },
      );
    }
    if (this.#caller?.aborted) return aborted(this.host, this.#caller.reason);
    return translateError(err, this.host);
  }

  /** Settles with `promise`, or rejects as soon as the signal aborts; rejects with an `OutboundError`. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(this.failure(undefined));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.failure(undefined));
      signal.once('abort', onAbort);
      promise.then(
        (value) => {
          signal.removeListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeListener('abort', onAbort);
          reject(this.failure(err));
        },
      );
    });
  }
}

export function aborted(host: string, reason: unknown): OutboundError {
  return new OutboundError(OutboundErrorCode.ABORTED, `request to ${host} was aborted`, {
    reachedServer: true,
    data: { host },
    cause: reason,
  });
}

export class CappedResponse implements OutboundResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly url: URL;
  readonly #raw: Dispatcher.ResponseData['body'];
  readonly #cap: number;
  readonly #deadline: Deadline;

  constructor(res: Dispatcher.ResponseData, url: URL, cap: number, deadline: Deadline) {
    this.status = res.statusCode;
    this.headers = res.headers;
    this.url = url;
    this.#raw = res.body;
    this.#cap = cap;
    this.#deadline = deadline;
  }

  get body(): AsyncIterable<Buffer> {
    return this.#iterate();
  }

  #tooLarge(): OutboundError {
    const host = this.url.hostname;
    return new OutboundError(
      OutboundErrorCode.BODY_TOO_LARGE,
      `the response from ${host} is larger than ${this.#cap} bytes`,
      { reachedServer: true, data: { host, limitBytes: this.#cap } },
    );
  }

  /** A declared length over the cap fails before a byte is read. */
  #declaredLength(): number | null {
    const raw = this.headers['content-length'];
    if (typeof raw !== 'string') return null;
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  }

  async *#iterate(): AsyncGenerator<Buffer, void, undefined> {
    const raw = this.#raw;
    let complete = false;
    try {
      const declared = this.#declaredLength();
      if (declared !== null && declared > this.#cap) throw this.#tooLarge();
      let total = 0;
      try {
        for await (const chunk of raw as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > this.#cap) throw this.#tooLarge();
          yield chunk;
        }
      } catch (err) {
        throw this.#deadline.failure(err);
      }
      complete = true;
    } finally {
      this.#deadline.end();
      // Without a listener, undici reports the destroy as an uncaught 'error'.
      if (!complete) raw.on('error', noop).destroy();
    }
  }

  async text(): Promise<string> {
    const declared = this.#declaredLength();
    if (declared !== null && declared <= this.#cap) {
      // The HTTP parser enforces Content-Length, so this cannot exceed the cap: take undici's fast path.
      try {
        return await this.#raw.text();
      } catch (err) {
        throw this.#deadline.failure(err);
      } finally {
        this.#deadline.end();
      }
    }
    const chunks: Buffer[] = [];
    for await (const chunk of this.#iterate()) chunks.push(chunk);
    return chunks.length === 1
      ? (chunks[0] as Buffer).toString('utf8')
      : Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    const text = await this.text();
    try {
      return JSON.parse(text) as unknown;
    } catch (cause) {
      throw new OutboundError(
        OutboundErrorCode.INVALID_JSON,
        `the response from ${this.url.hostname} is not JSON`,
        {
          reachedServer: true,
          data: { host: this.url.hostname },
          cause,
        },
      );
    }
  }

  async dump(): Promise<void> {
    try {
      await this.#raw.dump({ limit: DUMP_LIMIT_BYTES });
    } catch {
      // Draining is best effort: a body that fails here is already gone.
    } finally {
      this.#deadline.end();
    }
  }
}
