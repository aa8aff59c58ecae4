/**
 * A bounded memo of a function of a string (pure): each key's value is computed once, and the
 * table is emptied when full, so a hostile stream of new keys costs memory for `max` at most. A
 * call that throws is not kept (a refused address is judged again next time).
 */
export class Memo<V> {
  readonly #values = new Map<string, V>();

  constructor(
    private readonly max: number,
    private readonly compute: (key: string) => V,
  ) {}

  get(key: string): V {
    let value = this.#values.get(key);
    if (value === undefined && !this.#values.has(key)) {
      value = this.compute(key);
      if (this.#values.size >= this.max) this.#values.clear();
      this.#values.set(key, value);
    }
    return value as V;
  }
}
