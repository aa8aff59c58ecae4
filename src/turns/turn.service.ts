/**
 * The turn path (I/O): a customer is waiting on every call, so it is short and never fails loudly.
 *
 * - beginTurn: tools from the cache (no tool data read from the database), then ONE statement that
 *   inserts the Turn and its TURN_STARTED event and signals the debugger, committed without
 *   waiting for the disk (see BEGIN_SQL).
 * - callTool: the turn is found (in memory, else in the database), then the call path
 *   (src/turns/call-path.ts, shared with the MCP endpoint) resolves, checks, records, dispatches
 *   and finishes the call. Every failure is a result for the model.
 * - Discovery is never called from here.
 */
import type { TraceContext } from './trace.js';
import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { scopedWorkspace } from '../auth/scope.js';
import { prepare, preparedRunner, type RunPrepared } from '../db/prepared.js';
import { uuidv7 } from '../db/ids.js';
import { eventNotifySql } from '../db/notifier.js';
import { notFoundError } from '../errors.js';
import type { JsonObject } from '../operations/types.js';
import type { TurnDeps } from './deps.js';
import { resolveDeclaredName } from './declare.js';
import type { DialectTool, LeftOutTool } from './dialects/declarations.js';
import type { ToolDialect } from './dialects/dialect.js';
import { storableJson } from './storable.js';
import { dialectToolsOf, type AssistantTools, type ToolCache } from './tool-cache.js';
import type { DeclaredToolRecord } from './turn.entity.js';
import type { CallLive, CallToolResult, TurnState } from './call-answer.js';
import { CallPath } from './call-path.js';
import { DEFAULT_RECORD_RETRY_DELAYS_MS } from './call-record.js';
// Tool search (issue 31): the hooks below are marked "tool search".
import {
  choiceKey,
  SEARCH_TOOLS_NAME,
  type SearchChoice,
  type ToolSearchInput,
} from './search/declare-search.js';
import { ToolSearch } from './search/tool-search.js';
import { badInput } from '../graphql/errors.js';

export const DEFAULT_TURN_STATE_MAX = 50_000;
/** Left-out tools listed in a TURN_STARTED event (all are on the turn's record). */
const MAX_LEFT_OUT_IN_EVENT = 10;

/** The NOTIFY of each event `e`, sent only while some instance watches (src/db/notifier.ts). */
const NOTIFY = eventNotifySql('e');

interface PreparedTurn {
  /** The SHA-256 (hex) of `declaredJson`: the list's key in `declared_tool_list`, with the workspace. */
  digest: string;
  declaredJson: string;
  startedJson: string;
  /** Read only: shared by every turn of the entry. */
  builtIns: ReadonlySet<string>;
  /** Declared name → operation id, in this dialect. */
  map: Record<string, string>;
  tools: DialectTool[];
  leftOut: LeftOutTool[];
  /** `leftOut` counted by code, once: a turn adds to the metric once per code, not once per tool. */
  leftOutByCode: ReadonlyMap<string, number>;
  /** This process saw the list committed: later turns of the entry send only its digest. */
  stored: boolean;
  /** Tool search (issue 31) applies: the turn declares `search_tools` (provider SERVICE). */
  search: boolean;
}

function countByCode(leftOut: readonly LeftOutTool[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of leftOut) counts.set(t.code, (counts.get(t.code) ?? 0) + 1);
  return counts;
}

/** A turn begun through another front door than GraphQL: which, and the token's label. */
export interface TurnVia {
  door: 'MCP';
  /** The token's label (never the token). */
  token: string;
}

export interface BeginTurnResult {
  turnId: string;
  tools: DialectTool[];
  /** Tools that pass both gates but could not be declared in the dialect, with why. */
  leftOut: LeftOutTool[];
  /** Whether the turn searches its tools (issue 31), and how. */
  toolSearch: SearchChoice;
}

/**
 * The Turn is committed without waiting for its WAL flush (`synchronous_commit` off for this
 * transaction only): on this path that flush is most of beginTurn's time (one disk sync, ~4 ms on
 * the bench machine). It is visible to every instance at once, like any commit. A crash of
 * PostgreSQL may lose the last fraction of a second of such turns, but only turns with no WRITE or
 * slow call on record: those records are committed synchronously, and a flush carries everything
 * written before it, the turn's insert included (a quick READ's record need not wait for its
 * flush, READ_RECORD_COMMIT: it may be lost with its turn). A call on a lost turn is refused
 * (nothing sent, nothing recorded), as a call on a finished turn is. Never group-committed: the setting would reach the
 * batch's other records.
 *
 * The declared-tools record is stored once per workspace and tool list (`declared_tool_list`,
 * migration 20261201140000), and the turn refers to it by digest. A turn refers to a list only
 * when the list is there by the end of its statement: either the same statement stores it
 * (BEGIN_WITH_LIST_SQL: `on conflict do nothing`, which waits for another instance storing the same
 * list at once), or, once this process has seen the list committed, BEGIN_SQL inserts the turn only
 * if the list exists. The list's commit can be asynchronous too: the WAL is replayed as a prefix
 * after a crash, and every turn that refers to a list was written after the list's commit, so a
 * turn that survives a crash has its list. A list lost by such a crash (or otherwise gone) while this
 * process remembers it as stored makes BEGIN_SQL insert nothing; beginTurn then stores the list
 * again with its turn.
 */
const BEGIN_CTES = `
with cfg as (
  select set_config('synchronous_commit', 'off', true) as v
)`;

const BEGIN_TAIL = `
  returning id, workspace_id, assistant_id, conversation_id
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, id, null, 'TURN_STARTED', ?::jsonb, now() from t
  returning seq, workspace_id
)
select e.seq, ${NOTIFY} from e, cfg`;

/** The first turn of a tool list in this process: the list (if new), the Turn and its event. */
const BEGIN_WITH_LIST_SQL = prepare(
  'with: insert into declared_tool_list, turn',
  `${BEGIN_CTES}, l as (
  insert into declared_tool_list (workspace_id, digest, tools, created_at)
  values (?, ?, ?::jsonb, now())
  on conflict do nothing
), t as (
  insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools_digest, call_seq, dialect)
  values (?, ?, ?, ?, now(), ?, 0, ?)${BEGIN_TAIL}`,
);

/** Every later turn of a stored list: the Turn (only if its list exists) and its event. */
const BEGIN_SQL = prepare(
  'with: insert into turn',
  `${BEGIN_CTES}, t as (
  insert into turn (id, workspace_id, assistant_id, conversation_id, started_at, declared_tools_digest, call_seq, dialect)
  select ?, ?, ?, ?, now(), ?, 0, ?
  where exists (select 1 from declared_tool_list where workspace_id = ? and digest = ?)${BEGIN_TAIL}`,
);

const FINISH_SQL = `
with t as (
  update turn set finished_at = now() where id = ? and finished_at is null
  returning id, workspace_id, assistant_id, conversation_id, call_seq
), e as (
  insert into turn_event (workspace_id, assistant_id, conversation_id, turn_id, call_id, type, payload, created_at)
  select workspace_id, assistant_id, conversation_id, id, null, 'TURN_FINISHED', jsonb_build_object('calls', call_seq), now() from t
  returning seq, workspace_id
)
select e.seq, ${NOTIFY} from e`;

export class TurnService {
  readonly #turns = new Map<string, TurnState>();
  /** Per tool-cache entry (dropped with it) and dialect: see #prepared. */
  readonly #preparedByEntry = new WeakMap<AssistantTools, Map<string, PreparedTurn>>();
  /** Tool search (issue 31): per-entry lists and index, the search call and the found tools. */
  readonly #search: ToolSearch;
  /** beginTurn's statement, prepared once per pooled connection (src/db/prepared.ts). */
  readonly #run: RunPrepared;
  /** The call path, shared with the MCP endpoint. */
  readonly path: CallPath;

  constructor(
    private readonly services: TurnDeps,
    private readonly cache: ToolCache,
    private readonly maxTurns: number = DEFAULT_TURN_STATE_MAX,
    recordRetryDelaysMs: readonly number[] = DEFAULT_RECORD_RETRY_DELAYS_MS,
  ) {
    const run = preparedRunner(services.orm);
    this.#run = run;
    this.#search = new ToolSearch(services.orm, services.config.toolSearch, services.logger, services.clock);
    this.path = new CallPath(services, cache, run, this.#search, recordRetryDelaysMs);
  }

  /** How the records were committed so far (batches of several records; for tests and the bench). */
  get groupCommitStats(): CallPath['groupCommitStats'] {
    return this.path.groupCommitStats;
  }

  get #orm(): MikroORM {
    return this.services.orm;
  }

  #remember(state: TurnState): void {
    if (this.#turns.size >= this.maxTurns) this.#turns.delete(this.#turns.keys().next().value!);
    this.#turns.set(state.id, state);
  }

  async begin(
    principal: Principal,
    assistantId: string,
    conversationId: string,
    dialect: ToolDialect = 'GENERIC',
    toolSearch: ToolSearchInput | null = null,
    /** The front door, when it is not GraphQL: on the TURN_STARTED event, for the debugger. */
    via: TurnVia | null = null,
  ): Promise<BeginTurnResult> {
    const tools = await this.cache.get(assistantId);
    const scope = scopedWorkspace(principal);
    if (!tools || (scope !== null && scope !== tools.workspaceId)) throw notFoundError('assistant');
    // Tool search (issue 31): whether it applies is decided per turn, from the entry's tools.
    const choice = this.#search.choose(tools, dialect, toolSearch);
    if (typeof choice === 'string') throw badInput(choice);
    const turnId = uuidv7();
    const prepared = this.#prepared(tools, dialect, choice);
    const ws = tools.workspaceId;
    const startedJson =
      via === null
        ? prepared.startedJson
        : storableJson({ ...(JSON.parse(prepared.startedJson) as Record<string, unknown>), via });
    let stored = false;
    if (prepared.stored) {
      const rows = await this.#run(BEGIN_SQL, [
        turnId,
        ws,
        assistantId,
        conversationId,
        prepared.digest,
        dialect,
        ws,
        prepared.digest,
        startedJson,
      ]);
      stored = rows.length > 0;
      // The list is gone (lost with an uncommitted WAL tail, or deleted): store it again below.
      if (!stored) prepared.stored = false;
    }
    if (!stored) {
      // Bound parameters, not values inlined into the text as `execute` does: the declared-tools
      // record (about 35 KB for 300 tools) is sent as it is, neither escaped here nor lexed there.
      await this.#run(BEGIN_WITH_LIST_SQL, [
        ws,
        prepared.digest,
        prepared.declaredJson,
        turnId,
        ws,
        assistantId,
        conversationId,
        prepared.digest,
        dialect,
        startedJson,
      ]);
      prepared.stored = true;
    }
    this.#remember({
      id: turnId,
      assistantId,
      workspaceId: tools.workspaceId,
      conversationId,
      map: prepared.map,
      builtIns: prepared.builtIns,
      dialect,
      finished: false,
      search: prepared.search,
    });
    for (const [code, count] of prepared.leftOutByCode)
      this.services.metrics.declarationLeftOut(dialect, code, count);
    return { turnId, tools: prepared.tools, leftOut: prepared.leftOut, toolSearch: choice };
  }

  /**
   * What every turn of one tool-cache entry stores and needs, computed once per entry: the turn's
   * declared-tools record as JSON (301 tools: most of beginTurn's own work otherwise), its digest,
   * and the built-in names.
   */
  #prepared(tools: AssistantTools, dialect: ToolDialect, choice: SearchChoice): PreparedTurn {
    let byDialect = this.#preparedByEntry.get(tools);
    if (!byDialect) {
      byDialect = new Map();
      this.#preparedByEntry.set(tools, byDialect);
    }
    const key = `${dialect} ${choiceKey(choice)}`;
    let prepared = byDialect.get(key);
    if (!prepared) {
      // Tool search (issue 31): a search turn declares its own, shorter list.
      const list = choice.on ? this.#search.list(tools, dialect, choice) : dialectToolsOf(tools, dialect);
      const search = choice.on && choice.provider === 'SERVICE';
      const declared: DeclaredToolRecord[] = list.tools.map((t) => {
        const operationId = resolveDeclaredName(list.map, t.name) ?? null;
        const record: DeclaredToolRecord = {
          name: t.name,
          operationId,
          operationKey: operationId ? (tools.operations.get(operationId)?.key ?? null) : null,
        };
        if (search && t.name === SEARCH_TOOLS_NAME) record.search = 'SERVICE';
        return record;
      });
      // Left out in this dialect: kept on the turn's record (and its TURN_STARTED event), never callable.
      for (const t of list.leftOut) {
        declared.push({
          name: t.name,
          operationId: resolveDeclaredName(tools.map, t.name) ?? null,
          operationKey: t.operationKey,
          leftOut: { code: t.code, reason: t.reason },
        });
      }
      const declaredJson = JSON.stringify(declared);
      const started: Record<string, unknown> = { tools: list.tools.length };
      if (dialect !== 'GENERIC') started.dialect = dialect;
      if (choice.on) started.toolSearch = choice.provider;
      if (list.leftOut.length > 0) {
        started.leftOut = list.leftOut.slice(0, MAX_LEFT_OUT_IN_EVENT);
        started.leftOutCount = list.leftOut.length;
      }
      prepared = {
        digest: createHash('sha256').update(declaredJson, 'utf8').digest('hex'),
        declaredJson,
        startedJson: storableJson(started),
        builtIns: new Set(
          list.tools.filter((t) => resolveDeclaredName(list.map, t.name) === undefined).map((t) => t.name),
        ),
        map: list.map,
        tools: list.tools,
        leftOut: list.leftOut,
        leftOutByCode: countByCode(list.leftOut),
        stored: false,
        search,
      };
      byDialect.set(key, prepared);
    }
    return prepared;
  }

  async #turn(principal: Principal, turnId: string): Promise<TurnState> {
    let state = this.#turns.get(turnId);
    if (!state) {
      const rows = await this.#orm.em.getConnection().execute<
        {
          assistant_id: string;
          workspace_id: string;
          conversation_id: string;
          declared_tools: DeclaredToolRecord[];
          finished_at: Date | null;
          dialect: ToolDialect;
        }[]
      >(
        // A turn whose list is missing is as good as lost (see BEGIN_SQL): refused as not found.
        `select t.assistant_id, t.workspace_id, t.conversation_id, l.tools as declared_tools, t.finished_at, t.dialect
         from turn t join declared_tool_list l on l.workspace_id = t.workspace_id and l.digest = t.declared_tools_digest
         where t.id = ?`,
        [turnId],
      );
      const row = rows[0];
      if (!row) throw notFoundError('turn');
      const map: Record<string, string> = Object.create(null) as Record<string, string>;
      const builtIns = new Set<string>();
      let search = false;
      for (const d of row.declared_tools) {
        if (d.leftOut) continue;
        if (d.search === 'SERVICE') search = true;
        if (d.operationId) map[d.name] = d.operationId;
        else builtIns.add(d.name);
      }
      state = {
        id: turnId,
        assistantId: row.assistant_id,
        workspaceId: row.workspace_id,
        conversationId: row.conversation_id,
        map,
        builtIns,
        dialect: row.dialect,
        finished: row.finished_at !== null,
        search,
      };
      this.#remember(state);
    }
    const scope = scopedWorkspace(principal);
    if (scope !== null && scope !== state.workspaceId) throw notFoundError('turn');
    return state;
  }

  /** Calls a tool in a turn (the call path); every answer is counted for /metrics by connection and status. */
  async call(
    principal: Principal,
    turnId: string,
    rawName: string,
    args: JsonObject,
    /** The runtime request's W3C trace context, validated: sent on and recorded on the TurnCall. */
    trace: TraceContext | null = null,
    /** What the MCP endpoint gives a call: a progress listener and a cancellation signal. */
    live: CallLive | null = null,
  ): Promise<CallToolResult> {
    return this.path.call(await this.#turn(principal, turnId), rawName, args, trace, live);
  }

  /** Stops the background retries (shutdown); the ledger sweep closes what they leave. */
  close(): void {
    this.path.close();
  }

  async finish(principal: Principal, turnId: string): Promise<boolean> {
    await this.#turn(principal, turnId);
    const rows = await this.#orm.em.getConnection().execute<unknown[]>(FINISH_SQL, [turnId]);
    const state = this.#turns.get(turnId);
    if (state) state.finished = true;
    return rows.length > 0;
  }
}
