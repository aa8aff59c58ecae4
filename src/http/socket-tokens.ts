/**
 * The API token behind each accepted WebSocket, so that a socket does not outlive its token: a
 * revocation (NOTIFY, by token id) closes its sockets at once, and `recheck` — run every
 * `TOKEN_RECHECK_MS` — closes those whose token expired or was revoked without a NOTIFY arriving.
 */

/** The close code and reason of a socket whose token is no longer valid. */
export const TOKEN_INVALID_CLOSE_CODE = 4403;
export const TOKEN_INVALID_CLOSE_REASON = 'Forbidden: the API token is no longer valid';

export interface ClosableSocket {
  close(code: number, reason: string): void;
}

export class SocketTokens {
  readonly #held = new Map<ClosableSocket, { token: string; tokenId: string }>();
  /** Whether a token is still valid; a rejection counts as "don't know" (the socket stays). */
  readonly #isValid: (token: string) => Promise<boolean>;

  constructor(isValid: (token: string) => Promise<boolean>) {
    this.#isValid = isValid;
  }

  add(socket: ClosableSocket, token: string, tokenId: string): void {
    this.#held.set(socket, { token, tokenId });
  }

  delete(socket: ClosableSocket): void {
    this.#held.delete(socket);
  }

  /** A token was revoked: its sockets are closed now. */
  revoked(tokenId: string): void {
    for (const [socket, held] of this.#held) {
      if (held.tokenId === tokenId) this.#close(socket);
    }
  }

  /** Checks every socket's token again and closes those no longer valid; resolves when all are checked. */
  async recheck(): Promise<void> {
    await Promise.all(
      [...this.#held].map(([socket, { token }]) =>
        this.#isValid(token).then(
          (valid) => {
            if (!valid) this.#close(socket);
          },
          () => undefined,
        ),
      ),
    );
  }

  /** Runs `recheck` every `intervalMs` (the timer does not keep the process alive); returns the stop. */
  recheckEvery(intervalMs: number): () => void {
    const timer = setInterval(() => void this.recheck(), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  #close(socket: ClosableSocket): void {
    this.#held.delete(socket);
    socket.close(TOKEN_INVALID_CLOSE_CODE, TOKEN_INVALID_CLOSE_REASON);
  }
}
