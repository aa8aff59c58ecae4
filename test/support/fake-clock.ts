/**
 * A clock that moves only when a test says so (src/clock.ts). Pass it to `startTestApp({ clock })`
 * (or to a module's deps); `advance(ms)` moves wall and monotonic time together and fires every
 * timer that falls due, in order, letting promises settle between timers. Tests that used to sleep
 * through a budget, a retry pause or a window wait instead until the service has set its timer
 * (`waitForTimers`), then advance past it.
 */
import type { Clock, ClockTimer } from '../../src/clock.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #wall: number;
  #mono = 1_000;
  #seq = 0;
  readonly #timers = new Map<ClockTimer, Pending>();

  constructor(startWallMs = Date.parse('2026-12-03T09:00:00.000Z')) {
    this.#wall = startWallMs;
  }

  now(): number {
    return this.#wall;
  }

  monotonic(): number {
    return this.#mono;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: ClockTimer = { unref: () => timer };
    this.#timers.set(timer, { at: this.#mono + Math.max(0, ms), seq: this.#seq++, fn });
    return timer;
  }

  clearTimeout(timer: ClockTimer | undefined): void {
    if (timer) this.#timers.delete(timer);
  }

  /** How many timers are set and not yet fired or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time on by `ms`, firing each timer due on the way at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.#mono + ms;
    for (;;) {
      await settle();
      const next = this.#next();
      if (next === null || next[1].at > end) break;
      const [timer, due] = next;
      this.#timers.delete(timer);
      this.#wall += due.at - this.#mono;
      this.#mono = due.at;
      due.fn();
    }
    this.#wall += end - this.#mono;
    this.#mono = end;
    await settle();
  }

  /** Waits (on real time, briefly polling) until at least `count` timers are set. */
  async waitForTimers(count = 1): Promise<void> {
    while (this.#timers.size < count) await new Promise((r) => setTimeout(r, 2));
  }

  #next(): [ClockTimer, Pending] | null {
    let best: [ClockTimer, Pending] | null = null;
    for (const entry of this.#timers) {
      const p = entry[1];
      if (best === null || p.at < best[1].at || (p.at === best[1].at && p.seq < best[1].seq)) best = entry;
    }
    return best;
  }
}

/** Lets pending promise callbacks and I/O callbacks already queued run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}
