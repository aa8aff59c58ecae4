/**
 * The version token of an operation's review (issue 28): a digest of its open reasons (ids, codes,
 * details and the diff each holds). A refresh that changes the review changes the token, so an
 * admin's decision made on an older token is refused. Empty (no open reasons) is `null`.
 */
import { createHash } from 'node:crypto';
import type { DiffEntry } from './diff.js';

export interface VersionedReason {
  id: string;
  code: string;
  detail: string;
  diff: DiffEntry[];
}

export function reviewVersion(open: readonly VersionedReason[]): string | null {
  if (open.length === 0) return null;
  const parts = [...open]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => [r.id, r.code, r.detail, r.diff]);
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}
