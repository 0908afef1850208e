const noop = (): void => {};

/**
 * Keeps a store's resets in order with its calls on the same keys. A call is not on the wire
 * the moment it is made: it may wait for its batch's tick, for the store's first `TIME`, for a
 * reconnect, or be sent again as `EVAL` after `NOSCRIPT`. A `DEL` sent meanwhile would reach
 * Redis first, and the call's charge would survive the reset. So a reset waits until every call
 * on its keys made before it has settled, and a call made after it waits until it has.
 */
export class KeyOrder {
  /** Calls not yet settled, with their keys. */
  readonly #calls = new Map<Promise<unknown>, readonly string[]>();
  /** Per key, its latest pending reset (settles, never rejects; waits for earlier ones). */
  readonly #resets = new Map<string, Promise<void>>();

  /**
   * What a call on `keys` made now must wait for before it is sent: undefined (nearly always)
   * when no reset of those keys is pending.
   */
  barrier(keys: readonly string[]): Promise<unknown> | undefined {
    if (this.#resets.size === 0) return undefined;
    const found: Promise<unknown>[] = [];
    for (const k of keys) {
      const r = this.#resets.get(k);
      if (r !== undefined && !found.includes(r)) found.push(r);
    }
    if (found.length === 0) return undefined;
    return found.length === 1 ? found[0] : Promise.all(found);
  }

  /** Remembers a call on `keys` until it settles; returns it. */
  track<T>(work: Promise<T>, keys: readonly string[]): Promise<T> {
    this.#calls.set(work, keys);
    const forget = () => {
      this.#calls.delete(work);
    };
    work.then(forget, forget);
    return work;
  }

  /** Runs `del` once the calls and resets on `keys` made before now have settled. */
  reset(keys: readonly string[], del: () => Promise<void>): Promise<void> {
    const before: Promise<unknown>[] = [];
    for (const [work, callKeys] of this.#calls) {
      if (callKeys.some((k) => keys.includes(k))) before.push(work);
    }
    const earlier = this.barrier(keys);
    if (earlier !== undefined) before.push(earlier);
    const done = before.length === 0 ? del() : Promise.allSettled(before).then(del);
    const settled = done.then(noop, noop);
    for (const k of keys) this.#resets.set(k, settled);
    void settled.then(() => {
      for (const k of keys) if (this.#resets.get(k) === settled) this.#resets.delete(k);
    });
    return done;
  }
}
