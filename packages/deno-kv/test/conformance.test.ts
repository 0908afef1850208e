// The conformance suite every store runs, in Node, on `@deno/kv`: the Deno KV SQLite engine as
// a native module, one database file for both runs (each test has its own prefix): on the
// suite's clock, then on the store's default clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKv } from '@deno/kv';
import { storeConformance } from '@floodgate/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { DenoKvStore } from '../src/index.js';
import { inspector } from './support/inspect.js';

const dir = mkdtempSync(join(tmpdir(), 'floodgate-deno-kv-'));
const kv = await openKv(join(dir, 'conformance.sqlite'));
const prefixes = new WeakMap<DenoKvStore, string>();

storeConformance(
  { describe, it, expect, afterAll },
  {
    name: 'DenoKvStore (Node, @deno/kv)',
    makeStore: ({ now, prefix }) => {
      const store = new DenoKvStore(kv, { now });
      prefixes.set(store, prefix);
      return store;
    },
    inspect: inspector(kv, (store) => prefixes.get(store)!),
  },
);

// On its default clock (Date.now), as a store on its own clock: the tests without time travel.
storeConformance(
  { describe, it, expect, afterAll },
  {
    name: 'DenoKvStore (Node, @deno/kv, real clock)',
    controlsTime: false,
    makeStore: ({ prefix }) => {
      const store = new DenoKvStore(kv);
      prefixes.set(store, prefix);
      return store;
    },
    inspect: { ...inspector(kv, (store) => prefixes.get(store)!), ttlSlackMs: 1000 },
    teardown: () => {
      kv.close();
      rmSync(dir, { recursive: true, force: true });
    },
  },
);
