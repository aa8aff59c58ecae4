import { notFoundError } from '../errors.js';
import { Role } from './api-token.entity.js';
import type { Principal } from './principal.js';

/**
 * Workspace scope comes from the token, never from arguments. Returns the only workspace the
 * principal may see, or null when it may see all of them (ADMIN, OPERATOR, unbound RUNTIME).
 */
export function scopedWorkspace(principal: Principal): string | null {
  if (principal.role === Role.CUSTOMER || principal.role === Role.RUNTIME || principal.role === Role.MCP_CLIENT)
    return principal.workspaceId;
  return null;
}

/** Staff (ADMIN or OPERATOR): the ops console's people, who see every workspace and the audit trail. */
export function isStaff(role: Role | null | undefined): boolean {
  return role === Role.ADMIN || role === Role.OPERATOR;
}

/** Whether the principal may see objects of this workspace. */
export function canSeeWorkspace(principal: Principal, workspaceId: string): boolean {
  const scope = scopedWorkspace(principal);
  return scope === null || scope === workspaceId;
}

/** Throws NOT_FOUND (not FORBIDDEN: existence must not leak across workspaces). */
export function assertWorkspace(principal: Principal, workspaceId: string, what: string): void {
  if (!canSeeWorkspace(principal, workspaceId)) throw notFoundError(what);
}
