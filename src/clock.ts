/**
 * The time the call path reads and waits on (issue 30, item 3). Production runs on `systemClock`;
 * a test passes its own (test/support/fake-clock.ts) to `startApp({ clock })` and moves time on by
 * hand, so nothing waits a real budget, retry pause or window out. It is injected the way the MCP
 * SDK injects `fetch`: every module of the call path that reads the time or sets a timer takes a
 * `Clock` from its deps instead of calling `Date.now`, `performance.now` or `setTimeout` itself.
 *
 * On the clock: a call's start time, duration and `READ` start hold (turns/call-path.ts) and its
 * record retries (turns/call-record.ts), the outbound deadline (http/outbound-response.ts), the
 * MCP client's deadlines, stream-resume pauses and durations (mcp/), the discovery run's deadline
 * (discovery/discover.ts), OpenAPI call and tool-search durations (turns/dispatch.ts,
 * turns/search/tool-search.ts), the MCP endpoint's idle-Turn window (mcp-server/conversations.ts,
 * in memory and in its SQL), a call's wait for a cap's slot (guards/cap-slots.ts), and the
 * turn-events LISTEN's linger after its last watcher leaves (db/notifier.ts).
 *
 * Timers that pace background work may stay on real time: they decide nothing a caller waits on.
 * These do: the idle-Turn sweep's interval, the cap leases' renewal heartbeat, a waiting cap's
 * re-asks (CAP_RETRY_MS) and give-back window, the token and session sweeps, the LISTEN session's
 * heartbeat (its stall check measures the real event loop) and reconnect backoff (db/notifier.ts),
 * the ws keep-alive and a socket's other leashes (http/ws-adapter.ts: a refused socket's linger,
 * and the connection_init wait, graphql-ws's own timer), the description workers' timeout (a
 * worker's own budget, openapi/pool.ts), and PostgreSQL's `lock_timeout`/`statement_timeout` (the
 * database's clock; their length comes from this one). So does a new turn-events watch's settle:
 * it waits on other sessions' transactions in PostgreSQL (db/notifier.ts).
 * undici's own socket timers (connect, keep-alive) are not ours either. (pure)
 */

/** A timer set on a clock: `unref` lets the process exit while it is pending. */
export interface ClockTimer {
  unref(): unknown;
}

export interface Clock {
  /** Wall time in epoch ms, as `Date.now()`: timestamps, windows, expiries. */
  now(): number;
  /** Monotonic ms, as `performance.now()`: durations and deadlines. */
  monotonic(): number;
  /** Calls `fn` once, `ms` from now on this clock. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | undefined): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout> | undefined),
};

/** A `Date` of the clock's wall time. */
export function dateOf(clock: Clock): Date {
  return new Date(clock.now());
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts first. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An `AbortSignal` that aborts `ms` from now on `clock` with a `TimeoutError` (or `reason()`), as
 * `AbortSignal.timeout(ms)` does on real time. `cancel` clears the timer when the work ends first.
 */
export function timeoutSignalOn(
  clock: Clock,
  ms: number,
  reason: () => unknown = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
): { signal: AbortSignal; cancel(): void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(reason()), ms);
  timer.unref();
  return { signal: controller.signal, cancel: () => clock.clearTimeout(timer) };
}
