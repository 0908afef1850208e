import { type RedisServer, startRedisServer, storeConformance } from '@floodgate/testkit';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRedisStore } from '../src/index.js';

let server: RedisServer;
let client: ReturnType<typeof createClient>;
beforeAll(async () => {
  server = await startRedisServer();
  client = createClient({ url: server.url });
  await client.connect();
});
afterAll(async () => {
  await client?.disconnect();
  await server?.stop();
});

const inspect = {
  async ttl(key: string): Promise<number | undefined> {
    const ttl = Number(await client.sendCommand(['PTTL', key]));
    return ttl === -2 ? undefined : ttl;
  },
  async keys(): Promise<string[]> {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = (await client.sendCommand(['SCAN', cursor, 'COUNT', '1000'])) as [
        string,
        string[],
      ];
      cursor = String(next);
      out.push(...keys.map(String));
    } while (cursor !== '0');
    return out;
  },
  // Redis TTLs run on real time: allow for the round trips between decision and PTTL.
  ttlSlackMs: 1000,
};

storeConformance(
  { describe, it, expect },
  {
    name: 'NodeRedisStore (clock: server)',
    controlsTime: false,
    makeStore: () => new NodeRedisStore(client),
    inspect,
  },
);
