// The conformance suite in Deno, on Deno's own KV (`Deno.openKv(path)`): bundled by
// test/deno-conformance.test.ts and run with `deno run --unstable-kv`. Prints each failure, then
// the summary as its last line (JSON).
import { storeConformance } from '@floodgate/testkit';
import { DenoKvStore } from '../../src/index.js';
import { inspector, type ListableKv } from '../support/inspect.js';
import { miniTest } from './mini-test.js';

type Kv = ListableKv & ConstructorParameters<typeof DenoKvStore>[0] & { close(): void };
declare const Deno: { args: string[]; openKv(path: string): Promise<Kv> };

const kv = await Deno.openKv(Deno.args[0]!);
const prefixes = new WeakMap<DenoKvStore, string>();
const { api, run } = miniTest();
storeConformance(api, {
  name: 'DenoKvStore (Deno, Deno.openKv)',
  makeStore: ({ now, prefix }) => {
    const store = new DenoKvStore(kv, { now });
    prefixes.set(store, prefix);
    return store;
  },
  inspect: inspector(kv, (store) => prefixes.get(store)!),
  teardown: () => kv.close(),
});
const summary = await run();
for (const f of summary.failures) console.error(`FAIL ${f.name}\n  ${f.error}`);
console.log(JSON.stringify(summary));
