/**
 * The time the call path reads and waits on (issue 30, item 3). Production runs on `systemClock`;
 * a test passes its own (test/support/fake-clock.ts) to `startApp({ clock })` and moves time on by
 * hand, so nothing waits a real budget, retry pause or window out. It is injected the way the MCP
 * SDK injects `fetch`: every module of the call path that reads the time or sets a timer takes a
 * `Clock` from its deps instead of calling `Date.now`, `performance.now` or `setTimeout` itself.
 *
 * Timers that pace background work (sweeps, heartbeats, keep-alives) may stay on real time: they
 * decide nothing a caller waits on. (pure)
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
 * An `AbortSignal` that aborts `ms` from now on `clock` with a `TimeoutError`, as
 * `AbortSignal.timeout(ms)` does on real time. `cancel` clears the timer when the work ends first.
 */
export function timeoutSignalOn(clock: Clock, ms: number): { signal: AbortSignal; cancel(): void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(() => {
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  timer.unref();
  return { signal: controller.signal, cancel: () => clock.clearTimeout(timer) };
}
