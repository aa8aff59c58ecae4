/**
 * In-process admission for discovery's database work (pure: no I/O, no clock).
 *
 * Concurrent discoveries of one connection must serialise on the connection's row lock. Left to
 * the database, every waiter holds a pool connection while it waits for the lock, so a burst of
 * runs on one connection could take the whole pool and starve everyone else (the holder included,
 * if it ever needed a second connection). So a run first waits HERE, holding nothing:
 *
 * - per key (the connection id), one task at a time, in arrival order;
 * - across keys, at most `limit` tasks at once, so discovery never takes more than `limit` pool
 *   connections and the rest of the service (requests, /readyz) always has some left.
 *
 * The row lock stays: it is what serialises runs across instances. Here it is only ever waited for
 * by one task per connection per instance.
 */

/** Raised to a waiter whose signal fired before its turn came; its task never runs. */
export class AdmissionAbortedError extends Error {
  override readonly name = 'AdmissionAbortedError';
}

interface Waiter {
  key: string;
  start: () => void;
  abandoned: boolean;
}

export class KeyedSerial {
  readonly #busyKeys = new Set<string>();
  readonly #queue: Waiter[] = [];
  #running = 0;

  /** @param limit most tasks running at once across all keys (at least 1). */
  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a whole number ≥ 1');
  }

  /** Tasks running now (for tests and metrics). */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting for their turn (for tests and metrics). */
  get waiting(): number {
    return this.#queue.filter((w) => !w.abandoned).length;
  }

  /**
   * Runs `task` when no other task of `key` runs and a slot is free. If `signal` fires first, the
   * task is dropped and this rejects with the signal's reason (or an AdmissionAbortedError).
   */
  async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#admit(key, signal);
    try {
      return await task();
    } finally {
      this.#running -= 1;
      this.#busyKeys.delete(key);
      this.#pump();
    }
  }

  /** Resolves once the task of `key` holds its key and a slot. */
  #admit(key: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const abortReason = (): Error =>
        signal?.reason instanceof Error
          ? signal.reason
          : new AdmissionAbortedError('the task was abandoned before its turn');
      if (signal?.aborted) return reject(abortReason());
      const waiter: Waiter = {
        key,
        abandoned: false,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#running += 1;
          this.#busyKeys.add(key);
          resolve();
        },
      };
      const onAbort = (): void => {
        waiter.abandoned = true;
        reject(abortReason());
        this.#pump();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  #pump(): void {
    for (let i = 0; i < this.#queue.length && this.#running < this.limit;) {
      const w = this.#queue[i]!;
      if (w.abandoned) {
        this.#queue.splice(i, 1);
        continue;
      }
      if (this.#busyKeys.has(w.key)) {
        i += 1;
        continue;
      }
      this.#queue.splice(i, 1);
      w.start();
    }
  }
}
