import { fixedWindow, tokenBucket } from '@floodgate/core';
import { encodeIdentity, policyKey } from '@floodgate/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allKeysWithTtl,
  commandCalls,
  delta,
  keysFor,
  type RedisServer,
  redisCommand,
  rng,
  startRedisServer,
} from '../src/redis/index.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('Redis inspection helpers', () => {
  it('commandCalls and delta count what clients sent, not what scripts ran, nor INFO', async () => {
    const before = await commandCalls(server.port);
    await redisCommand(server.port, ['SET', 'a', '1']);
    await redisCommand(server.port, ['EVAL', "return redis.call('GET', KEYS[1])", 1, 'a']);
    await redisCommand(server.port, ['DEL', 'a']);
    const after = await commandCalls(server.port);
    expect(after.set! - (before.set ?? 0)).toBe(1);
    expect(after.get! - (before.get ?? 0)).toBe(1);
    // SET and GET are also what the limit script calls: delta leaves them out.
    expect(delta(before, after)).toEqual({ eval: 1, del: 1 });
  });

  it('allKeysWithTtl lists every key with its PTTL (-1 without expiry)', async () => {
    await redisCommand(server.port, ['SET', 'ttl:a', '1', 'PX', 60_000]);
    await redisCommand(server.port, ['SET', 'ttl:b', '1']);
    const keys = await allKeysWithTtl(server.port);
    expect(keys.get('ttl:a')).toBeGreaterThan(59_000);
    expect(keys.get('ttl:a')).toBeLessThanOrEqual(60_000);
    expect(keys.get('ttl:b')).toBe(-1);
  });

  it('keysFor gives the key of each policy, in order', () => {
    const policies = [
      tokenBucket({ limit: 5, interval: '1m' }),
      fixedWindow({ limit: 1, window: 10 }),
    ];
    expect(keysFor('p', 'user:{1}', policies)).toEqual(
      policies.map((p) => policyKey('p', encodeIdentity('user:{1}'), p.id)),
    );
  });

  it('rng is a deterministic PRNG in [0, 1)', () => {
    const a = rng(42);
    const b = rng(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(xs).size).toBe(1000);
    expect(rng(7)()).not.toBe(rng(42)());
  });
});
