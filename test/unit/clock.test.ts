import { describe, expect, it } from 'vitest';
import { sleepOn, systemClock, timeoutSignalOn } from '../../src/clock.js';
import { FakeClock } from '../support/fake-clock.js';

describe('the call path clock', () => {
  it('should fire fake timers in due order only as time is advanced, moving wall and monotonic time together', async () => {
    const clock = new FakeClock(1_000_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.monotonic()}`), 200);
    clock.setTimeout(() => fired.push(`a@${clock.monotonic()}`), 100);
    const cleared = clock.setTimeout(() => fired.push('never'), 150);
    clock.clearTimeout(cleared);
    const mono = clock.monotonic();
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(150);
    expect(fired).toEqual([`a@${mono + 100}`, `b@${mono + 200}`]);
    expect(clock.monotonic()).toBe(mono + 249);
    expect(clock.now()).toBe(1_000_249);
    expect(clock.pending).toBe(0);
  });

  it('should fire a timer set by a timer that falls within the same advance', async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    const start = clock.monotonic();
    clock.setTimeout(() => clock.setTimeout(() => at.push(clock.monotonic() - start), 50), 50);
    await clock.advance(100);
    expect(at).toEqual([100]);
  });

  it('should sleep on the clock and stop sleeping when the signal aborts', async () => {
    const clock = new FakeClock();
    let woke = false;
    const sleeping = sleepOn(clock, 1_000).then(() => (woke = true));
    await clock.advance(999);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);

    const controller = new AbortController();
    const aborted = sleepOn(clock, 1_000, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(aborted).rejects.toThrow('cancelled');
    expect(clock.pending).toBe(0);
  });

  it('should abort a timeout signal with a TimeoutError at its time, and not once cancelled', async () => {
    const clock = new FakeClock();
    const t = timeoutSignalOn(clock, 10_000);
    await clock.advance(9_999);
    expect(t.signal.aborted).toBe(false);
    await clock.advance(1);
    expect((t.signal.reason as DOMException).name).toBe('TimeoutError');

    const c = timeoutSignalOn(clock, 10);
    c.cancel();
    await clock.advance(100);
    expect(c.signal.aborted).toBe(false);
  });

  it('should read real time from the system clock', async () => {
    const before = Date.now();
    expect(systemClock.now()).toBeGreaterThanOrEqual(before);
    const t0 = systemClock.monotonic();
    await sleepOn(systemClock, 5);
    expect(systemClock.monotonic() - t0).toBeGreaterThanOrEqual(4);
  });
});
