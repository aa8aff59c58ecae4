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
import { DriverException, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { audit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import {
  Connection,
  ConnectionKind,
  ConnectionStatus,
  CredentialKind,
} from '../connections/connection.entity.js';
import { connectionSecrets, mcpEndpoint, type EndpointOAuth } from '../connections/endpoint.js';
import { holdsFor, isKeyCredential } from '../connections/key-origins.js';
import { descriptionDeps } from '../connections/source-origins.js';
import { readDescriptionText } from '../openapi/load.js';
import { checkUrl } from '../http/url-policy.js';
import { makeScrubber, type Scrubber } from '../connections/scrub.js';
import { composeDiffs, diffOperation } from '../operations/diff.js';
import { OperationChangeKind } from '../operations/operation-change.entity.js';
import { AppError, isAppError } from '../errors.js';
import { Operation } from '../operations/operation.entity.js';
import { ReviewReason } from '../operations/review-reason.entity.js';
import type { JsonObject } from '../operations/types.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../connections/secrets.js';
import type { Notifier } from '../db/notifier.js';
import type { OutboundClient } from '../http/outbound.js';
import type { Logger } from '../logger.js';
import type { McpClient } from '../mcp/client.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DescriptionPool } from '../openapi/pool.js';
import {
  DiscoveryOutcome,
  DiscoveryRun,
  type DiscoveryTrigger,
  type SkippedItem,
} from './discovery-run.entity.js';
import { uuidv7 } from '../db/ids.js';
import {
  deleteOperations,
  insertOperationChanges,
  insertOperations,
  type OperationChangeRow,
  operationsStamp,
  readStoredOperations,
  STAMP_SQL,
  updateOperations,
} from './operation-rows.js';
import {
  reconcile,
  type DiscoveredOperation,
  type ReviewReasonDraft,
  type StoredOperation,
} from './reconcile.js';
import { connectionSettings, descriptionFingerprintParts, listingFingerprintParts } from './fingerprint.js';
import { DISCOVERY_INTERRUPTED } from './recovery.js';
import { scrubListing } from './scrub-listing.js';
import { KeyedSerial } from './serial.js';
import { MAX_OPERATIONS_PER_CONNECTION } from '../limits.js';

/** The error code of a run overtaken by a newer one of the same connection. */
export const SUPERSEDED = 'SUPERSEDED';

/** The error code of a run that did not finish within `discoveryDeadlineMs`. */
export const DISCOVERY_DEADLINE_EXCEEDED = 'DISCOVERY_DEADLINE_EXCEEDED';

function superseded(): AppError {
  return new AppError(
    SUPERSEDED,
    'a discovery that started later has already applied a newer listing; this run changed nothing',
  );
}

function interrupted(): AppError {
  return new AppError(
    DISCOVERY_INTERRUPTED,
    'this discovery was closed as interrupted before it could apply; nothing was changed',
  );
}

function deadlineExceeded(deadlineMs: number): AppError {
  return new AppError(
    DISCOVERY_DEADLINE_EXCEEDED,
    `the discovery did not finish within ${Math.round(deadlineMs / 1000)} s; nothing was changed`,
  );
}

/** PostgreSQL gave up waiting for a lock (lock_timeout) or on a statement (statement_timeout). */
function isDatabaseTimeout(err: unknown): boolean {
  return err instanceof DriverException && (err.code === '55P03' || err.code === '57014');
}

/** Settles like `promise`, or rejects with the signal's reason when it fires first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined); // may settle after the deadline: never unhandled
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

/**
 * The connection's status after a failed run. A 401 asks for a sign-in only where a sign-in can
 * help: a connection with its own key that the server refuses needs a new key, not OAuth.
 */
export function statusAfterFailure(code: string, credential: CredentialKind): ConnectionStatus {
  if (
    code === 'AUTH_REQUIRED' &&
    (credential === CredentialKind.NONE || credential === CredentialKind.OAUTH)
  ) {
    return ConnectionStatus.NEEDS_SIGN_IN;
  }
  return ConnectionStatus.FAILED;
}

/** What a source offered, before reconciliation. */
export interface SourceListing {
  operations: DiscoveredOperation[];
  /** Why the source gave no operation, when it says (OpenAPI). */
  emptyReason?: string | null;
  skipped: SkippedItem[];
  diagnostics: string[];
  protocolVersion: string | null;
  serverInfo: JsonObject | null;
}

/** What discovery is built with (a part of app.ts's services): fetch, convert, reconcile, save. */
export interface DiscoveryDeps {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  mcp: McpClient;
  metrics: Metrics;
  notifier: Notifier;
  descriptions: DescriptionPool;
  secrets: SecretBox;
  oauth: EndpointOAuth;
  outbound: OutboundClient;
}

export interface DiscoveryResult {
  run: DiscoveryRun;
  /** Operations added or changed by this run (empty when it failed). */
  changed: Operation[];
}

/** Reads an MCP server: initialize, every page of tools/list, end the session. */
async function readMcp(
  services: DiscoveryDeps,
  connection: Connection,
  seen: string[],
): Promise<SourceListing> {
  const endpoint = mcpEndpoint(services, connection);
  const getAuthHeaders = endpoint.getAuthHeaders;
  if (getAuthHeaders) {
    // A token renewed during the run is a secret to scrub too.
    endpoint.getAuthHeaders = async () => {
      const headers = await getAuthHeaders();
      seen.push(...Object.values(headers).map((v) => v.replace(/^Bearer\s+/i, '')));
      return headers;
    };
  }
  const result = await services.mcp.discover(endpoint);
  const diagnostics: string[] = [];
  if (result.stopReason === 'TOOL_LIMIT')
    diagnostics.push(
      `the tool list stopped at the limit of ${MAX_OPERATIONS_PER_CONNECTION} tools; later tools were not read`,
    );
  if (result.stopReason === 'PAGE_LIMIT')
    diagnostics.push(`the tool list stopped after ${result.pages} pages (the limit)`);
  if (result.stopReason === 'REPEATED_CURSOR')
    diagnostics.push('the tool list stopped because the server repeated a cursor');
  // Discovery stays operator-driven: a freshness hint is shown, never acted on by itself.
  if (result.cache && result.cache.ttlMs > 0)
    diagnostics.push(
      `the server marks its tool list fresh for ${Math.round(result.cache.ttlMs / 1000)} s${result.cache.cacheScope ? ` (${result.cache.cacheScope})` : ''}`,
    );
  return {
    operations: result.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
      risk: t.risk,
      idempotent: t.idempotent,
      binding: null,
    })),
    skipped: [
      ...result.skipped.map((s) => ({
        name: s.name ?? `#${s.index}`,
        reason: s.reason,
        detail: s.detail,
      })),
      // Tools past the limit on pages never read have no names: one entry says they exist.
      ...(result.unreadPages
        ? [
            {
              name: `#${result.tools.length + result.skipped.length} and later`,
              reason: 'TOOL_LIMIT',
              detail: `the connection already has ${MAX_OPERATIONS_PER_CONNECTION} tools; the server listed more on pages that were not read`,
            },
          ]
        : []),
    ],
    diagnostics,
    protocolVersion: result.initialize.protocolVersion,
    serverInfo: result.initialize.serverInfo,
  };
}

/** Reads an OpenAPI description's text: re-fetching its address, or the stored text. */
async function readOpenApiText(
  services: DiscoveryDeps,
  em: EntityManager,
  connection: Connection,
): Promise<{ text: string; url: string | null }> {
  if (connection.descriptionUrl)
    return readDescriptionText({ url: connection.descriptionUrl }, descriptionDeps(services));
  await em.populate(connection, ['descriptionText']);
  if (!connection.descriptionText)
    throw new AppError('DESCRIPTION_MISSING', 'the connection has no description to read');
  return { text: connection.descriptionText, url: null };
}

/** Parses and converts a description's text (on a worker thread: it never stalls the event loop). */
async function convertOpenApi(
  services: DiscoveryDeps,
  connection: Connection,
  source: { text: string; url: string | null },
): Promise<SourceListing> {
  const converted = (
    await services.descriptions.convert({
      text: source.text,
      descriptionUrl: source.url,
      baseUrl: connection.baseUrl,
      urlPolicy: {
        allowHosts: services.config.outbound.allowHosts,
        allowLoopback: services.config.outbound.allowLoopback,
      },
    })
  ).conversion;
  return {
    operations: converted.operations.map((o) => ({
      name: o.name,
      title: o.title,
      description: o.description,
      inputSchema: o.inputSchema,
      checkSchema: o.checkSchema ?? null,
      annotations: o.annotations,
      risk: o.risk,
      idempotent: false,
      binding: o.binding,
      ...(o.basePlaceholder === undefined ? {} : { basePlaceholder: o.basePlaceholder }),
    })),
    skipped: converted.skipped.map((s) => ({
      name: s.name,
      reason: s.reason,
      detail: `${s.method} ${s.path}`,
    })),
    diagnostics: converted.diagnostics,
    emptyReason: converted.emptyReason,
    protocolVersion: null,
    serverInfo: null,
  };
}

/**
 * A source as read, before the expensive part: an MCP tool list is mapped as it is read (and
 * scrubbed here); a description is still text, converted only when the run is not unchanged.
 */
/** A run's fingerprint (`fingerprint.ts`), and the connection settings it was made with. */
interface Fingerprint {
  digest: string;
  settings: string;
}

type ReadSource =
  { kind: 'listing'; listing: SourceListing } | { kind: 'text'; text: string; url: string | null };

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

/** A message for people: our own coded errors as they are, anything else masked. Exported for tests. */
export function describeFailure(err: unknown): { code: string; message: string } {
  // Credentials that could not be obtained because the token endpoint is down are an outage, not
  // a lost sign-in: say so, and keep the connection's sign-in (FAILED, not NEEDS_SIGN_IN).
  if (
    isAppError(err) &&
    err.code === 'AUTH_REQUIRED' &&
    isAppError(err.cause) &&
    err.cause.code === 'TOKEN_ENDPOINT_UNAVAILABLE'
  ) {
    return { code: err.cause.code, message: err.cause.message };
  }
  if (isAppError(err)) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: 'discovery failed because of an internal error; it has been logged' };
}

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
    const run = new DiscoveryRun(
      em.getReference(Connection, connection.id, { wrapped: true }),
      trigger,
      principal.label,
    );
    run.instanceId = this.services.notifier.instanceId;
    // One statement, no transaction around it: the run is the first thing a discovery writes.
    await em.insert(run);

    // The deadline covers reading the source, waiting for a turn, and the apply's lock waits.
    const deadlineAt = Date.now() + config.discoveryDeadlineMs;
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(deadlineExceeded(config.discoveryDeadlineMs)),
      config.discoveryDeadlineMs,
    );
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
      const err = isDatabaseTimeout(caught) ? deadlineExceeded(config.discoveryDeadlineMs) : caught;
      const described = describeFailure(err);
      const failure = { code: described.code, message: scrubber().text(described.message) };
      if (failure.code === 'INTERNAL') logger.error({ err, connectionId }, 'discovery failed');
      else logger.info({ code: failure.code, connectionId }, 'discovery failed');
      try {
        await this.recordFailure(run.id, connection.id, failure, principal, true);
      } catch (recordErr) {
        if (!isDatabaseTimeout(recordErr)) throw recordErr;
        // The connection row stayed locked elsewhere: close the run at least, so it never stays
        // RUNNING; the connection keeps its status until its next run.
        logger.warn(
          { connectionId, runId: run.id },
          'connection row locked; failed run closed without its status',
        );
        await this.recordFailure(run.id, connection.id, failure, principal, false);
      }
      // The status changed (FAILED, NEEDS_SIGN_IN): calls must see it on every instance.
      await this.onChanged(connection.id, connection.workspace.id).catch((e: unknown) =>
        logger.warn({ err: e }, 'cache notification failed'),
      );
      return { run: await orm.em.fork().findOneOrFail(DiscoveryRun, { id: run.id }), changed: [] };
    } finally {
      clearTimeout(timer);
    }
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
      // Rows, not entities: see operation-rows.ts for why the ORM stays out of this step.
      const rows = await readStoredOperations(tx, connectionId);
      const reasons = rows.length
        ? await tx.find(ReviewReason, { operation: { $in: rows.map((o) => o.id) }, resolvedAt: null })
        : [];
      const reasonsOf = new Map<string, ReviewReasonDraft[]>();
      const openRows = new Map<string, ReviewReason[]>();
      for (const r of reasons) openRows.set(r.operation.id, [...(openRows.get(r.operation.id) ?? []), r]);
      for (const r of reasons) {
        const list = reasonsOf.get(r.operation.id) ?? [];
        list.push({ code: r.code, detail: r.detail });
        reasonsOf.set(r.operation.id, list);
      }
      const stored: StoredOperation[] = rows.map((o) => ({ ...o, openReasons: reasonsOf.get(o.id) ?? [] }));
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
      const changed: string[] = [];

      // Removed first, so that nothing new can collide with a row that is going.
      await deleteOperations(
        tx,
        plan.remove.map((gone) => gone.id),
      );
      const updates = plan.update.filter((u) => u.changed);
      await updateOperations(
        tx,
        updates.map((u) => ({
          id: u.id,
          fields: Object.fromEntries(u.changedFields.map((f) => [f, u.after[f]])),
          hold: u.disable,
          release: u.release,
        })),
        now,
      );
      const changeRows: OperationChangeRow[] = plan.remove.map((gone) => ({
        operationId: null,
        kind: OperationChangeKind.REMOVED,
        operationKey: gone.key,
        operationName: gone.name,
        entries: [],
      }));
      for (const update of updates) {
        // Scrubbed again with today's secrets: the stored side was scrubbed with those of its day.
        const entries = scrubber.json(diffOperation(update.before, update.after));
        changeRows.push({
          operationId: update.id,
          kind: update.disable ? OperationChangeKind.HELD : OperationChangeKind.UPDATED,
          operationKey: update.before.key,
          operationName: update.before.name,
          entries,
        });
        for (const reason of update.resolved) {
          for (const r of openRows.get(update.id) ?? []) {
            if (r.code !== reason.code || r.detail !== reason.detail) continue;
            r.resolvedAt = now;
            r.resolvedBy = principal.label;
          }
        }
        // The review's diff runs from the operation as it was before the review opened to now:
        // every reason still open, and every new one, holds this refresh composed onto it.
        const stillOpen = (openRows.get(update.id) ?? []).filter((r) => r.resolvedAt === null);
        const reviewDiff = composeDiffs(stillOpen.at(-1)?.diff ?? [], entries);
        if (entries.length > 0) for (const r of stillOpen) r.diff = reviewDiff;
        for (const reason of update.newReasons) {
          tx.persist(
            new ReviewReason(
              tx.getReference(Operation, update.id, { wrapped: true }),
              reason.code,
              reason.detail,
              runRef,
              reviewDiff,
            ),
          );
        }
        changed.push(update.id);
      }
      const added = plan.add.map((add) => ({
        id: uuidv7(),
        key: add.key,
        name: add.op.name,
        title: add.op.title,
        description: add.op.description,
        inputSchema: add.op.inputSchema,
        checkSchema: add.op.checkSchema ?? null,
        outputSchema: add.op.outputSchema ?? null,
        annotations: add.op.annotations,
        binding: add.op.binding,
        risk: add.op.risk,
        idempotent: add.op.idempotent,
        enabled: add.enabled,
        needsReview: add.reasons.length > 0,
      }));
      await insertOperations(tx, { workspaceId, connectionId }, added, now);
      changed.push(...added.map((a) => a.id));
      plan.add.forEach((add, i) => {
        changeRows.push({
          operationId: added[i]!.id,
          kind: add.reasons.length > 0 ? OperationChangeKind.HELD : OperationChangeKind.ADDED,
          operationKey: add.key,
          operationName: add.op.name,
          entries: [],
        });
        for (const reason of add.reasons) {
          tx.persist(
            new ReviewReason(
              tx.getReference(Operation, added[i]!.id, { wrapped: true }),
              reason.code,
              reason.detail,
              runRef,
            ),
          );
        }
      });

      connection.status = ConnectionStatus.READY;
      connection.lastDiscoveryAt = now;
      connection.lastDiscoveryError = null;
      if (listing.protocolVersion !== null) connection.protocolVersion = listing.protocolVersion;
      if (listing.serverInfo !== null) connection.serverInfo = listing.serverInfo;

      run.outcome = DiscoveryOutcome.SUCCEEDED;
      run.finishedAt = now;
      run.added = plan.counts.added;
      run.removed = plan.counts.removed;
      run.updated = plan.counts.updated;
      run.flagged = plan.counts.flagged;
      run.skipped = [
        ...listing.skipped,
        ...plan.skipped.map((s) => ({ name: s.name, reason: s.reason, detail: null })),
      ];
      run.diagnostics = listing.diagnostics;
      run.protocolVersion = listing.protocolVersion;
      run.serverInfo = listing.serverInfo;

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
      const remaining = `${Math.max(1, deadlineAt - Date.now())}ms`;
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
