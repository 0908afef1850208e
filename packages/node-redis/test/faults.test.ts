import {
  createLimiter,
  type Decision,
  fixedWindow,
  leakyBucket,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { type RedisServer, redisCommand, startRedisServer } from '@floodgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS } from './clients.js';
import { allKeysWithTtl, commandCalls, delta, keysFor, rng } from './helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENT_KINDS)('faults with $name', (kind) => {
  const tag = kind.name.replace(/\W+/g, '');

  it('SCRIPT FLUSH in the middle of a stream of decisions fails none of them', async () => {
    const conn = await kind.client(server.url);
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(conn.client),
        policy: [
          slidingWindowLog({ limit: 250, window: '1h' }),
          tokenBucket({ limit: 1000, interval: '1h' }),
        ],
        prefix: `flush-${tag}`,
        onStoreError: 'throw', // an error must surface, not hide behind the fallback
        blockCache: false,
      });
      const before = await commandCalls(server.port);
      const decisions: Decision[] = [];
      for (let round = 0; round < 30; round++) {
        const batch = Array.from({ length: 20 }, () => limiter.limit('stream'));
        if (round % 10 === 5) await redisCommand(server.port, ['SCRIPT', 'FLUSH']);
        decisions.push(...(await Promise.all(batch)));
      }
      expect(decisions.filter((d) => d.allowed)).toHaveLength(250);
      expect(decisions.every((d) => d.reason === undefined)).toBe(true);
      const d = delta(before, await commandCalls(server.port));
      expect(d.eval).toBeGreaterThanOrEqual(3);
      expect(d.evalsha).toBe(600);
    } finally {
      await conn.close();
    }
  });

  it('a redis-server restart is survived once the server is back', async () => {
    const own = await startRedisServer();
    const conn = await kind.client(own.url, { reconnectMs: 50 });
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(conn.client),
        policy: fixedWindow({ limit: 5, window: '1h' }),
        onStoreError: 'throw',
        blockCache: false,
      });
      expect((await limiter.limit('k')).remaining).toBe(4);
      expect((await limiter.limit('k')).remaining).toBe(3);
      await own.restart();
      let d: Decision | undefined;
      const deadline = Date.now() + 20_000;
      while (d === undefined && Date.now() < deadline) {
        d = await limiter.limit('k').catch(async () => {
          await new Promise((r) => setTimeout(r, 20));
          return undefined;
        });
      }
      // The restart lost the data (no persistence): the window starts over.
      expect(d?.allowed).toBe(true);
      expect(d?.remaining).toBe(4);
      expect((await limiter.limit('k')).remaining).toBe(3);
    } finally {
      await conn.close();
      await own.stop();
    }
  });
});

describe('TTLs after a randomized run', () => {
  it('every key has a TTL, and none outlives its state', async () => {
    const own = await startRedisServer();
    const conn = await CLIENT_KINDS[0]!.client(own.url);
    try {
      const sets: Policy[][] = [
        [fixedWindow({ limit: 5, window: '2s' })],
        [fixedWindow({ limit: 50, window: '1h' })],
        [slidingWindow({ limit: 4, window: 700 })],
        [slidingWindowLog({ limit: 6, window: '3s' })],
        [tokenBucket({ limit: 3, interval: '1s', burst: 5 })],
        [tokenBucket({ limit: 100, interval: '1d' })],
        [leakyBucket({ limit: 10, interval: '1s', queue: 4 })],
        [
          slidingWindowLog({ limit: 3, window: 400 }),
          fixedWindow({ limit: 8, window: '1m' }),
          leakyBucket({ limit: 2, interval: 500, queue: 2 }),
        ],
      ];
      const limiters = sets.map((policy, i) =>
        createLimiter({
          store: new NodeRedisStore(conn.client),
          policy,
          prefix: `ttl${i}`,
          onStoreError: 'throw',
          blockCache: false,
        }),
      );
      const random = rng(7);
      const last = new Map<string, number>(); // key → resetAfterMs of the last decision that saw it
      for (let round = 0; round < 40; round++) {
        const batch = Array.from({ length: 30 }, () => {
          const i = Math.floor(random() * sets.length);
          const identity = `user-${Math.floor(random() * 12)}`;
          const cost = random() < 0.8 ? 1 : 2;
          const limiter = limiters[i]!;
          return (random() < 0.1 ? limiter.peek(identity) : limiter.limit(identity, { cost })).then(
            (d) => {
              // One connection: replies resolve in the order Redis ran the scripts.
              const keys = keysFor(`ttl${i}`, identity, sets[i]!);
              for (const [p, k] of keys.entries()) last.set(k, d.policies[p]!.resetAfterMs);
            },
          );
        });
        await Promise.all(batch);
        if (round % 8 === 7) await new Promise((r) => setTimeout(r, 50));
      }
      const keys = await allKeysWithTtl(own.port);
      expect(keys.size).toBeGreaterThan(20);
      for (const [key, pttl] of keys) {
        expect(last.has(key), key).toBe(true);
        if (pttl === -2) continue;
        expect(pttl, key).toBeGreaterThan(0);
        expect(pttl, key).toBeLessThanOrEqual(last.get(key)!);
      }
    } finally {
      await conn.close();
      await own.stop();
    }
  });
});
