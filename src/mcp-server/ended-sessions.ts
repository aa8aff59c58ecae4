/**
 * MCP sessions ended by their `DELETE` (I/O), so that the next request with that `Mcp-Session-Id`
 * gets 404 on every instance (the transport spec's "initialize again"), although a session id is
 * signed and self-contained (protocol.ts).
 *
 * - An ended session is a row of `mcp_session_end` (its random key) and a signal on the auth
 *   channel, which every instance always listens to (as a token's revocation).
 * - Each instance remembers the keys it has checked, ended or not (bounded, oldest first out). A
 *   key it knows costs no SQL, so a session's hot `tools/call`s add no round trip; a key it has not
 *   seen (a session begun elsewhere, an instance just started) costs one lookup, once.
 * - While the LISTEN connection is down nothing remembered is trusted (every check reads the
 *   table), and when it comes back everything remembered is forgotten: a signal may have been missed.
 */
import type { Connection } from '@mikro-orm/postgresql';
import { Notifier } from '../db/notifier.js';

const ENDED_SQL = `select 1 as ended from mcp_session_end where session_key = ?`;
const END_SQL = `insert into mcp_session_end (session_key, token_id) values (?, ?) on conflict do nothing`;

export class EndedSessions {
  /** Session key: whether it has ended. */
  readonly #known = new Map<string, boolean>();
  readonly #stops: (() => void)[] = [];

  constructor(
    private readonly sql: () => Pick<Connection, 'execute'>,
    private readonly notifier: Pick<Notifier, 'healthy' | 'onSessionEnded' | 'onReset'>,
    private readonly max: number,
  ) {
    this.#stops.push(
      notifier.onSessionEnded((s) => this.#remember(s.sessionEnded, true)),
      notifier.onReset(() => this.#known.clear()),
    );
  }

  close(): void {
    for (const stop of this.#stops) stop();
    this.#known.clear();
  }

  async isEnded(key: string): Promise<boolean> {
    const known = this.notifier.healthy ? this.#known.get(key) : undefined;
    if (known !== undefined) return known;
    const rows = await this.sql().execute<{ ended: number }[]>(ENDED_SQL, [key]);
    const ended = rows.length > 0;
    // A signal that arrived during the lookup wins over what the lookup read before it.
    if (this.#known.get(key) !== true) this.#remember(key, ended);
    return ended;
  }

  /** Ends the session here at once, and on the other instances when the signal reaches them. */
  async end(key: string, tokenId: string): Promise<void> {
    this.#remember(key, true);
    const sql = this.sql();
    await sql.execute(END_SQL, [key, tokenId]);
    await Notifier.publishSessionEnded(sql, { sessionEnded: key });
  }

  #remember(key: string, ended: boolean): void {
    this.#known.delete(key);
    if (this.#known.size >= this.max) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(key, ended);
  }
}
