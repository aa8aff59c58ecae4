import type { CacheSignal, SqlRunner } from '../db/notifier.js';
import { Notifier } from '../db/notifier.js';
import type { ToolCache } from './tool-cache.js';

/**
 * Announces a change to tools, connections or gates: this instance's cache drops the entries at
 * once (the next request on this instance sees it), and every other instance drops them when the
 * NOTIFY arrives. Call it after the change is committed, or pass the transaction's connection so
 * the NOTIFY goes out at commit.
 */
export async function announceToolChange(
  services: { toolCache: Pick<ToolCache, 'invalidate'> },
  sql: SqlRunner,
  signal: CacheSignal,
): Promise<void> {
  services.toolCache.invalidate(signal);
  await Notifier.publishCache(sql, signal);
}
