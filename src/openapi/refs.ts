/**
 * Local references in a description: `#/...` as a JSON pointer (with URI and `~0`/`~1` escapes)
 * into the document's root. What cannot be followed is {@link MISSING}, with a diagnostic saying
 * why. Pure.
 */
import { type Obj, isObj } from './document.js';

/** What a reference that points to nothing resolves to (replaced by an empty schema). */
export const MISSING = Symbol('missing');

/** The node `ref` names in `root`, or `MISSING` after telling `diag` why not. */
export function lookupRef(root: Obj, ref: string, diag: (message: string) => void): unknown {
  if (!ref.startsWith('#')) {
    diag(`$ref "${ref}" is not local (only "#/..." is followed); it was replaced by an empty schema`);
    return MISSING;
  }
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    diag(`$ref "${ref}" is not a valid URI fragment; it was replaced by an empty schema`);
    return MISSING;
  }
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) {
    diag(`$ref "${ref}" is not a JSON pointer; it was replaced by an empty schema`);
    return MISSING;
  }
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) {
      node = node[Number(token)];
    } else if (isObj(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      diag(`$ref "${ref}" points to nothing; it was replaced by an empty schema`);
      return MISSING;
    }
  }
  return node;
}
