import { type RedisServer, startRedisServer, storeConformance } from '@floodgate/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { enableAutoPipelining: true });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const inspect = {
  async ttl(key: string): Promise<number | undefined> {
    const ttl = await redis.pttl(key);
    return ttl === -2 ? undefined : ttl;
  },
  async keys(): Promise<string[]> {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      out.push(...keys);
    } while (cursor !== '0');
    return out;
  },
  // Redis TTLs run on real time: allow for the round trips between decision and PTTL.
  ttlSlackMs: 1000,
};

storeConformance(
  { describe, it, expect },
  {
    name: 'IoRedisStore (clock: client)',
    makeStore: ({ now }) => new IoRedisStore(redis, { clock: 'client', now }),
    // PX runs on the server's real clock while the suite's clock stands still: stretched traces.
    realTimeExpiry: true,
    inspect,
    numRuns: 25,
  },
);

storeConformance(
  { describe, it, expect },
  {
    name: 'IoRedisStore (clock: server)',
    controlsTime: false,
    makeStore: () => new IoRedisStore(redis),
    inspect,
  },
);
