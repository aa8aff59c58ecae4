import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiToken, Role } from './api-token.entity.js';
import type { Principal } from './principal.js';
import { generateToken, hashToken, isWellFormedToken } from './tokens.js';
import { Workspace } from '../workspaces/workspace.entity.js';

const PRINCIPAL_CACHE_TTL_MS = 10_000; // a revoked token stops working within 10 seconds
const PRINCIPAL_CACHE_MAX = 10_000;

/** Resolves tokens to principals, with a short cache so that the turn path costs no SQL for it. */
export class AuthService {
  readonly #cache = new Map<string, { principal: Principal | null; expires: number }>();

  /** Forgets every cached lookup: the next request of each token reads the database. */
  clearCache(): void {
    this.#cache.clear();
  }

  async authenticate(em: EntityManager, token: string | null): Promise<Principal | null> {
    if (!token || !isWellFormedToken(token)) return null;
    const hash = hashToken(token);
    const now = Date.now();
    const hit = this.#cache.get(hash);
    if (hit && hit.expires > now) return hit.principal;
    const row = await em.findOne(ApiToken, { tokenHash: hash, revokedAt: null });
    const principal: Principal | null = row
      ? { tokenId: row.id, role: row.role, workspaceId: row.workspace?.id ?? null, label: row.label }
      : null;
    if (this.#cache.size >= PRINCIPAL_CACHE_MAX) this.#cache.clear();
    this.#cache.set(hash, { principal, expires: now + PRINCIPAL_CACHE_TTL_MS });
    return principal;
  }
}

export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
}

/** Mints a token; the plain token is returned once and never stored. */
export async function mintToken(
  em: EntityManager,
  input: { role: Role; workspaceId?: string | null; label?: string | null },
): Promise<{ token: string; id: string }> {
  if (input.role === Role.CUSTOMER && !input.workspaceId) {
    throw new TokenInputError('a CUSTOMER token needs --workspace <id>');
  }
  if ((input.role === Role.ADMIN || input.role === Role.OPERATOR) && input.workspaceId) {
    throw new TokenInputError(`a ${input.role} token is not bound to a workspace; leave out --workspace`);
  }
  let workspace = null;
  if (input.workspaceId) {
    workspace = await em.findOne(Workspace, { id: input.workspaceId });
    if (!workspace) throw new TokenInputError(`workspace ${input.workspaceId} does not exist`);
  }
  const token = generateToken();
  const row = new ApiToken(
    hashToken(token),
    input.role,
    workspace ? em.getReference(Workspace, workspace.id, { wrapped: true }) : null,
    input.label?.trim() || `${input.role.toLowerCase()} token`,
  );
  await em.persistAndFlush(row);
  return { token, id: row.id };
}
