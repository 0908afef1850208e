import type { PolicyState } from '../src/policies/common.js';
import { evaluateAll, type PolicyResult, type Store, type StoreCall } from '../src/store.js';

/** The smallest correct store: a Map and evaluateAll (no expiry; fine for these tests). */
export class MapStore implements Store {
  readonly states = new Map<string, PolicyState>();
  calls = 0;
  constructor(
    readonly now: () => number = Date.now,
    readonly remote = false,
  ) {}
  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    this.calls++;
    return this.decide(call);
  }
  /** The decision itself, synchronous, for subclasses that also offer `evaluateSync`. */
  protected decide(call: StoreCall): readonly PolicyResult[] {
    const { results, writes } = evaluateAll(
      call,
      call.keys.map((k) => this.states.get(k)),
      this.now(),
    );
    writes.forEach((w, i) => {
      if (w === null) this.states.delete(call.keys[i]!);
      else if (w !== undefined) this.states.set(call.keys[i]!, w.state);
    });
    return results;
  }
  async reset(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.states.delete(k);
  }
}
