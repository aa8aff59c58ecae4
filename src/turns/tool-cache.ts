/**
 * Per assistant, in process memory: the tools to declare and everything a call needs (binding,
 * connection address, sealed credential), so that opening a turn reads no tool data from the
 * database and a call re-checks both gates without a query.
 *
 * Freshness (DESIGN.md rule 12): every change to an operation, connection, credential or
 * assistant gate sends a NOTIFY; every instance drops the affected workspace's entries. While the
 * LISTEN connection is down, the cache is bypassed: each lookup reads the database, nothing is
 * kept. A load that overlaps an invalidation is returned but not kept, so a stale read never
 * lands in the cache.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CacheSignal, Notifier } from '../db/notifier.js';
import type { Logger } from '../logger.js';
import type { ConnectionKind, CredentialKind } from '../connections/connection.entity.js';
import type { JsonObject, OpenApiBinding, Risk } from '../operations/types.js';
import { compileArguments, type ArgumentCheck } from './arguments.js';
import { declareTools, type DeclaredTool } from './declare.js';
import { compileToolList, type CompileMemo, type DialectToolList } from './dialects/declarations.js';
import type { ToolDialect } from './dialects/dialect.js';

export const DEFAULT_TOOL_CACHE_MAX_ENTRIES = 10_000;
/**
 * Distinct input schemas kept by content (their MD5), so that a reload after an invalidation hands
 * out the same schema objects for unchanged schemas, and what was compiled from them (argument
 * checks, dialect declarations) is reused instead of compiled again. Emptied when full.
 */
export const DEFAULT_SCHEMA_MEMO_MAX = 50_000;

/** What a call needs of a connection. The credential stays sealed until the call opens it. */
export interface CachedConnection {
  id: string;
  slug: string;
  kind: ConnectionKind;
  status: string;
  endpointUrl: string | null;
  baseUrl: string | null;
  timeoutMs: number | null;
  credentialKind: CredentialKind;
  credentialHeaderName: string | null;
  credentialSecret: string | null;
  /** BEARER and HEADER: the origins the key was given for. */
  credentialOrigins: readonly string[] | null;
  /** MCP: the version stored at the last discovery. */
  protocolVersion: string | null;
}

export interface CachedOperation {
  id: string;
  key: string;
  name: string;
  description: string | null;
  inputSchema: JsonObject;
  /** What the argument check takes instead of `inputSchema`, when it differs (DESIGN.md rule 17). */
  checkSchema: JsonObject | null;
  risk: Risk;
  idempotent: boolean;
  /** An operator marked it "always declare": declared up front when tool search applies (issue 31). */
  alwaysDeclare?: boolean;
  binding: OpenApiBinding | null;
  connection: CachedConnection;
  /** The compiled input schema, made on the first call and kept as long as this entry. */
  argumentCheck?: ArgumentCheck;
}

/**
 * The operation's compiled argument check: its check schema where it has one (every option of a
 * union, DESIGN.md rule 17), else its input schema; compiled on first use, kept with the cache entry.
 */
export function argumentCheckOf(op: CachedOperation): ArgumentCheck {
  if (op.argumentCheck) return op.argumentCheck;
  // A check schema (every option of a union) is the operation's own; an input schema is interned.
  if (op.checkSchema) return (op.argumentCheck = compileArguments(op.checkSchema));
  let check = CHECKS.get(op.inputSchema);
  if (!check) {
    check = compileArguments(op.inputSchema);
    CHECKS.set(op.inputSchema, check);
  }
  op.argumentCheck = check;
  return check;
}

/** Compiled checks by schema object: an unchanged (interned) schema is compiled once. */
const CHECKS = new WeakMap<JsonObject, ArgumentCheck>();

export interface AssistantTools {
  assistantId: string;
  workspaceId: string;
  /** Built-ins, then callable operations, then finish_turn. */
  declared: DeclaredTool[];
  /** Declared name → operation id (connection tools only). */
  map: Record<string, string>;
  /** Callable operations (both gates on), by id. */
  operations: Map<string, CachedOperation>;
  /** The list compiled per model API, on the first turn that asks for it ({@link dialectToolsOf}). */
  dialects: Map<ToolDialect, DialectToolList>;
  /** Shared by every entry of the cache: what was compiled from each schema object. */
  memo: CompileMemo;
}

/**
 * The assistant's tools as declared in `dialect`: compiled once per cache entry and dialect, and
 * kept with the entry, so beginTurn in any dialect stays one lookup with no network.
 */
export function dialectToolsOf(tools: AssistantTools, dialect: ToolDialect): DialectToolList {
  let list = tools.dialects.get(dialect);
  if (!list) {
    list = compileToolList(
      dialect,
      { tools: tools.declared, map: tools.map },
      (id) => tools.operations.get(id)?.key ?? null,
      tools.memo,
    );
    tools.dialects.set(dialect, list);
  }
  return list;
}

interface Row {
  workspace_id: string;
  c_id: string | null;
  slug: string | null;
  kind: ConnectionKind | null;
  status: string | null;
  endpoint_url: string | null;
  base_url: string | null;
  timeout_ms: number | null;
  credential_kind: CredentialKind | null;
  credential_header_name: string | null;
  credential_secret: string | null;
  credential_origins: string[] | null;
  protocol_version: string | null;
  o_id: string | null;
  key: string | null;
  name: string | null;
  description: string | null;
  input_schema: JsonObject | null;
  check_schema: JsonObject | null;
  risk: Risk | null;
  idempotent: boolean | null;
  always_declare: boolean | null;
  binding: OpenApiBinding | null;
  schema_md5: string | null;
}

const LOAD_SQL = `
select a.workspace_id,
       c.id as c_id, c.slug, c.kind, c.status, c.endpoint_url, c.base_url, c.timeout_ms,
       c.credential_kind, c.credential_header_name, c.credential_secret, c.credential_origins, c.protocol_version,
       o.id as o_id, o.key, o.name, o.description, o.input_schema, o.check_schema, o.risk, o.idempotent, o.always_declare, o.binding,
       md5(o.input_schema::text) as schema_md5
  from assistant a
  left join assistant_connection ac on ac.assistant_id = a.id
  left join connection c on c.id = ac.connection_id
  left join operation o on o.connection_id = c.id and o.enabled
 where a.id = ?`;

export class ToolCache {
  readonly #entries = new Map<string, AssistantTools>();
  readonly #loading = new Map<string, Promise<AssistantTools | null>>();
  #generation = 0;
  readonly #unsubscribe: (() => void)[] = [];
  /** Input schemas by content: see {@link DEFAULT_SCHEMA_MEMO_MAX}. */
  readonly #schemas = new Map<string, JsonObject>();
  readonly #memo: CompileMemo = new WeakMap();
  /** Told of each invalidation: a workspace's tools may have changed (null: every workspace's). */
  readonly #listeners = new Set<(workspaceId: string | null) => void>();

  constructor(
    private readonly orm: MikroORM,
    private readonly notifier: Notifier,
    private readonly builtIns: readonly DeclaredTool[],
    private readonly logger: Logger,
    private readonly onConnectionChanged: (connectionId: string) => void = () => undefined,
    private readonly maxEntries: number = DEFAULT_TOOL_CACHE_MAX_ENTRIES,
  ) {
    this.#unsubscribe.push(
      notifier.onCache((signal) => this.invalidate(signal)),
      notifier.onReset(() => this.clear()),
    );
  }

  /** Lookups answered from memory, and lookups that read (or joined a read of) the database: /metrics. */
  hits = 0;
  misses = 0;

  /** Number of cached assistants (tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /** The assistant's tools, or null when the assistant does not exist. */
  async get(assistantId: string): Promise<AssistantTools | null> {
    if (this.notifier.healthy) {
      const hit = this.#entries.get(assistantId);
      if (hit) {
        this.hits++;
        return hit;
      }
    }
    this.misses++;
    const pending = this.#loading.get(assistantId);
    if (pending) return pending;
    const load = this.#load(assistantId).finally(() => this.#loading.delete(assistantId));
    this.#loading.set(assistantId, load);
    return load;
  }

  async #load(assistantId: string): Promise<AssistantTools | null> {
    const generation = this.#generation;
    const rows = await this.orm.em.getConnection().execute<Row[]>(LOAD_SQL, [assistantId]);
    if (rows.length === 0) return null;
    const connections = new Map<string, CachedConnection>();
    const operations = new Map<string, CachedOperation>();
    for (const row of rows) {
      if (row.c_id === null) continue;
      let connection = connections.get(row.c_id);
      if (!connection) {
        connection = {
          id: row.c_id,
          slug: row.slug!,
          kind: row.kind!,
          status: row.status!,
          endpointUrl: row.endpoint_url,
          baseUrl: row.base_url,
          timeoutMs: row.timeout_ms,
          credentialKind: row.credential_kind!,
          credentialHeaderName: row.credential_header_name,
          credentialSecret: row.credential_secret,
          credentialOrigins: row.credential_origins,
          protocolVersion: row.protocol_version,
        };
        connections.set(row.c_id, connection);
      }
      if (row.o_id === null) continue;
      const inputSchema = this.#interned(row.input_schema!, row.schema_md5);
      operations.set(row.o_id, {
        id: row.o_id,
        key: row.key!,
        name: row.name!,
        description: row.description,
        inputSchema,
        checkSchema: row.check_schema,
        risk: row.risk!,
        idempotent: row.idempotent!,
        alwaysDeclare: row.always_declare === true,
        binding: row.binding,
        connection,
      });
    }
    const { tools, map } = declareTools({
      builtIns: this.builtIns,
      operations: [...operations.values()].map((o) => ({
        operationId: o.id,
        connectionSlug: o.connection.slug,
        name: o.name,
        description: o.description,
        inputSchema: o.inputSchema,
      })),
    });
    const entry: AssistantTools = {
      assistantId,
      workspaceId: rows[0]!.workspace_id,
      declared: tools,
      map,
      operations,
      dialects: new Map(),
      memo: this.#memo,
    };
    if (this.notifier.healthy && generation === this.#generation) {
      if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(assistantId, entry);
    }
    return entry;
  }

  /** The schema object already held for the same content, or `schema` (then held). */
  #interned(schema: JsonObject, md5: string | null): JsonObject {
    if (md5 === null) return schema;
    const held = this.#schemas.get(md5);
    if (held) return held;
    if (this.#schemas.size >= DEFAULT_SCHEMA_MEMO_MAX) this.#schemas.clear();
    this.#schemas.set(md5, schema);
    return schema;
  }

  /** Listens to invalidations (the MCP endpoint's list_changed); returns the unsubscribe. */
  onInvalidate(listener: (workspaceId: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(workspaceId: string | null): void {
    for (const listener of this.#listeners) listener(workspaceId);
  }

  /** Drops what a signal touches: the whole workspace, which is cheap and always correct. */
  invalidate(signal: CacheSignal): void {
    this.#generation++;
    // A load under way may have read before the change: later callers must not join it.
    this.#loading.clear();
    if (signal.kind === 'connection') this.onConnectionChanged(signal.id);
    if (!signal.workspaceId) return this.clear();
    for (const [id, entry] of this.#entries) {
      if (entry.workspaceId === signal.workspaceId) this.#entries.delete(id);
    }
    this.logger.debug({ signal }, 'tool cache invalidated');
    this.#tell(signal.workspaceId);
  }

  clear(): void {
    this.#generation++;
    this.#loading.clear();
    this.#entries.clear();
    this.#tell(null);
  }

  close(): void {
    for (const off of this.#unsubscribe) off();
    this.clear();
  }
}
