/**
 * Waiting for a condition, not for time: `check` is tried again after each turn of the event loop
 * (and each short poll, for conditions that need I/O to change) until it holds. There is no local
 * deadline: the test's own timeout bounds the wait, so a slow machine is slower, never red.
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, pollMs = 5): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, pollMs));
}
