// What the conformance suite may look at inside a DenoKvStore: each key's remaining life (the
// store's own `ttl`, on the suite's clock: exact) and the keys that hold live state under a
// test's prefix, listed from the database itself. Shared by the Node suite and the Deno runner.
import type { StoreInspector } from '@floodgate/testkit';
import { expiryOf } from '../../src/codec.js';
import type { DenoKvStore } from '../../src/index.js';

/** The part of a Deno KV connection a listing needs (`Deno.Kv` and `@deno/kv` both have it). */
export interface ListableKv {
  list(selector: {
    start: readonly string[];
    end: readonly string[];
  }): AsyncIterable<{ readonly key: readonly unknown[]; readonly value: unknown }>;
}

/** An inspector for stores under the root ['floodgate'] on `kv`; `prefixOf` says each test's. */
export function inspector(
  kv: ListableKv,
  prefixOf: (store: DenoKvStore) => string,
): StoreInspector<DenoKvStore> {
  return {
    ttl: (key, store) => store.ttl(key),
    async keys(store) {
      const prefix = prefixOf(store);
      const out: string[] = [];
      // Every key starting with the prefix: it sorts after the prefix and before the prefix
      // followed by the highest code point.
      const range = { start: ['floodgate', prefix], end: ['floodgate', `${prefix}\u{10FFFF}`] };
      for await (const e of kv.list(range)) {
        const key = e.key[1];
        const end = expiryOf(e.value);
        if (typeof key === 'string' && end !== undefined && end > store.now()) out.push(key);
      }
      return out;
    },
  };
}
