import {
  createLimiter,
  type Decision,
  fixedWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { type RedisCluster, redisCommand, startRedisCluster } from '@floodgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS } from './clients.js';
import { commandCalls, keysFor } from './helpers.js';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const policies = [
  tokenBucket({ limit: 6, interval: '1h' }),
  slidingWindowLog({ limit: 4, window: '1h' }),
  fixedWindow({ limit: 5, window: '1d' }),
];

describe.each(CLIENT_KINDS)('NodeRedisStore on a Redis Cluster with $name', (kind) => {
  const tag = kind.name.replace(/\W+/g, '');

  it('runs each multi-policy decision as one script on the master owning the identity', async () => {
    const conn = await kind.cluster(cluster.startupNodes);
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(conn.client),
        policy: policies,
        prefix: `c-${tag}`,
        onStoreError: 'throw',
        blockCache: false,
      });
      const identities = Array.from({ length: 24 }, (_, i) => `user-${i}`);
      const ds = await Promise.all(
        identities.flatMap((id) =>
          Array.from({ length: 7 }, () => limiter.limit(id).then((d) => [id, d] as const)),
        ),
      );
      for (const id of identities)
        expect(ds.filter(([i, d]) => i === id && d.allowed)).toHaveLength(4);
      const owners = new Set(
        await Promise.all(
          identities.map(
            async (id) => (await cluster.masterOf(keysFor(`c-${tag}`, id, policies)[0]!)).port,
          ),
        ),
      );
      expect(owners.size).toBe(3);
      await limiter.reset('user-0');
      expect((await limiter.limit('user-0')).remaining).toBe(3);
    } finally {
      await conn.close();
    }
  });
});

describe('failover', () => {
  it('is survived: the new master has no script cached (NOSCRIPT → EVAL), the state was replicated', async () => {
    const conn = await CLIENT_KINDS[0]!.cluster(cluster.startupNodes);
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(conn.client),
        policy: fixedWindow({ limit: 10, window: '1d' }),
        prefix: 'fo',
        onStoreError: 'throw',
        blockCache: false,
      });
      const key = keysFor('fo', 'failover', limiter.policies)[0]!;
      const before: Decision[] = [];
      for (let i = 0; i < 4; i++) before.push(await limiter.limit('failover'));
      const master = await cluster.masterOf(key);
      const myId = String(await redisCommand(master.port, ['CLUSTER', 'MYID']));
      const nodes = String(await redisCommand(master.port, ['CLUSTER', 'NODES'])).split('\n');
      const replicaPort = Number(
        nodes
          .find((l) => l.includes(` slave ${myId}`) || l.includes(` replica ${myId}`))!
          .split(' ')[1]!
          .split(/[:@]/)[1],
      );
      await redisCommand(master.port, ['WAIT', 1, 1000]);
      expect(await redisCommand(replicaPort, ['CLUSTER', 'FAILOVER'])).toBe('OK');
      const deadline = Date.now() + 10_000;
      while ((await cluster.masterOf(key)).port !== replicaPort && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const after: Decision[] = [];
      for (let i = 0; i < 8; i++) after.push(await limiter.limit('failover'));
      expect([...before, ...after].filter((d) => d.allowed)).toHaveLength(10);
      expect(after[0]!.remaining).toBe(5);
      expect((await commandCalls(replicaPort)).eval).toBeGreaterThanOrEqual(1);
      await cluster.waitHealthy();
    } finally {
      await conn.close();
    }
  });
});
