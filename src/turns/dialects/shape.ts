/**
 * How a model's arguments map back to canonical ones (pure, issue 26): made by compile.ts beside
 * each compiled schema, applied by decode.ts. A part of the arguments with no shape is canonical
 * as it is.
 */

/** One declared property: its canonical name, its value's shape, and whether `null` means "not given". */
export interface PropShape {
  name: string;
  shape: Shape | null;
  /** OpenAI strict: the property was optional and is not nullable canonically. */
  dropNull: boolean;
}

export interface ObjectShape {
  k: 'obj';
  /** By declared name (no prototype). */
  props: Record<string, PropShape>;
  /** The shape of every other key's value (a map's values). */
  rest?: Shape;
}

export type Shape =
  /** Declared as a string of JSON text: parsed back. */
  { k: 'json' } | ObjectShape | { k: 'arr'; items: Shape };

/**
 * One shape for a value that may take either of two options' forms (a union). `conflict` when the
 * same declared name means two canonical names, or a string is JSON text in one option only (the
 * compiler never declares such a union).
 */
export function mergeShapes(a: Shape | null, b: Shape | null): Shape | null | 'conflict' {
  if (a === null) return b;
  if (b === null) return a;
  // Two kinds in one union: the compiler declares no such union (see compileUnion).
  if (a.k !== b.k) return 'conflict';
  if (a.k === 'json') return a;
  if (a.k === 'arr' && b.k === 'arr') {
    const items = mergeShapes(a.items, b.items);
    return items === 'conflict' ? 'conflict' : items === null ? null : { k: 'arr', items };
  }
  if (a.k === 'obj' && b.k === 'obj') {
    const props = Object.create(null) as Record<string, PropShape>;
    for (const [name, p] of Object.entries(a.props)) props[name] = p;
    for (const [name, p] of Object.entries(b.props)) {
      const had = props[name];
      if (!had) {
        props[name] = p;
        continue;
      }
      if (had.name !== p.name) return 'conflict';
      const shape = mergeShapes(had.shape, p.shape);
      if (shape === 'conflict') return 'conflict';
      props[name] = { name: p.name, shape, dropNull: had.dropNull || p.dropNull };
    }
    const rest: Shape | null | 'conflict' = mergeShapes(a.rest ?? null, b.rest ?? null);
    if (rest === 'conflict') return 'conflict';
    return rest === null ? { k: 'obj', props } : { k: 'obj', props, rest };
  }
  return 'conflict';
}
