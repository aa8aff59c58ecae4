/**
 * A small pool of worker threads that parse and convert descriptions (`convert-job.ts`), so that
 * a large or hostile description never stalls the event loop: health checks, tool calls and
 * every other request keep being answered while it converts.
 *
 * - Plain data crosses the boundary: the text and two addresses in, the conversion out.
 * - Each job has a time limit; past it the worker is terminated (the only way to stop a
 *   synchronous parse) and the job fails with `DESCRIPTION_TOO_COMPLEX`. A worker that runs out
 *   of its memory limit fails its job the same way. A new worker replaces it for the next job.
 * - Workers start on first use, are kept for the next job, and never keep the process alive.
 *
 * Error codes (all `AppError`):
 * - `DESCRIPTION_TOO_COMPLEX`: the job ran past `timeoutMs` or past the worker's memory limit.
 * - `DESCRIPTION_INVALID`, `DESCRIPTION_TOO_LARGE`, `BASE_URL_INVALID`, `BASE_URL_MISSING`: from
 *   the parser and converter, unchanged.
 * - `DESCRIPTION_POOL_CLOSED`: the pool was closed (shutdown) before the job finished.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors.js';
import type { ConvertedDescription, ConvertJob, JobOutcome } from './convert-job.js';
import { type DescriptionSource, type LoadDeps, readDescriptionText } from './load.js';

export const DEFAULT_DESCRIPTION_WORKERS = 1;
export const DEFAULT_DESCRIPTION_TIMEOUT_MS = 20_000; // 20 seconds per description
/** Heap of one worker: a 5 MiB description parses into far less; an alias bomb does not. */
export const DEFAULT_WORKER_MEMORY_MB = 512;

export interface DescriptionPoolOptions {
  /** Worker threads, each converting one description at a time. */
  size?: number;
  /** Time limit of one job, from the moment a started worker takes it. */
  timeoutMs?: number;
  memoryMb?: number;
}

interface Job {
  id: number;
  job: ConvertJob;
  resolve: (value: ConvertedDescription) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

type WorkerMessage = { ready: true } | { id: number; outcome: JobOutcome };

/**
 * The worker's entry for each way this code runs: compiled (`dist/`), the sibling `.js`; from the
 * TypeScript sources (tsx, vitest), `convert.worker.mjs`, which registers tsx in the worker first.
 */
function spawn(memoryMb: number): Worker {
  const compiled = import.meta.url.endsWith('.js');
  const entry = new URL(compiled ? './convert.worker.js' : './convert.worker.mjs', import.meta.url);
  // `execArgv: []`: tsx's own flags, when the parent has them, would register it a second time.
  return new Worker(entry, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: memoryMb } });
}

export class DescriptionPool {
  readonly #size: number;
  readonly #timeoutMs: number;
  readonly #memoryMb: number;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: DescriptionPoolOptions = {}) {
    const {
      size = DEFAULT_DESCRIPTION_WORKERS,
      timeoutMs = DEFAULT_DESCRIPTION_TIMEOUT_MS,
      memoryMb = DEFAULT_WORKER_MEMORY_MB,
    } = options;
    this.#size = Math.max(1, size);
    this.#timeoutMs = timeoutMs;
    this.#memoryMb = memoryMb;
  }

  /** Reads a description (fetching it on this thread, through `deps`), then parses and converts it on a worker. */
  async load(
    source: DescriptionSource,
    deps: LoadDeps,
    baseUrl: string | null,
  ): Promise<ConvertedDescription & { url: string | null }> {
    const { text, url } = await readDescriptionText(source, deps);
    const converted = await this.convert({ text, descriptionUrl: url, baseUrl });
    return { ...converted, url };
  }

  /** Parses and converts description text on a worker, within the time limit. */
  convert(job: ConvertJob): Promise<ConvertedDescription> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, job, resolve, reject });
      this.#pump();
    });
  }

  /** Workers now running (started or starting). */
  get workers(): number {
    return this.#slots.size;
  }

  /** Jobs a worker is converting now (taken, not yet answered). */
  get busy(): number {
    return [...this.#slots].filter((s) => s.job !== null).length;
  }

  /** Stops every worker; queued and running jobs fail with `DESCRIPTION_POOL_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(closedError());
    const slots = [...this.#slots];
    this.#slots.clear();
    await Promise.all(
      slots.map(async (slot) => {
        if (slot.timer !== null) clearTimeout(slot.timer);
        slot.job?.reject(closedError());
        slot.job = null;
        await slot.worker.terminate();
      }),
    );
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const free = [...this.#slots].find((s) => s.ready && s.job === null);
      if (free !== undefined) {
        this.#run(free, this.#queue.shift() as Job);
        continue;
      }
      const starting = [...this.#slots].filter((s) => !s.ready).length;
      if (this.#slots.size < this.#size && starting < this.#queue.length) this.#start();
      return;
    }
  }

  #start(): void {
    const worker = spawn(this.#memoryMb);
    worker.unref();
    const slot: Slot = { worker, ready: false, job: null, timer: null };
    this.#slots.add(slot);
    worker.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        slot.ready = true;
        this.#pump();
        return;
      }
      const job = slot.job;
      if (job === null || job.id !== message.id) return;
      this.#finish(slot);
      const { outcome } = message;
      if (outcome.ok) job.resolve(outcome.value);
      else if (outcome.code !== null) job.reject(new AppError(outcome.code, outcome.message));
      else job.reject(new Error(`converting the description failed: ${outcome.message}`));
      this.#pump();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const job = slot.job;
      this.#discard(slot);
      if (job !== null) {
        job.reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new AppError(
                'DESCRIPTION_TOO_COMPLEX',
                `The description needs more than ${this.#memoryMb} MB to convert; it was refused.`,
              )
            : new Error('the description worker failed', { cause: err }),
        );
      } else {
        // A worker that cannot start fails the jobs waiting for it rather than leave them hanging.
        for (const waiting of this.#queue.splice(0))
          waiting.reject(new Error('the description worker could not start', { cause: err }));
      }
      this.#pump();
    });
    worker.on('exit', () => {
      if (!this.#slots.has(slot)) return;
      const job = slot.job;
      this.#discard(slot);
      job?.reject(new Error('the description worker stopped'));
      this.#pump();
    });
  }

  #run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => {
      this.#discard(slot);
      job.reject(
        new AppError(
          'DESCRIPTION_TOO_COMPLEX',
          `The description took longer than ${this.#timeoutMs} ms to parse and convert; it was refused.`,
        ),
      );
      this.#pump();
    }, this.#timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id: job.id, job: job.job });
  }

  #finish(slot: Slot): void {
    if (slot.timer !== null) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
  }

  /** Forgets a worker and stops it; its job, if any, is the caller's to settle. */
  #discard(slot: Slot): void {
    this.#finish(slot);
    if (!this.#slots.delete(slot)) return;
    void slot.worker.terminate();
  }
}

function closedError(): AppError {
  return new AppError(
    'DESCRIPTION_POOL_CLOSED',
    'The service is shutting down; the description was not read.',
  );
}
