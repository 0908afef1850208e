import { storeConformance } from '@floodgate/testkit';
import type { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { BridgeStore } from './helpers/bridge-store.js';
import { fixtureWorker, startWorkerd } from './helpers/workerd.js';

// One workerd for the file: every store the suite makes is a DurableObjectStore inside it (the
// bridge Worker), deciding in real SQLite-backed Durable Objects.
let started: Promise<{ mf: Miniflare; url: URL }> | undefined;
const workerd = () => {
  started ??= fixtureWorker('test/fixtures/bridge-worker.ts').then((w) => startWorkerd([w]));
  return started;
};
const api = { describe, it, expect, afterAll };
const inspect = { ttl: (key: string, store: BridgeStore) => store.ttl(key) };

// The suite's clock: exact TTLs, and the time-travelling semantics, retry and differential traces.
storeConformance(api, {
  name: 'DurableObjectStore (clock: client)',
  makeStore: async ({ now }) => new BridgeStore({ url: (await workerd()).url, now }),
  inspect,
  numRuns: 25,
  // Every call is an HTTP request to workerd and a SQLite commit there: long traces on a busy
  // machine take a while.
  timeoutMs: 180_000,
});

// The objects' own clock, identities spread over 4 objects.
storeConformance(api, {
  name: 'DurableObjectStore (clock: object, shards: 4)',
  controlsTime: false,
  makeStore: async () => new BridgeStore({ url: (await workerd()).url, shards: 4 }),
  inspect: { ...inspect, ttlSlackMs: 1000 },
  timeoutMs: 180_000,
  teardown: async () => {
    if (started !== undefined) await (await started).mf.dispose();
  },
});
