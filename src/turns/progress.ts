/**
 * What a tool server says while a call runs, for the turn debugger (pure: the clock is passed in).
 *
 * An MCP server may send `notifications/progress` (for the progress token of our call) and
 * `notifications/message` (logging) on the call's stream before its answer. Both come from an
 * untrusted server, so they are bounded twice:
 * - live: at most `maxEvents` CALL_PROGRESS events per call, at least `minIntervalMs` apart; what
 *   arrives in between is not sent live, but kept;
 * - kept: the last `maxLines` lines, each cut to `maxChars`; the record counts what was dropped.
 * A hostile server can therefore cost a call at most `maxEvents` rows, whatever it sends.
 */
import { isObject } from '../operations/types.js';

export const DEFAULT_PROGRESS_MAX_EVENTS = 30;
export const DEFAULT_PROGRESS_MIN_INTERVAL_MS = 200; // 0.2 seconds
export const DEFAULT_PROGRESS_MAX_LINES = 50;
export const DEFAULT_PROGRESS_MAX_CHARS = 300;

export type ProgressKind = 'PROGRESS' | 'LOG';

/** One line of what the server said, as the debugger shows it. */
export interface ProgressLine {
  kind: ProgressKind;
  /** Milliseconds since the call started. */
  atMs: number;
  /** PROGRESS: how far, and out of how much when the server knows. */
  progress: number | null;
  total: number | null;
  /** LOG: the level the server gave (`debug` … `emergency`). */
  level: string | null;
  /** The server's message (PROGRESS) or its log data as text (LOG), cut to the cap. */
  message: string | null;
}

export interface ProgressRecord {
  lines: ProgressLine[];
  /** Notifications received but not kept (over `maxLines`). */
  dropped: number;
}

export interface ProgressLimits {
  maxEvents?: number;
  minIntervalMs?: number;
  maxLines?: number;
  maxChars?: number;
}

const LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

function finite(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// NUL and lone surrogates: PostgreSQL cannot store them in jsonb.
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return (flat.length > max ? `${flat.slice(0, max)}…` : flat).replace(UNSTORABLE, '\ufffd');
}

/**
 * A server notification as a line, or null when it is not one we show: another method, progress
 * for another token, or params of the wrong shape. `scrub` removes secrets before the text is cut.
 */
export function toProgressLine(
  notification: { method: string; params: unknown; progressToken: string },
  atMs: number,
  scrub: (text: string) => string,
  maxChars = DEFAULT_PROGRESS_MAX_CHARS,
): ProgressLine | null {
  const p = notification.params;
  if (!isObject(p)) return null;
  if (notification.method === 'notifications/progress') {
    if (p.progressToken !== notification.progressToken) return null;
    const progress = finite(p.progress);
    if (progress === null) return null;
    return {
      kind: 'PROGRESS',
      atMs,
      progress,
      total: finite(p.total),
      level: null,
      message: typeof p.message === 'string' ? cut(scrub(p.message), maxChars) : null,
    };
  }
  if (notification.method === 'notifications/message') {
    const level = typeof p.level === 'string' && LEVELS.has(p.level) ? p.level : null;
    if (level === null || p.data === undefined) return null;
    const text = typeof p.data === 'string' ? p.data : (JSON.stringify(p.data) ?? '');
    const logger = typeof p.logger === 'string' ? `${p.logger.slice(0, 60)}: ` : '';
    return {
      kind: 'LOG',
      atMs,
      progress: null,
      total: null,
      level,
      message: cut(scrub(`${logger}${text}`), maxChars),
    };
  }
  return null;
}

/** The per-call gate: which lines go out live, and which are kept for the record. */
export class ProgressGate {
  readonly #maxEvents: number;
  readonly #minIntervalMs: number;
  readonly #maxLines: number;
  readonly #lines: ProgressLine[] = [];
  #dropped = 0;
  #emitted = 0;
  #lastEmitAt = Number.NEGATIVE_INFINITY;
  /** The newest line held back by the interval, sent when the call ends (so the last word shows). */
  #held: ProgressLine | null = null;

  constructor({
    maxEvents = DEFAULT_PROGRESS_MAX_EVENTS,
    minIntervalMs = DEFAULT_PROGRESS_MIN_INTERVAL_MS,
    maxLines = DEFAULT_PROGRESS_MAX_LINES,
  }: ProgressLimits = {}) {
    this.#maxEvents = maxEvents;
    this.#minIntervalMs = minIntervalMs;
    this.#maxLines = maxLines;
  }

  /** Keeps the line; true when it should also go out live now (`nowMs`: the caller's clock). */
  offer(line: ProgressLine, nowMs: number): boolean {
    this.#lines.push(line);
    if (this.#lines.length > this.#maxLines) {
      this.#lines.shift();
      this.#dropped++;
    }
    if (this.#emitted >= this.#maxEvents) return false;
    if (nowMs - this.#lastEmitAt < this.#minIntervalMs) {
      this.#held = line;
      return false;
    }
    this.#held = null;
    this.#emitted++;
    this.#lastEmitAt = nowMs;
    return true;
  }

  /**
   * When the call ends: the newest line the interval held back, if any and if the cap allows, to
   * send live before CALL_FINISHED (a call's last words are what a person debugging it looks for).
   */
  takeHeld(): ProgressLine | null {
    const line = this.#held;
    this.#held = null;
    if (!line || this.#emitted >= this.#maxEvents) return null;
    this.#emitted++;
    return line;
  }

  /** How many lines went out live. */
  get emitted(): number {
    return this.#emitted;
  }

  record(): ProgressRecord {
    return { lines: [...this.#lines], dropped: this.#dropped };
  }
}
