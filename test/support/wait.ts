/**
 * Waiting for a condition, not for time: `check` is tried again after each turn of the event loop
 * (and each short poll, for conditions that need I/O to change) until it holds. There is no local
 * deadline: the test's own timeout bounds the wait, so a slow machine is slower, never red.
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, pollMs = 5): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, pollMs));
}

/**
 * Runs `work`, counting the event loop's turns during which `running()` held. Work done on this
 * thread holds the loop for as long as it runs, so it lets no turn be counted; work done on another
 * thread (a worker) leaves the loop turning. A fact about where the work ran, not about its speed.
 */
export async function turnsWhile<T>(
  running: () => boolean,
  work: () => Promise<T>,
): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    if (running()) turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    done = true;
  }
}
