/**
 * Measures taken inside the debugger page (page clock), shared by
 * `test/integration/browser/debugger-thousand.test.ts` and `bench/debugger.bench.ts`.
 */
import type { Page } from 'playwright-core';

type Win = {
  document: { querySelectorAll(s: string): { length: number } };
  performance: { now(): number };
  requestAnimationFrame(cb: () => void): void;
};

/** Milliseconds (page clock) until `selector` matches `count` elements and a frame was painted. */
export function shown(page: Page, selector: string, count: number, timeout = 60_000): Promise<number> {
  return page.evaluate(
    ({ selector, count, timeout }) =>
      new Promise<number>((resolve, reject) => {
        const w = globalThis as unknown as Win;
        const start = w.performance.now();
        const check = () => {
          if (w.document.querySelectorAll(selector).length === count)
            return w.requestAnimationFrame(() => resolve(w.performance.now() - start));
          if (w.performance.now() - start > timeout)
            return reject(new Error(`${selector} never reached ${count}`));
          setTimeout(check, 10);
        };
        check();
      }),
    { selector, count, timeout },
  );
}

/** Time (page clock) for one scroll to the bottom and back to be painted. */
export function scrollFrame(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const w = globalThis as unknown as Win & {
          scrollTo(x: number, y: number): void;
          document: { body: { scrollHeight: number } };
        };
        const start = w.performance.now();
        w.scrollTo(0, w.document.body.scrollHeight);
        w.requestAnimationFrame(() => {
          w.scrollTo(0, w.document.body.scrollHeight / 2);
          w.requestAnimationFrame(() => resolve(w.performance.now() - start));
        });
      }),
  );
}

/** Adds up main-thread tasks over 50 ms (long tasks): the page must stay responsive. */
export function busyMeter(): void {
  const g = globalThis as unknown as {
    __busy: number;
    PerformanceObserver: new (cb: (l: { getEntries(): { duration: number }[] }) => void) => {
      observe(o: object): void;
    };
  };
  g.__busy = 0;
  new g.PerformanceObserver((list) => {
    for (const e of list.getEntries()) g.__busy += e.duration;
  }).observe({ type: 'longtask' });
}

export const busy = (page: Page) => page.evaluate(() => (globalThis as unknown as { __busy: number }).__busy);
