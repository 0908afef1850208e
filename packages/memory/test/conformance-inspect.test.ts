import type { StoreCall } from '@floodgate/core/store';
import { storeConformance } from '@floodgate/testkit';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

/**
 * MemoryStore cannot list its keys; this subclass remembers every key it was asked about, and
 * reports those it still holds. It writes only keys it was asked about, so the list is exact.
 */
class ListedMemoryStore extends MemoryStore {
  readonly #seen = new Set<string>();
  override evaluate(call: StoreCall) {
    for (const k of call.keys) this.#seen.add(k);
    return super.evaluate(call);
  }
  keys(): string[] {
    return [...this.#seen].filter((k) => this.ttl(k) !== undefined);
  }
}

// With TTL and key checks, on the suite's clock.
storeConformance(
  { describe, it, expect },
  {
    name: 'MemoryStore (inspected)',
    makeStore: ({ now }) => new ListedMemoryStore({ now }),
    inspect: { ttl: (key, store) => store.ttl(key), keys: (store) => store.keys() },
  },
);

// On its own clock (Date.now), as a server-clock store: only the tests without time travel.
storeConformance(
  { describe, it, expect },
  {
    name: 'MemoryStore (real clock)',
    controlsTime: false,
    makeStore: () => new ListedMemoryStore(),
    inspect: {
      ttl: (key, store) => store.ttl(key),
      keys: (store) => store.keys(),
      ttlSlackMs: 1000,
    },
  },
);
