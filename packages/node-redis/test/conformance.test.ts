import { type RedisServer, startRedisServer, storeConformance } from '@floodgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NodeRedisClientLike, NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS, type Connected } from './clients.js';

let server: RedisServer;
const conns = new Map<string, Connected<NodeRedisClientLike>>();
beforeAll(async () => {
  server = await startRedisServer();
  for (const kind of CLIENT_KINDS) conns.set(kind.name, await kind.client(server.url));
});
afterAll(async () => {
  for (const c of conns.values()) await c.close();
  await server?.stop();
});

const client = (name: string): NodeRedisClientLike => conns.get(name)!.client;

function inspect(name: string) {
  return {
    async ttl(key: string): Promise<number | undefined> {
      const ttl = Number(await client(name).sendCommand(['PTTL', key]));
      return ttl === -2 ? undefined : ttl;
    },
    async keys(): Promise<string[]> {
      const out: string[] = [];
      let cursor = '0';
      do {
        const reply = (await client(name).sendCommand(['SCAN', cursor, 'COUNT', '1000'])) as [
          unknown,
          unknown[],
        ];
        cursor = String(reply[0]);
        out.push(...reply[1].map(String));
      } while (cursor !== '0');
      return out;
    },
    // Redis TTLs run on real time: allow for the round trips between decision and PTTL.
    ttlSlackMs: 1000,
  };
}

for (const { name } of CLIENT_KINDS) {
  storeConformance(
    { describe, it, expect },
    {
      name: `NodeRedisStore with ${name} (clock: client)`,
      makeStore: ({ now }) => new NodeRedisStore(client(name), { clock: 'client', now }),
      // PX runs on the server's real clock while the suite's clock stands still: stretched traces.
      realTimeExpiry: true,
      inspect: inspect(name),
      numRuns: 20,
    },
  );
  storeConformance(
    { describe, it, expect },
    {
      name: `NodeRedisStore with ${name} (clock: server)`,
      controlsTime: false,
      makeStore: () => new NodeRedisStore(client(name)),
      inspect: inspect(name),
    },
  );
}
