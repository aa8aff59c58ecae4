import { describe, expect, it } from 'vitest';
import { leaseWant, maxWaitMs, sendBudgetMs, SlotPool, type Waiter } from '../../../src/guards/cap.js';

function waiter(log: string[], name: string): Waiter {
  return { settle: (granted) => log.push(`${name}:${granted}`) };
}

describe('concurrency caps (pure)', () => {
  it('should wait at most the stated time and never more than half the budget', () => {
    expect(maxWaitMs({ maxInFlight: 1, maxWaitMs: 1000 }, 10_000)).toBe(1000);
    expect(maxWaitMs({ maxInFlight: 1, maxWaitMs: 5000 }, 4000)).toBe(2000);
    expect(maxWaitMs({ maxInFlight: 1, maxWaitMs: 0 }, 10_000)).toBe(0);
    // The send gets what is left: wait + send never exceed the budget.
    expect(sendBudgetMs(4000, 2000)).toBe(2000);
    expect(sendBudgetMs(4000, 0)).toBe(4000);
    expect(sendBudgetMs(100, 500)).toBe(1);
  });

  it('should lease a chunk, never past the cap', () => {
    expect(leaseWant({ maxInFlight: 100, maxWaitMs: 0 }, 0, 0)).toBe(10);
    expect(leaseWant({ maxInFlight: 100, maxWaitMs: 0 }, 95, 0)).toBe(5);
    expect(leaseWant({ maxInFlight: 100, maxWaitMs: 0 }, 0, 30)).toBe(30);
    expect(leaseWant({ maxInFlight: 3, maxWaitMs: 0 }, 0, 0)).toBe(1);
    expect(leaseWant({ maxInFlight: 3, maxWaitMs: 0 }, 3, 5)).toBe(0);
  });

  it('should spend held slots, serve the line in order, and keep a freed slot as a spare', () => {
    const pool = new SlotPool({ maxInFlight: 2, maxWaitMs: 1000 });
    expect(pool.tryTake()).toBe(false); // nothing held yet
    pool.setHeld(1);
    expect(pool.tryTake()).toBe(true);
    expect(pool.tryTake()).toBe(false);
    const log: string[] = [];
    const [a, b, c] = [waiter(log, 'a'), waiter(log, 'b'), waiter(log, 'c')];
    pool.enqueue(a);
    pool.enqueue(b);
    pool.enqueue(c);
    pool.setHeld(2); // one more slot: the head of the line
    expect(log).toEqual(['a:true']);
    expect(pool.leave(b)).toBe(true); // b's time ran out
    expect(pool.leave(a)).toBe(false); // a was served already
    pool.release();
    expect(log).toEqual(['a:true', 'c:true']);
    expect(pool.inFlight).toBe(2);
    pool.release();
    pool.release();
    expect(pool.spare).toBe(2);
    expect(pool.tryTake()).toBe(true);
    pool.setHeld(0); // the lease shrank under the calls: no new call starts
    expect(pool.tryTake()).toBe(false);
  });

  it('should let the waiters of a removed cap go ahead', () => {
    const pool = new SlotPool({ maxInFlight: 1, maxWaitMs: 1000 });
    const log: string[] = [];
    pool.enqueue(waiter(log, 'a'));
    pool.drain(true);
    expect(log).toEqual(['a:true']);
    expect(pool.waiting).toBe(0);
  });
});
