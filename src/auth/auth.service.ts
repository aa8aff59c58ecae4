import { EventEmitter } from 'node:events';
import type { Connection, EntityManager } from '@mikro-orm/postgresql';
import type { AuthSignal, Notifier } from '../db/notifier.js';
import { ApiToken, Role } from './api-token.entity.js';
import type { Principal } from './principal.js';
import { generateToken, hashToken, isWellFormedToken } from './tokens.js';
import { Assistant } from '../assistants/assistant.entity.js';
import { TOKEN_ACTIVE_SQL } from './token-validity.js';
import { MAX_NAME_CHARS, nameLengthProblem } from '../names.js';
import { Workspace } from '../workspaces/workspace.entity.js';

/**
 * How long a token lookup is trusted. Revocation does not wait for it: a revoke sends a NOTIFY and
 * every instance drops the token at once (`forget`); while an instance's LISTEN connection is down,
 * it trusts no cached lookup at all.
 */
export const PRINCIPAL_CACHE_TTL_MS = 10_000; // 10 seconds
/** Valid tokens' lookups kept; past it the oldest goes. */
export const PRINCIPAL_CACHE_MAX = 10_000;
/**
 * Refused tokens' lookups kept, apart from the valid ones: anyone can send well-formed bogus tokens
 * without holding a real one, so they may fill only their own map, never evict a valid lookup.
 */
export const REFUSED_CACHE_MAX = 10_000;

interface CacheEntry<T> {
  value: T;
  expires: number;
}

/** Insertion-ordered and bounded: when full, the oldest entry makes room. */
function remember<T>(map: Map<string, CacheEntry<T>>, max: number, key: string, entry: CacheEntry<T>): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, entry);
}

/**
 * One statement per lookup: the token if it is neither revoked nor expired by the service's clock
 * (`token-validity.ts`; bindings: the hash, then `now`), and its `last_used_at`
 * moved forward when it is over a minute old (so a busy token writes at most once a minute).
 */
const AUTHENTICATE_SQL = `
with t as (
  select id, role, workspace_id, assistant_id, label, expires_at, last_used_at from api_token
  where token_hash = ? and ${TOKEN_ACTIVE_SQL}
), u as (
  update api_token a set last_used_at = now() from t
  where a.id = t.id and (t.last_used_at is null or t.last_used_at < now() - interval '1 minute')
)
select id, role, workspace_id, assistant_id, label, expires_at from t`;

interface TokenRow {
  id: string;
  role: Role;
  workspace_id: string | null;
  assistant_id: string | null;
  label: string;
  expires_at: Date | string | null;
}

/** What a token lookup needs of the database: one raw statement. */
export type TokenLookupSql = Pick<Connection, 'execute'>;

/** Resolves tokens to principals, with a short cache so that the turn path costs no SQL for it. */
export class AuthService {
  readonly #valid = new Map<string, CacheEntry<Principal>>();
  readonly #refused = new Map<string, CacheEntry<null>>();
  readonly #events = new EventEmitter();
  #notifier: Pick<Notifier, 'healthy'> | null = null;

  /** `now`: the clock of the lookup cache (a token's expiry is checked by the database's own). */
  constructor(
    notifier?: Pick<Notifier, 'healthy' | 'onAuth' | 'onReset'>,
    private readonly now: () => number = Date.now,
  ) {
    this.#events.setMaxListeners(0);
    if (notifier) {
      this.#notifier = notifier;
      notifier.onAuth((signal: AuthSignal) => this.forget(signal.tokenId));
      // Anything may have been missed while LISTEN was down.
      notifier.onReset(() => this.clearCache());
    }
  }

  /** Forgets every cached lookup: the next request of each token reads the database. */
  clearCache(): void {
    this.#valid.clear();
    this.#refused.clear();
  }

  /** How many lookups are cached, of valid and of refused tokens (tests and the abuse bench). */
  cacheSizes(): { valid: number; refused: number } {
    return { valid: this.#valid.size, refused: this.#refused.size };
  }

  /**
   * A token stopped being valid (revoked here or on another instance): drop its cached lookups and
   * tell `onRevoked` listeners (the WebSocket server closes the token's sockets).
   */
  forget(tokenId: string): void {
    for (const [hash, entry] of this.#valid) {
      if (entry.value.tokenId === tokenId) this.#valid.delete(hash);
    }
    this.#events.emit('revoked', tokenId);
  }

  onRevoked(listener: (tokenId: string) => void): () => void {
    this.#events.on('revoked', listener);
    return () => this.#events.off('revoked', listener);
  }

  /**
   * The token's principal, or null. `sql` is read only on a cache miss; it is the ORM's connection
   * (`orm.em.getConnection()`), not a forked entity manager: a lookup is one raw statement, and a
   * fork per request was a visible share of a request's CPU.
   */
  async authenticate(sql: TokenLookupSql, token: string | null): Promise<Principal | null> {
    if (!token || !isWellFormedToken(token)) return null;
    const hash = hashToken(token);
    const now = this.now();
    // Without LISTEN, a revocation elsewhere would go unheard: read the database every time.
    const trusted = this.#notifier === null || this.#notifier.healthy;
    const hit = trusted ? (this.#valid.get(hash) ?? this.#refused.get(hash)) : undefined;
    if (hit && hit.expires > now) return hit.value;
    const rows = await sql.execute<TokenRow[]>(AUTHENTICATE_SQL, [hash, new Date(now).toISOString()]);
    const row = rows[0];
    if (!row) {
      this.#valid.delete(hash);
      remember(this.#refused, REFUSED_CACHE_MAX, hash, {
        value: null,
        expires: now + PRINCIPAL_CACHE_TTL_MS,
      });
      return null;
    }
    const principal: Principal = {
      tokenId: row.id,
      role: row.role,
      workspaceId: row.workspace_id,
      label: row.label,
    };
    if (row.assistant_id !== null) principal.assistantId = row.assistant_id;
    const expiresAt = row.expires_at ? new Date(row.expires_at).getTime() : Infinity;
    // A token refused a moment ago (not yet minted, say) is not refused on from the other map.
    this.#refused.delete(hash);
    remember(this.#valid, PRINCIPAL_CACHE_MAX, hash, {
      value: principal,
      expires: Math.min(now + PRINCIPAL_CACHE_TTL_MS, expiresAt),
    });
    return principal;
  }
}

/** Stable codes of `TokenInputError`; the API returns them as `userErrors` codes. */
export type TokenInputCode =
  | 'WORKSPACE_REQUIRED'
  | 'WORKSPACE_NOT_ALLOWED'
  | 'WORKSPACE_NOT_FOUND'
  | 'ASSISTANT_REQUIRED'
  | 'ASSISTANT_NOT_ALLOWED'
  | 'ASSISTANT_NOT_FOUND'
  | 'LABEL_TOO_LONG'
  | 'EXPIRY_IN_PAST';

export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
  constructor(
    readonly code: TokenInputCode,
    /** The input field at fault: `workspaceId`, `label` or `expiresAt`. */
    readonly field: 'workspaceId' | 'assistantId' | 'label' | 'expiresAt',
    message: string,
  ) {
    super(message);
  }
}

export interface MintInput {
  role: Role;
  workspaceId?: string | null;
  /** MCP_CLIENT only, and required there: the assistant it serves (its workspace comes with it). */
  assistantId?: string | null;
  label?: string | null;
  /** Optional; must be in the future. */
  expiresAt?: Date | null;
  /** Label of the principal creating it (null: the CLI or the first start). */
  createdBy?: string | null;
}

/** Mints a token; the plain token is returned once and never stored. */
export async function mintToken(
  em: EntityManager,
  input: MintInput,
): Promise<{ token: string; id: string; row: ApiToken }> {
  if (input.role === Role.CUSTOMER && !input.workspaceId) {
    throw new TokenInputError('WORKSPACE_REQUIRED', 'workspaceId', 'a CUSTOMER token needs a workspace');
  }
  if ((input.role === Role.ADMIN || input.role === Role.OPERATOR) && input.workspaceId) {
    throw new TokenInputError(
      'WORKSPACE_NOT_ALLOWED',
      'workspaceId',
      `a ${input.role} token sees every workspace and is not bound to one; leave the workspace out`,
    );
  }
  if (input.role === Role.MCP_CLIENT && !input.assistantId)
    throw new TokenInputError('ASSISTANT_REQUIRED', 'assistantId', 'an MCP_CLIENT token needs an assistant');
  if (input.role !== Role.MCP_CLIENT && input.assistantId)
    throw new TokenInputError(
      'ASSISTANT_NOT_ALLOWED',
      'assistantId',
      'only an MCP_CLIENT token is bound to an assistant; leave the assistant out',
    );
  let assistant: Assistant | null = null;
  if (input.assistantId) {
    assistant = await em.findOne(Assistant, { id: input.assistantId });
    // Another workspace's assistant is as unknown as a missing one.
    if (!assistant || (input.workspaceId && assistant.workspace.id !== input.workspaceId))
      throw new TokenInputError(
        'ASSISTANT_NOT_FOUND',
        'assistantId',
        `assistant ${input.assistantId} does not exist`,
      );
  }
  const workspaceId = assistant ? assistant.workspace.id : input.workspaceId;
  const label = input.label?.trim() || `${input.role.toLowerCase()} token`;
  if (nameLengthProblem(label) === 'TOO_LONG')
    throw new TokenInputError('LABEL_TOO_LONG', 'label', `must be at most ${MAX_NAME_CHARS} characters`);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw new TokenInputError('EXPIRY_IN_PAST', 'expiresAt', 'must be in the future');
  }
  let workspace = null;
  if (workspaceId) {
    workspace = await em.findOne(Workspace, { id: workspaceId });
    if (!workspace)
      throw new TokenInputError(
        'WORKSPACE_NOT_FOUND',
        'workspaceId',
        `workspace ${workspaceId} does not exist`,
      );
  }
  const token = generateToken();
  const row = new ApiToken(
    hashToken(token),
    input.role,
    workspace ? em.getReference(Workspace, workspace.id, { wrapped: true }) : null,
    label,
  );
  row.assistantId = assistant?.id ?? null;
  row.expiresAt = input.expiresAt ?? null;
  row.createdBy = input.createdBy ?? null;
  em.persist(row);
  await em.flush();
  return { token, id: row.id, row };
}
