/**
 * One discovery run of one connection (I/O): read the source, reconcile, apply.
 *
 * - The source is read first, outside any transaction: no lock is held while a remote server
 *   takes its time.
 * - Then the plan is made and applied in ONE transaction, under a row lock on the connection, so
 *   concurrent runs of one connection serialize and each applies a complete plan.
 * - All or nothing (DESIGN.md rule 2): any failure, or a source with no operations, leaves every
 *   operation as it was. The run records the outcome either way.
 * - Never called from the turn path.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import { systemClock, timeoutSignalOn, type Clock } from '../clock.js';
import type { Principal } from '../auth/principal.js';
import { Connection, ConnectionKind, ConnectionStatus } from '../connections/connection.entity.js';
import { connectionSecrets } from '../connections/endpoint.js';
import { holdsFor, isKeyCredential } from '../connections/key-origins.js';
import { checkUrl } from '../http/url-policy.js';
import { makeScrubber, type Scrubber } from '../connections/scrub.js';
import { AppError } from '../errors.js';
import { Operation } from '../operations/operation.entity.js';
import { DiscoveryOutcome, DiscoveryRun, type DiscoveryTrigger } from './discovery-run.entity.js';
import { insertOperationChanges, operationsStamp, STAMP_SQL } from './operation-rows.js';
import { reconcile, type DiscoveredOperation, type ReviewReasonDraft } from './reconcile.js';
import { connectionSettings, descriptionFingerprintParts, listingFingerprintParts } from './fingerprint.js';
import { scrubListing } from './scrub-listing.js';
import { KeyedSerial } from './serial.js';
import { closeRun, readStored, writePlan } from './apply-plan.js';
import {
  convertOpenApi,
  readMcp,
  readOpenApiText,
  type DiscoveryDeps,
  type ReadSource,
  type SourceListing,
} from './read-source.js';
import {
  deadlineExceeded,
  describeFailure,
  interrupted,
  isDatabaseTimeout,
  statusAfterFailure,
  superseded,
  SUPERSEDED,
  untilAborted,
} from './run-failure.js';

export type { DiscoveryDeps } from './read-source.js';

export interface DiscoveryResult {
  run: DiscoveryRun;
  /** Operations added or changed by this run (empty when it failed). */
  changed: Operation[];
}

/** A run's fingerprint (`fingerprint.ts`), and the connection settings it was made with. */
interface Fingerprint {
  digest: string;
  settings: string;
}

/** The audit row of a successful run. */
function auditRun(
  tx: EntityManager,
  principal: Pick<Principal, 'label'>,
  connection: Connection,
  run: DiscoveryRun,
): void {
  audit(tx, principal, {
    workspaceId: connection.workspace.id,
    action: 'DISCOVER',
    targetType: 'Connection',
    targetId: connection.nodeId,
    after: {
      run: run.nodeId,
      trigger: run.trigger,
      added: run.added,
      removed: run.removed,
      updated: run.updated,
      flagged: run.flagged,
      ...(run.unchanged ? { unchanged: true } : {}),
    },
  });
}

/** Lets other work (health checks, tool calls) run between the apply step's CPU-heavy pieces. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Operations read back for the caller this many at a time, yielding between batches. */
const READ_BACK_BATCH = 50;

/**
 * Most discovery transactions (applying a listing, recording a failure) running at once in this
 * process. Each holds one pool connection (of 10), so the rest of the service always has some.
 */
export const DEFAULT_DISCOVERY_DB_SLOTS = 4;

/** How long recording a failed run waits for the connection's row lock held elsewhere. */
const FAILURE_LOCK_WAIT_MS = 5_000; // 5 seconds

export class DiscoveryService {
  /** Runs of one connection apply one at a time, waiting here rather than on the row lock. */
  readonly #admission = new KeyedSerial(DEFAULT_DISCOVERY_DB_SLOTS);

  constructor(
    private readonly services: DiscoveryDeps,
    /** Called after a run changed operations, so caches on every instance can drop them. */
    private readonly onChanged: (connectionId: string, workspaceId: string) => Promise<void> = async () =>
      undefined,
  ) {}

  /** The clock of the run's deadline. */
  get #clock(): Clock {
    return this.services.clock ?? systemClock;
  }

  /** Runs one discovery. Never throws for a source problem: the run says what happened. */
  async run(
    connectionId: string,
    trigger: DiscoveryTrigger,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
  ): Promise<DiscoveryResult> {
    const result = await this.#run(connectionId, trigger, principal);
    this.services.metrics.discoveryRun(result.run.outcome, result.run.errorCode ?? null);
    return result;
  }

  async #run(
    connectionId: string,
    trigger: DiscoveryTrigger,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
  ): Promise<DiscoveryResult> {
    const { orm, logger, config } = this.services;
    const em = orm.em.fork();
    const connection = await em.findOneOrFail(Connection, { id: connectionId });
    const run = await this.#startRun(em, connection, trigger, principal);
    // The deadline covers reading the source, waiting for a turn, and the apply's lock waits.
    const ms = config.discoveryDeadlineMs;
    const deadlineAt = this.#clock.now() + ms;
    const deadline = timeoutSignalOn(this.#clock, ms, () => deadlineExceeded(ms));
    // Everything an upstream sent is scrubbed of the connection's secrets where it enters, before
    // it is stored or returned: the listing, and the text of a failure (DESIGN.md rule 15).
    const seen: string[] = [];
    let secrets: string[] = [];
    const scrubber = () => makeScrubber([...secrets, ...seen]);
    try {
      secrets = await connectionSecrets(this.services, connection);
      const source: ReadSource = await untilAborted(
        connection.kind === ConnectionKind.MCP
          ? readMcp(this.services, connection, seen).then((l) => ({
              kind: 'listing' as const,
              listing: scrubListing(l, scrubber()),
            }))
          : readOpenApiText(this.services, em, connection).then((t) => ({ kind: 'text' as const, ...t })),
        deadline.signal,
      );
      const fingerprint: Fingerprint = {
        digest: this.services.secrets.fingerprint(
          source.kind === 'listing'
            ? listingFingerprintParts(source.listing, connection, config.outbound)
            : descriptionFingerprintParts(source, connection, config.outbound, secrets),
        ),
        settings: connectionSettings(connection, config.outbound),
      };
      // Unchanged since the last successful run: nothing to convert, reconcile or write.
      const unchanged = await this.#admission.run(
        connection.id,
        () => this.recordUnchanged(connection, run.id, fingerprint, principal, deadlineAt),
        deadline.signal,
      );
      if (unchanged !== null) return { run: unchanged, changed: [] };
      const listing =
        source.kind === 'listing'
          ? source.listing
          : scrubListing(
              await untilAborted(convertOpenApi(this.services, connection, source), deadline.signal),
              scrubber(),
            );
      if (listing.operations.length === 0) {
        throw new AppError(
          'EMPTY_TOOL_LIST',
          connection.kind === ConnectionKind.MCP
            ? 'the server listed no usable tools; nothing was changed'
            : `the description has no usable operations${listing.emptyReason ? `: ${listing.emptyReason}` : ''}; nothing was changed`,
        );
      }
      const changed = await this.#admission.run(
        connection.id,
        () => this.apply(connection.id, run.id, listing, fingerprint, principal, deadlineAt, scrubber()),
        deadline.signal,
      );
      await this.onChanged(connection.id, connection.workspace.id).catch((err: unknown) =>
        logger.warn({ err }, 'cache notification failed'),
      );
      const fresh = orm.em.fork();
      return {
        run: await fresh.findOneOrFail(DiscoveryRun, { id: run.id }),
        changed: await this.readBack(fresh, changed),
      };
    } catch (caught) {
      return await this.failed(caught, run.id, connection, principal, scrubber);
    } finally {
      deadline.cancel();
    }
  }

  /** The run's row, RUNNING on this instance. */
  async #startRun(
    em: EntityManager,
    connection: Connection,
    trigger: DiscoveryTrigger,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
  ): Promise<DiscoveryRun> {
    const run = new DiscoveryRun(
      em.getReference(Connection, connection.id, { wrapped: true }),
      trigger,
      principal.label,
    );
    run.instanceId = this.services.notifier.instanceId;
    // One statement, no transaction around it: the run is the first thing a discovery writes.
    await em.insert(run);
    return run;
  }

  /** Records a failed run, scrubbed of the connection's secrets, and returns it. */
  private async failed(
    caught: unknown,
    runId: string,
    connection: Connection,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
    scrubber: () => Scrubber,
  ): Promise<DiscoveryResult> {
    const { orm, logger, config } = this.services;
    const connectionId = connection.id;
    const err = isDatabaseTimeout(caught) ? deadlineExceeded(config.discoveryDeadlineMs) : caught;
    const described = describeFailure(err);
    const failure = { code: described.code, message: scrubber().text(described.message) };
    if (failure.code === 'INTERNAL') logger.error({ err, connectionId }, 'discovery failed');
    else logger.info({ code: failure.code, connectionId }, 'discovery failed');
    try {
      await this.recordFailure(runId, connection.id, failure, principal, true);
    } catch (recordErr) {
      if (!isDatabaseTimeout(recordErr)) throw recordErr;
      // The connection row stayed locked elsewhere: close the run at least, so it never stays
      // RUNNING; the connection keeps its status until its next run.
      logger.warn({ connectionId, runId }, 'connection row locked; failed run closed without its status');
      await this.recordFailure(runId, connection.id, failure, principal, false);
    }
    // The status changed (FAILED, NEEDS_SIGN_IN): calls must see it on every instance.
    await this.onChanged(connection.id, connection.workspace.id).catch((e: unknown) =>
      logger.warn({ err: e }, 'cache notification failed'),
    );
    return { run: await orm.em.fork().findOneOrFail(DiscoveryRun, { id: runId }), changed: [] };
  }

  /**
   * Closes a failed run, and (with `withConnection`) sets the connection's status and writes the
   * audit row, in one short transaction. It holds a slot but not the connection's queue: it waits
   * at most for the apply that holds the row lock (which never waits for anything in this process),
   * and never longer than FAILURE_LOCK_WAIT_MS for a lock held elsewhere.
   */
  private async recordFailure(
    runId: string,
    connectionId: string,
    failure: { code: string; message: string },
    principal: Pick<Principal, 'label'> & Partial<Principal>,
    withConnection: boolean,
  ): Promise<void> {
    await this.#admission.run(`failure:${runId}`, () =>
      this.services.orm.em.fork().transactional(async (tx) => {
        await tx.execute(`select set_config('lock_timeout', ?, true)`, [`${FAILURE_LOCK_WAIT_MS}ms`]);
        const r = await tx.findOneOrFail(DiscoveryRun, { id: runId });
        // Closed meanwhile (as interrupted, by an instance that took this one for dead).
        if (r.outcome !== DiscoveryOutcome.RUNNING) return;
        r.outcome = DiscoveryOutcome.FAILED;
        r.errorCode = failure.code;
        r.errorMessage = failure.message;
        r.finishedAt = new Date();
        // A run overtaken by a newer one leaves the connection as the newer run set it.
        if (failure.code === SUPERSEDED || !withConnection) return;
        const c = await tx.findOneOrFail(Connection, { id: connectionId });
        c.status = statusAfterFailure(failure.code, c.credentialKind);
        c.lastDiscoveryAt = r.finishedAt;
        c.lastDiscoveryError = `${failure.code}: ${failure.message}`;
        audit(tx, principal, {
          workspaceId: c.workspace.id,
          action: 'DISCOVER',
          targetType: 'Connection',
          targetId: c.nodeId,
          after: { run: r.nodeId, trigger: r.trigger, outcome: r.outcome, errorCode: r.errorCode },
        });
      }),
    );
  }

  /**
   * Why an operation must be held (see `key-origins.ts`): its calls would go to an origin the
   * connection's key was not given for, or its base address cannot be called (a placeholder, or
   * refused by the outbound policy, such as plain `http`) and no `baseUrl` override is set.
   */
  private holdsOf(connection: Connection, op: DiscoveredOperation): ReviewReasonDraft[] {
    const base = op.binding?.baseUrl ?? connection.endpointUrl;
    if (base === null) return [];
    const keyOrigins = isKeyCredential(connection.credentialKind)
      ? (connection.credentialOrigins ?? [])
      : null;
    let refused: string | null = null;
    if (op.binding !== null && connection.baseUrl === null) {
      const check = checkUrl(base, this.services.config.outbound);
      if (!check.ok) refused = `${JSON.stringify(base)} ${check.message}`;
    }
    return holdsFor({ base, placeholder: op.basePlaceholder ?? null, refused }, keyOrigins);
  }

  /**
   * The changed operations as entities, in id order. Hydrating hundreds of large schemas at once
   * would hold the event loop, so they are read in batches with a yield between them.
   */
  private async readBack(em: EntityManager, ids: string[]): Promise<Operation[]> {
    const sorted = [...ids].sort();
    const out: Operation[] = [];
    for (let i = 0; i < sorted.length; i += READ_BACK_BATCH) {
      if (i > 0) await yieldToLoop();
      out.push(
        ...(await em.find(
          Operation,
          { id: { $in: sorted.slice(i, i + READ_BACK_BATCH) } },
          { orderBy: { id: 'asc' } },
        )),
      );
    }
    return out;
  }

  /** Plans and applies under the connection's row lock; returns the ids of added and changed operations. */
  private async apply(
    connectionId: string,
    runId: string,
    listing: SourceListing,
    fingerprint: Fingerprint,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
    deadlineAt: number,
    scrubber: Scrubber,
  ): Promise<string[]> {
    return this.underLock(connectionId, deadlineAt, async (tx) => {
      const connection = await tx.findOneOrFail(Connection, { id: connectionId });
      const workspaceId = connection.workspace.id;
      // Sources are read outside the lock, so a slower, older run may arrive after a newer one
      // applied: it must not put the older listing back. Run ids are time-ordered (UUIDv7).
      // Every statement goes through `tx`, so it runs on the transaction's own connection. (A bare
      // `getConnection().execute()` would take a second pool connection while this one holds the
      // lock: enough of those at once and the pool deadlocks.)
      const newer = await tx.execute<unknown[]>(
        `select 1 from discovery_run where connection_id = ? and outcome = 'SUCCEEDED' and id > ? limit 1`,
        [connectionId, runId],
      );
      if (newer.length > 0) {
        throw superseded();
      }
      const { stored, openRows } = await readStored(tx, connectionId);
      await yieldToLoop();

      // Keys in use anywhere in the workspace, and keys that call history still names, are taken.
      const taken = new Set<string>();
      const keyRows = await tx.execute<{ key: string }[]>(
        `select key from operation where workspace_id = ? union select distinct operation_key as key from turn_call where workspace_id = ? and operation_key is not null`,
        [workspaceId, workspaceId],
      );
      for (const row of keyRows) taken.add(row.key);

      // Holds are judged under the lock, against the key's origins as they are now.
      const plan = reconcile(
        stored,
        listing.operations.map((op) => ({ ...op, holds: this.holdsOf(connection, op) })),
        { connectionSlug: connection.slug, takenKeys: taken },
      );
      await yieldToLoop();
      const run = await tx.findOneOrFail(DiscoveryRun, { id: runId });
      if (run.outcome !== DiscoveryOutcome.RUNNING) {
        throw interrupted();
      }
      const runRef = tx.getReference(DiscoveryRun, runId, { wrapped: true });
      const now = new Date();
      const { changed, changeRows } = await writePlan(tx, plan, {
        workspaceId,
        connectionId,
        runRef,
        now,
        scrubber,
        principal,
        openRows,
      });
      closeRun(connection, run, listing, plan, now);

      await insertOperationChanges(tx, runId, changeRows, now);
      auditRun(tx, principal, connection, run);
      // What the next run compares with: this run's fingerprint (unless a setting it was made with
      // changed meanwhile), and the operations as this run leaves them, review reasons written.
      await tx.flush();
      run.fingerprint =
        fingerprint.settings === connectionSettings(connection, this.services.config.outbound)
          ? fingerprint.digest
          : null;
      run.operationsStamp = await operationsStamp(tx, connectionId);
      return changed;
    });
  }

  /**
   * Runs `work` in one transaction holding the connection's row lock, with every wait bounded by
   * the run's deadline.
   */
  private underLock<T>(
    connectionId: string,
    deadlineAt: number,
    work: (tx: EntityManager) => Promise<T>,
  ): Promise<T> {
    return this.services.orm.em.fork().transactional(async (tx) => {
      // Bounded waits: a lock held elsewhere (another instance, a stuck session) ends this run
      // at its deadline instead of holding a pool connection for good.
      const remaining = `${Math.max(1, deadlineAt - this.#clock.now())}ms`;
      await tx.execute(
        `select set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true)`,
        [remaining, remaining],
      );
      // FOR NO KEY UPDATE, not FOR UPDATE: it serialises applies of this connection just the same,
      // but does not block rows that merely reference the connection (a new run's insert, a turn).
      await tx.execute(`select 1 from connection where id = ? for no key update`, [connectionId]);
      return work(tx);
    });
  }

  /**
   * Closes the run as unchanged when its fingerprint is the last successful run's, the operations
   * are as that run left them (`operationsStamp`) and the connection is READY; returns the run then,
   * or `null`, having written nothing. An unchanged run writes its own record only: the run, its
   * audit row and the connection's `lastDiscoveryAt`. No operation or review reason is touched, and
   * no cache is told anything. Under the connection's lock, as an apply: a run that started later
   * and already applied makes this one SUPERSEDED, unchanged or not.
   */
  private async recordUnchanged(
    connection: Connection,
    runId: string,
    fingerprint: Fingerprint,
    principal: Pick<Principal, 'label'> & Partial<Principal>,
    deadlineAt: number,
  ): Promise<DiscoveryRun | null> {
    const connectionId = connection.id;
    return this.underLock(connectionId, deadlineAt, async (tx) => {
      const [last] = await tx.execute<
        {
          id: string;
          fingerprint: string | null;
          operations_stamp: string | null;
          stamp: string;
          status: string;
        }[]
      >(
        `select r.id, r.fingerprint, r.operations_stamp, ${STAMP_SQL} as stamp,
                (select status from connection where id = ?) as status
           from discovery_run r
          where r.connection_id = ? and r.outcome = 'SUCCEEDED'
          order by r.id desc limit 1`,
        [connectionId, connectionId, connectionId, connectionId],
      );
      if (last === undefined) return null;
      if (last.id > runId) throw superseded();
      // A failed run since (status FAILED or NEEDS_SIGN_IN) needs the full run to put it right.
      if (last.status !== ConnectionStatus.READY) return null;
      if (last.fingerprint !== fingerprint.digest || last.operations_stamp !== last.stamp) return null;
      const now = new Date();
      const [row] = await tx.execute<Record<string, unknown>[]>(
        `with run as (
           update discovery_run r
              set outcome = 'SUCCEEDED', finished_at = ?, unchanged = true, fingerprint = l.fingerprint,
                  operations_stamp = l.operations_stamp, skipped = l.skipped, diagnostics = l.diagnostics,
                  protocol_version = l.protocol_version, server_info = l.server_info
             from discovery_run l
            where r.id = ? and r.outcome = 'RUNNING' and l.id = ?
           returning r.*
         ), touched as (
           -- Runs whether or not it is referenced, as every data-modifying WITH does.
           update connection c set last_discovery_at = ? from run where c.id = ?
         )
         select * from run`,
        [now, runId, last.id, now, connectionId],
      );
      // Closed meanwhile (as interrupted, by an instance that took this one for dead).
      if (row === undefined) throw interrupted();
      const run = tx.map(DiscoveryRun, row);
      auditRun(tx, principal, connection, run);
      return run;
    });
  }
}
