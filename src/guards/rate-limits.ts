/**
 * Rate limits on this instance (I/O; issue 29, DESIGN.md rule 19): a token bucket per limit in
 * PostgreSQL (store.ts), of which this instance leases a few tokens at a time (bucket.ts) and
 * spends them in memory, so most calls under a limit run no statement. `CallGuard` asks `spend`
 * before a call. When the database is unreachable, a limit fails closed for a WRITE (not sent)
 * and open for a READ (sent).
 */
import type { SqlRunner } from '../db/notifier.js';
import type { Logger } from '../logger.js';
import type { CachedOperation } from '../turns/tool-cache.js';
import { canSpend, emptyLease, nextLease, retryAfterMs, type Lease } from './bucket.js';
import { limitRefusal, uncheckedRefusal, type Refusal } from './refusals.js';
import { LimitStore, type LimitRecord } from './store.js';

/** A limit as this instance knows it, with its lease of tokens. */
export interface LimitEntry {
  record: LimitRecord;
  lease: Lease;
  /** Epoch ms: the shared bucket was empty, and refills a token no sooner than this. */
  emptyUntil: number;
  pending: Promise<void> | null;
}

export class RateLimits {
  /** Limits by connection id. */
  readonly #limits = new Map<string, LimitEntry[]>();
  readonly #store: LimitStore;

  constructor(
    sql: () => SqlRunner,
    private readonly logger: Logger,
    private readonly leaseTtlMs: number,
  ) {
    this.#store = new LimitStore(sql);
  }

  /** The limits of a connection, with their leases; undefined when it has none. */
  of(connectionId: string): LimitEntry[] | undefined {
    return this.#limits.get(connectionId);
  }

  /** The limits of a connection as this instance knows them. */
  records(connectionId: string): readonly LimitRecord[] {
    return (this.#limits.get(connectionId) ?? []).map((e) => e.record);
  }

  /** Spends a token of every limit the call falls under, or says which one refuses it. */
  async spend(
    op: CachedOperation,
    workspaceId: string,
    name: string,
    limits: LimitEntry[],
    now: number,
  ): Promise<Refusal | null> {
    const applies = limits.filter(
      ({ record: r }) =>
        r.scope === 'CONNECTION' ||
        (r.scope === 'OPERATION' && r.operationId === op.id) ||
        (r.scope === 'WORKSPACE' && r.forWorkspaceId === workspaceId),
    );
    const spend: LimitEntry[] = [];
    for (const entry of applies) {
      if (!canSpend(entry.lease, now, this.leaseTtlMs)) {
        if (entry.emptyUntil > now) return limitRefusal(op, name, entry.record, entry.emptyUntil - now);
        try {
          // Another call of this instance may be leasing already: share its statement, then look again.
          // Each lease doubles while they are spent at once, so eight cover a burst of 255 calls.
          for (
            let tries = 0;
            tries < 8 && !canSpend(entry.lease, now, this.leaseTtlMs) && entry.emptyUntil <= now;
            tries++
          )
            await (entry.pending ?? this.#lease(entry, now));
        } catch (err) {
          if (op.risk === 'WRITE') {
            this.logger.error(
              { err, limit: entry.record.id },
              'could not check a rate limit; the WRITE call was not made',
            );
            return uncheckedRefusal(name, entry.record.scope);
          }
          this.logger.warn(
            { err, limit: entry.record.id },
            'could not check a rate limit; the READ call goes ahead',
          );
          continue;
        }
        if (!this.#limits.get(op.connection.id)?.includes(entry)) continue; // removed meanwhile
        if (!canSpend(entry.lease, now, this.leaseTtlMs))
          return limitRefusal(op, name, entry.record, Math.max(1, entry.emptyUntil - now));
      }
      spend.push(entry);
    }
    for (const entry of spend) entry.lease.tokens--;
    return null;
  }

  #lease(entry: LimitEntry, now: number): Promise<void> {
    const { want, giveBack } = nextLease(entry.lease, now, this.leaseTtlMs, entry.record);
    entry.lease.tokens = 0;
    const p = this.#store
      .lease(entry.record.id, now, want, giveBack)
      .then((got) => {
        if (got === null) {
          void this.reload(entry.record.connectionId);
          return;
        }
        entry.lease = { tokens: got.granted, size: want, takenAt: now };
        entry.emptyUntil = got.granted === 0 ? now + retryAfterMs(got.available, entry.record) : 0;
      })
      .finally(() => {
        entry.pending = null;
      });
    entry.pending = p;
    return p;
  }

  /** Reloads a connection's limits (after a change, or its NOTIFY). */
  async reload(connectionId: string): Promise<void> {
    const records = await this.#store.loadConnection(connectionId);
    this.#set(connectionId, records);
  }

  /** Every stored limit, for `setAll`. */
  loadAll(): Promise<LimitRecord[]> {
    return this.#store.loadAll();
  }

  /** Replaces what this instance knows with `limits` (every stored one), keeping unchanged leases. */
  setAll(limits: LimitRecord[]): void {
    const byConnection = new Map<string, LimitRecord[]>();
    for (const l of limits) {
      const list = byConnection.get(l.connectionId) ?? [];
      list.push(l);
      byConnection.set(l.connectionId, list);
    }
    for (const id of this.#limits.keys()) if (!byConnection.has(id)) this.#limits.delete(id);
    for (const [id, list] of byConnection) this.#set(id, list);
  }

  /** Keeps the leases of limits that did not change. */
  #set(connectionId: string, records: LimitRecord[]): void {
    const old = this.#limits.get(connectionId) ?? [];
    if (records.length === 0) {
      this.#limits.delete(connectionId);
      return;
    }
    this.#limits.set(
      connectionId,
      records.map((record) => {
        const same = old.find(
          (e) =>
            e.record.id === record.id &&
            e.record.calls === record.calls &&
            e.record.periodMs === record.periodMs &&
            e.record.burst === record.burst,
        );
        return same ?? { record, lease: emptyLease(), emptyUntil: 0, pending: null };
      }),
    );
  }
}
