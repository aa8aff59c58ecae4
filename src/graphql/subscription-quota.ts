/**
 * How many subscriptions may be open at once on this instance, per API token and per socket
 * (pure bookkeeping; the WebSocket server acquires on subscribe and releases on complete or close).
 */

/** Why a subscription was refused. */
export type QuotaRefusal = 'PER_TOKEN' | 'PER_SOCKET';

export class SubscriptionQuota<Socket> {
  readonly #byToken = new Map<string, number>();
  /** socket → operation id → token id */
  readonly #bySocket = new Map<Socket, Map<string, string>>();

  constructor(
    readonly perToken: number,
    readonly perSocket: number,
  ) {}

  /** Takes a slot for operation `id` on `socket`, or says which cap refuses it. */
  acquire(tokenId: string, socket: Socket, id: string): QuotaRefusal | null {
    const open = this.#bySocket.get(socket) ?? new Map<string, string>();
    if (open.has(id)) return null;
    if (open.size >= this.perSocket) return 'PER_SOCKET';
    const count = this.#byToken.get(tokenId) ?? 0;
    if (count >= this.perToken) return 'PER_TOKEN';
    open.set(id, tokenId);
    this.#bySocket.set(socket, open);
    this.#byToken.set(tokenId, count + 1);
    return null;
  }

  release(socket: Socket, id: string): void {
    const open = this.#bySocket.get(socket);
    const tokenId = open?.get(id);
    if (!open || tokenId === undefined) return;
    open.delete(id);
    if (open.size === 0) this.#bySocket.delete(socket);
    const left = (this.#byToken.get(tokenId) ?? 1) - 1;
    if (left > 0) this.#byToken.set(tokenId, left);
    else this.#byToken.delete(tokenId);
  }

  releaseSocket(socket: Socket): void {
    for (const id of [...(this.#bySocket.get(socket)?.keys() ?? [])]) this.release(socket, id);
  }

  openFor(tokenId: string): number {
    return this.#byToken.get(tokenId) ?? 0;
  }
}
