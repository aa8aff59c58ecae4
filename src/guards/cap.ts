/**
 * Concurrency caps (pure; issue 29): the most calls in flight at once for an operation or a
 * connection, counted across every instance. No clock is read and nothing waits here: the guard
 * (call-guard.ts) brings the time and the timers, the store (cap-store.ts) the shared slots.
 *
 * Each instance holds some of a cap's slots, leased from PostgreSQL (`call_cap_lease`), and spends
 * them in memory: a call takes a held slot if one is free (no statement), else the instance asks
 * for more, and if the cap has none left the call waits in this instance's line (first come, first
 * served) until a slot comes free here or another instance gives some back. A finished call's slot
 * goes to the head of the line first; with nobody waiting the instance keeps it as a spare (so the
 * next call runs no statement) until another instance asks for slots or it sits unused a lease
 * period. Together the instances never hold more than the cap (the lease statement grants only what
 * the others' live leases leave), so never more calls are in flight than the cap.
 */
export type CapScope = 'CONNECTION' | 'OPERATION';

/** Leases not renewed for this long stop counting: a dead instance's slots come back. */
export const DEFAULT_CAP_LEASE_TTL_MS = 15_000; // 15 seconds
/** The default longest wait in line for a slot. */
export const DEFAULT_CAP_WAIT_MS = 1_000; // 1 second
/** The longest wait an operator may set. */
export const MAX_CAP_WAIT_MS = 5_000; // 5 seconds
/** The largest cap. */
export const MAX_IN_FLIGHT = 10_000;
/** A lease asks for at most this share of the cap at once (at least one slot). */
export const CAP_CHUNK_SHARE = 0.1;

export interface CapSpec {
  maxInFlight: number;
  maxWaitMs: number;
}

/**
 * How long a call over the cap may wait in line: the cap's stated wait, and never more than half
 * the call's budget. The wait counts against the budget: the send then gets what is left of it
 * (`sendBudgetMs`, at least the other half), so a call, a WRITE above all, never waits longer than
 * its budget allows for its own send, and is never sent after its budget. Whole ms, ≥ 0.
 */
export function maxWaitMs(spec: CapSpec, budgetMs: number): number {
  return Math.max(0, Math.min(spec.maxWaitMs, Math.floor(budgetMs / 2)));
}

/** What is left of a call's budget for its send after waiting `waitedMs` in line (≥ 1 ms). */
export function sendBudgetMs(budgetMs: number, waitedMs: number): number {
  return Math.max(1, Math.floor(budgetMs - Math.max(0, waitedMs)));
}

/** How many more slots to ask for when `waiting` calls want one (one chunk at least, never past the cap). */
export function leaseWant(spec: CapSpec, held: number, waiting: number): number {
  const chunk = Math.max(1, Math.floor(spec.maxInFlight * CAP_CHUNK_SHARE));
  return Math.max(0, Math.min(spec.maxInFlight - held, Math.max(chunk, waiting)));
}

/** One call in line. `settle` is called once: true with a slot taken for it, false when it gave up. */
export interface Waiter {
  settle(granted: boolean): void;
}

/**
 * One cap as one instance sees it: the slots it holds, the calls in flight, and its line. Every
 * method is synchronous and settles waiters in line order; the I/O around it lives in the guard.
 */
export class SlotPool {
  /** Slots this instance holds (its lease). */
  held = 0;
  /** Calls of this instance that hold a slot now. */
  inFlight = 0;
  /** Calls started since the last `idleSince` look: a pool with none keeps no spares. */
  used = false;
  readonly #line: Waiter[] = [];

  constructor(public spec: CapSpec) {}

  get waiting(): number {
    return this.#line.length;
  }

  /** Held slots no call uses and nobody waits for. */
  get spare(): number {
    return Math.max(0, this.held - this.inFlight);
  }

  /** Takes a free held slot, unless calls are already waiting (they come first). */
  tryTake(): boolean {
    if (this.#line.length > 0 || this.inFlight >= this.held) return false;
    this.inFlight++;
    this.used = true;
    return true;
  }

  /** Puts a call at the end of the line. */
  enqueue(waiter: Waiter): void {
    this.#line.push(waiter);
  }

  /** A waiter that gave up (its time ran out): out of the line; false if it had been served already. */
  leave(waiter: Waiter): boolean {
    const i = this.#line.indexOf(waiter);
    if (i < 0) return false;
    this.#line.splice(i, 1);
    return true;
  }

  /** The lease now holds `held` slots: free ones go to the line, in order. */
  setHeld(held: number): void {
    this.held = Math.max(0, held);
    this.#serve();
  }

  /** A call finished: its slot goes to the head of the line, or stays a spare. */
  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.#serve();
  }

  /** Gives up every waiter (the cap was removed): they go ahead without a slot. */
  drain(granted: boolean): Waiter[] {
    const all = this.#line.splice(0);
    for (const w of all) w.settle(granted);
    return all;
  }

  #serve(): void {
    while (this.#line.length > 0 && this.inFlight < this.held) {
      const w = this.#line.shift()!;
      this.inFlight++;
      this.used = true;
      w.settle(true);
    }
  }
}
