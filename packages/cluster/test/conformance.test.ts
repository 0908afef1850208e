// The shared conformance suite on a ShardedStore over three real redis-server shards: decisions
// on the client clock (random traces against the TypeScript reference) and on the servers' clock.
import { IoRedisStore } from '@floodgate/ioredis';
import { type StoreInspector, storeConformance } from '@floodgate/testkit';
import { commandCalls, type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

const servers: RedisServer[] = [];
const clients: Redis[] = [];
beforeAll(async () => {
  servers.push(...(await Promise.all([0, 1, 2].map(() => startRedisServer()))));
  for (const s of servers) clients.push(new Redis(s.url, { enableAutoPipelining: true }));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
});

// Shards are named by index: the key's shard is the client to ask.
const inspect: StoreInspector<ShardedStore> = {
  async ttl(key, store) {
    const ms = await clients[Number(store.locate(key))]!.pttl(key);
    return ms === -2 ? undefined : ms;
  },
  async keys() {
    const all = await Promise.all(clients.map((c) => c.keys('*')));
    return all.flat();
  },
  ttlSlackMs: 1000,
};

// Without breakers: a test's store serves every run of its random traces and every shrink of a
// failing one, and a shard's breaker carried failures from one run into the next. Store errors
// the reference shares still count as the shard's failures: after 5 in 10 s it opened, and each
// later call, hence each shrink, failed at its first step with STORE_UNAVAILABLE (the report was a
// lone `limit` call, the first failure lost). The breakers are tested in stall.test.ts.
const shards = (now?: () => number) =>
  new ShardedStore(
    clients.map((c) =>
      now === undefined ? new IoRedisStore(c) : new IoRedisStore(c, { clock: 'client', now }),
    ),
    { breaker: false },
  );

storeConformance(
  { describe, it, expect },
  {
    name: 'ShardedStore over 3 redis-server shards (clock: client)',
    makeStore: ({ now }) => shards(now),
    realTimeExpiry: true,
    inspect,
    disposeStore: (store) => store.close(),
    numRuns: 15,
  },
);

storeConformance(
  { describe, it, expect },
  {
    name: 'ShardedStore over 3 redis-server shards (clock: server)',
    controlsTime: false,
    makeStore: () => shards(),
    inspect,
    disposeStore: (store) => store.close(),
  },
);

describe('the conformance run really used every shard', () => {
  it('each server ran the limit script', async () => {
    for (const s of servers) expect((await commandCalls(s.port)).evalsha).toBeGreaterThan(20);
  });
});
