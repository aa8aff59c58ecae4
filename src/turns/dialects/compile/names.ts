/**
 * Property names the dialect refuses, renamed (pure: no I/O): stable, unique within the object, and
 * mapped back by decode.ts through the shape the compiler records.
 */
import { numbered } from '../../../openapi/naming.js';
import { fnv1a32 } from '../../declare.js';
import type { Profile } from './profiles.js';

/**
 * Declared names for one object's property names: names the dialect takes are kept (first pass),
 * the others are decomposed (`é` → `e`), every other character replaced by `_`, prefixed with
 * `p_` where the name must start with a letter, cut to 64 characters with a hash, and numbered on
 * a clash (second pass).
 */
export function renameAll(
  names: readonly string[],
  profile: Pick<Profile, 'propertyName' | 'propertyNameStart'>,
): string[] {
  const taken = new Set<string>();
  const out: (string | undefined)[] = names.map((n) => {
    if (profile.propertyName.test(n) && !taken.has(n)) {
      taken.add(n);
      return n;
    }
    return undefined;
  });
  names.forEach((n, i) => {
    if (out[i] !== undefined) return;
    let base = n
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(profile.propertyNameStart ? /[^a-zA-Z0-9_]/gu : /[^a-zA-Z0-9_.-]/gu, '_');
    if (base === '') base = 'field';
    if (profile.propertyNameStart && !/^[a-zA-Z_]/.test(base)) base = `p_${base}`;
    if (base.length > 64) base = `${base.slice(0, 55)}_${fnv1a32(n)}`;
    const name = numbered(base, taken);
    taken.add(name);
    out[i] = name;
  });
  return out as string[];
}
