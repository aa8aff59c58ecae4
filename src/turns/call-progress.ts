/**
 * A call's progress for the live debugger (I/O): server notifications become CALL_PROGRESS events,
 * bounded by `ProgressGate` (see progress.ts), written in order after the call's CALL_STARTED and
 * before its CALL_FINISHED. Writing is best effort: a failure is logged and never reaches the call.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { eventNotifySql } from '../db/notifier.js';
import type { Logger } from '../logger.js';
import type { ServerNotification } from '../mcp/client.js';
import { storableJson } from './storable.js';
import {
  ProgressGate,
  toProgressLine,
  type ProgressLimits,
  type ProgressLine,
  type ProgressRecord,
} from './progress.js';

const PROGRESS_SQL = `
with e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  values (?, ?, ?, ?, ?, 'CALL_PROGRESS', ?::jsonb, now())
  returning seq, workspace_id
)
select ${eventNotifySql('e')} from e`;

export interface CallIdentity {
  workspaceId: string;
  assistantId: string;
  conversationId: string;
  turnId: string;
  callId: string;
  name: string;
}

export class CallProgress {
  readonly #gate: ProgressGate;
  /** When the call began, in ms of `now`: each line's `atMs` counts from it. */
  readonly #started: number;
  #chain: Promise<void> = Promise.resolve();
  /**
   * Who else hears the call's PROGRESS lines, as they come (before the recording's interval): the
   * MCP endpoint passes them on to a client that gave a progressToken. Null: nobody.
   */
  listener: ((line: ProgressLine) => void) | null = null;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly call: CallIdentity,
    /**
     * The call's seq in its turn, once CALL_STARTED is stored (null: the turn had finished or its
     * start could not be stored). Asked for at the first progress line: a READ's start may be held
     * back until then (READ_START_HOLD_MS).
     */
    private readonly seq: () => Promise<number | null>,
    limits: ProgressLimits = {},
    /** Monotonic ms: the call path passes its clock's (TurnDeps.clock, src/clock.ts). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#gate = new ProgressGate(limits);
    this.#started = now();
  }

  /**
   * The hook for one call. `scrub` removes the connection's secrets; it is given per notification
   * because the secrets a call sends are known only once it has sent them.
   */
  receive(notification: ServerNotification, scrub: (text: string) => string): void {
    const atMs = Math.round(this.now() - this.#started);
    const line = toProgressLine(notification, atMs, scrub);
    if (!line) return;
    if (this.listener !== null && line.kind === 'PROGRESS') this.listener(line);
    if (!this.#gate.offer(line, this.now())) return;
    this.#emit(line);
  }

  #emit(line: ProgressLine): void {
    const seqP = this.seq(); // at once: the call's start is written now if it was held back
    this.#chain = this.#chain.then(async () => {
      try {
        const seq = await seqP;
        if (seq === null) return;
        const c = this.call;
        await this.orm.em
          .getConnection()
          .execute(PROGRESS_SQL, [
            c.workspaceId,
            c.assistantId,
            c.conversationId,
            c.turnId,
            c.callId,
            storableJson({ seq, name: c.name, progress: line }),
          ]);
      } catch (err) {
        this.logger.warn({ err, turnId: this.call.turnId }, 'could not record the progress of a call');
      }
    });
  }

  /**
   * Sends the last line the interval held back, then waits for the progress events under way, so
   * that CALL_FINISHED comes after them.
   */
  drain(): Promise<void> {
    const held = this.#gate.takeHeld();
    if (held) this.#emit(held);
    return this.#chain;
  }

  record(): ProgressRecord {
    return this.#gate.record();
  }
}
