// ShardedStore over real redis-server shards: 4 000 identities over 3 shards, then 4; one shard
// stopped and restarted while the others keep exact counts.
import {
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  tokenBucket,
} from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { NodeRedisStore } from '@floodgate/node-redis';
import {
  keysFor,
  type RedisServer,
  redisCommand,
  startRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardedStore, type ShardHealthEvent } from '../src/index.js';

const servers: RedisServer[] = [];
const clients: Redis[] = [];
beforeAll(async () => {
  servers.push(...(await Promise.all([0, 1, 2, 3].map(() => startRedisServer()))));
  for (const s of servers) {
    const c = new Redis(s.url, { enableAutoPipelining: true, retryStrategy: () => 50 });
    c.on('error', () => {}); // the stopped shard
    clients.push(c);
  }
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `n` decisions for every identity, in batches of concurrent calls. */
async function hit(limiter: Limiter, ids: readonly string[], n: number): Promise<Decision[][]> {
  const out: Decision[][] = ids.map(() => []);
  for (let round = 0; round < n; round++) {
    for (let at = 0; at < ids.length; at += 1000) {
      const batch = ids.slice(at, at + 1000);
      const ds = await Promise.all(batch.map((id) => limiter.limit(id)));
      for (const [i, d] of ds.entries()) out[at + i]!.push(d);
    }
  }
  return out;
}
const admitted = (ds: Decision[]) => ds.filter((d) => d.allowed).length;

describe('ShardedStore over real redis-server shards', () => {
  it('3 shards → 4: about 1/4 of 4 000 identities move, the rest keep their exact counts', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const shards = clients.map((c, i) => ({ store: new IoRedisStore(c), name: names[i]! }));
    const policy = [
      fixedWindow({ limit: 5, window: '1h' }),
      tokenBucket({ limit: 9, interval: '1h' }),
    ];
    const three = new ShardedStore(shards.slice(0, 3));
    const four = new ShardedStore(shards);
    const make = (store: ShardedStore) =>
      createLimiter({
        store,
        policy,
        prefix: 'grow',
        onStoreError: 'throw',
        timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
        blockCache: false,
      });
    const ids = Array.from({ length: 4000 }, (_, i) => `tenant-${i}`);
    const keyOf = (id: string) => keysFor('grow', id, policy)[0]!;

    const before = await hit(make(three), ids, 3);
    expect(before.every((ds) => admitted(ds) === 3)).toBe(true);
    const after = await hit(make(four), ids, 4);

    const moved = ids.filter((id) => four.locate(keyOf(id)) !== three.locate(keyOf(id)));
    expect(Math.abs(moved.length / ids.length - 0.25)).toBeLessThanOrEqual(0.05);
    ids.forEach((id, i) => {
      if (moved.includes(id)) {
        // Only to the new shard, and there it starts from nothing: 4 of 4 admitted.
        expect(four.locate(keyOf(id))).toBe('d');
        expect(admitted(after[i]!)).toBe(4);
      } else {
        // Same shard, same counter: 3 + 2 = the limit of 5, exactly.
        expect(after[i]!.map((d) => d.allowed)).toEqual([true, true, false, false]);
      }
    });
    expect(after.flat().every((d) => d.reason === undefined)).toBe(true);
    console.log(`[shards] 3 → 4 shards: ${moved.length} of ${ids.length} identities moved`);
  });

  it('a stopped shard: only its identities change (onStoreError); restarted, exact again', async () => {
    const [a, b, c] = servers;
    // Fail fast while the shard is down instead of queueing: rejectIfNotReady. One shard on
    // node-redis: any Store will do.
    const nodeRedis = createClient({ url: c!.url, socket: { reconnectStrategy: () => 50 } });
    nodeRedis.on('error', () => {});
    await nodeRedis.connect();
    const events: ShardHealthEvent[] = [];
    const store = new ShardedStore(
      [
        { store: new IoRedisStore(clients[0]!, { rejectIfNotReady: true }), name: 'a' },
        { store: new IoRedisStore(clients[1]!, { rejectIfNotReady: true }), name: 'b' },
        { store: new NodeRedisStore(nodeRedis, { rejectIfNotReady: true }), name: 'c' },
      ],
      { onHealthChange: (e) => events.push(e) },
    );
    try {
      const errors: string[] = [];
      // The default onStoreError: the shards' fallbacks (one MemoryStore each, same hashing).
      const limiter = createLimiter({
        store,
        policy: fixedWindow({ limit: 4, window: '1h' }),
        prefix: 'stop',
        timeoutMs: 10_000, // the stopped shard fails fast (rejectIfNotReady); the others must not time out under load
        blockCache: false,
        onError: (e) => errors.push(e.message),
      });
      const ids = Array.from({ length: 300 }, (_, i) => `user-${i}`);
      const on = (id: string) => store.locate(keysFor('stop', id, limiter.policies)[0]!);
      const onB = ids.filter((id) => on(id) === 'b');
      const others = ids.filter((id) => on(id) !== 'b');
      expect(onB.length).toBeGreaterThan(50);

      expect((await hit(limiter, ids, 2)).every((ds) => admitted(ds) === 2)).toBe(true);
      process.kill(b!.pid, 'SIGKILL');
      while (clients[1]!.status === 'ready') await sleep(10);

      const down = await hit(limiter, ids, 3);
      ids.forEach((id, i) => {
        const ds = down[i]!;
        if (on(id) === 'b') {
          // Decided by the fallback, which starts from nothing: 3 of its 4 admitted.
          expect(ds.map((d) => [d.allowed, d.reason])).toEqual([
            [true, 'store-unavailable'],
            [true, 'store-unavailable'],
            [true, 'store-unavailable'],
          ]);
        } else {
          expect(ds.map((d) => [d.allowed, d.reason])).toEqual([
            [true, undefined],
            [true, undefined],
            [false, undefined],
          ]);
        }
      });
      expect(errors).toHaveLength(onB.length * 3);
      expect(errors.every((m) => m.startsWith('shard "b"'))).toBe(true);
      expect(store.health().map((h) => h.state)).toEqual(['healthy', 'failing', 'healthy']);
      // b's own breaker opened; the others' stayed closed (the limiter has none of its own).
      expect(store.health().map((h) => h.circuit)).toEqual(['closed', 'open', 'closed']);

      await b!.restart(); // empty: no persistence
      while ((clients[1]!.status as string) !== 'ready') await sleep(10);
      // After its cooldown the breaker lets a probe through; a peek charges nothing.
      while ((await limiter.peek(onB[0]!)).reason !== undefined) await sleep(50);
      expect(store.health()[1]!.circuit).toBe('closed');
      const back = await hit(limiter, onB, 5);
      // Redis again, from an empty server: exactly 4 of 5.
      expect(
        back.every((ds) => ds.map((d) => d.allowed).join() === 'true,true,true,true,false'),
      ).toBe(true);
      expect(back.flat().every((d) => d.reason === undefined)).toBe(true);
      const still = await hit(limiter, others, 1);
      expect(still.every(([d]) => d!.allowed === false && d!.reason === undefined)).toBe(true);
      expect(store.health().map((h) => h.state)).toEqual(['healthy', 'healthy', 'healthy']);
      expect(events.map((e) => [e.name, e.to])).toEqual([
        ['b', 'failing'],
        ['b', 'healthy'],
      ]);
      expect(await redisCommand(a!.port, ['PING'])).toBe('PONG');
    } finally {
      await nodeRedis.disconnect().catch(() => {});
    }
  });
});
