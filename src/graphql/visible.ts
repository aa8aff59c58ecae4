import { canSeeWorkspace } from '../auth/scope.js';
import type { Context } from './context.js';
import { notFound } from './errors.js';
import { idOf, type Node, type NodeTypeName } from './node.js';
import { loadNode } from './node-loader.js';

/**
 * Loads an object of `type` by its global ID, if the principal may see it; otherwise NOT_FOUND, the
 * same answer as for an object that does not exist (existence must not leak across workspaces).
 */
export async function visible<T extends Node>(
  ctx: Context,
  globalId: string,
  type: NodeTypeName,
  what: string = type.toLowerCase(),
): Promise<T> {
  const found = await loadNode(ctx, type, idOf(globalId, type, what));
  if (!found || !canSeeWorkspace(ctx.principal!, found.workspaceId)) throw notFound(what);
  return found.node as T;
}
