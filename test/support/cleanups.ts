/**
 * Clean-up lists for tests: what a test (or a helper) starts, it pushes a closer for, and the list
 * runs them last-in first-out, each awaited, so a client closes before the server it talks to.
 */
import { afterEach } from 'vitest';

/** Where a helper leaves its closer: a {@link Cleanups} list, or a plain array of steps a file runs itself. */
export interface CleanupSink {
  push(step: () => Promise<void>): unknown;
}

export class Cleanups implements CleanupSink {
  readonly #steps: (() => Promise<void> | void)[] = [];

  /** Adds a step; it runs before every step pushed earlier. */
  push(step: () => Promise<void> | void): void {
    this.#steps.push(step);
  }

  /** Runs and forgets every step, newest first. */
  async run(): Promise<void> {
    for (const step of this.#steps.splice(0).reverse()) await step();
  }
}

/** A clean-up list that runs after each test of the file that calls this (at its top level). */
export function cleanupAfterEach(): Cleanups {
  const cleanups = new Cleanups();
  afterEach(() => cleanups.run());
  return cleanups;
}
