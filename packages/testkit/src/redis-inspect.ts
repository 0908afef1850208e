// Looking inside a throw-away Redis from the Redis store tests: which commands clients sent
// (INFO commandstats), every key with its TTL, where a policy's key lives; plus a seeded PRNG.
import type { Policy } from '@floodgate/core';
import { blockKey, encodeIdentity, policyKey } from '@floodgate/core/store';
import { redisCommand } from './resp.js';

/**
 * Calls per command name, from `INFO commandstats`: every command the server ran, those a
 * script called included (see `delta`).
 * @example
 * ```ts
 * import { commandCalls, type RedisServer } from '@floodgate/testkit/redis';
 *
 * declare const server: RedisServer;
 * const calls = await commandCalls(server.port);
 * const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0);
 * ```
 * @public
 */
export async function commandCalls(port: number): Promise<Record<string, number>> {
  const info = String(await redisCommand(port, ['INFO', 'commandstats']));
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

// Commands the limit script itself calls: commandstats counts them too.
const SCRIPT_INNER = new Set([
  'get',
  'set',
  'incrby',
  'time',
  'zrange',
  'zcount',
  'zrangebyscore',
  'zadd',
  'zrem',
  'zcard',
  'zremrangebyscore',
  'zscore',
  'pexpire',
  'pexpireat',
]);

// What a store's change feed sends on its own connection, at its own pace: the subscription,
// the handshake of a new connection, the heartbeat; and the announcement a refund may make.
const FEED = new Set(['subscribe', 'ping', 'publish', 'hello', 'client|setinfo', 'client|setname']);

/**
 * Commands clients sent between two commandstats snapshots (not those scripts ran, nor INFO,
 * nor the change feed's: its subscription, heartbeat and announcements).
 * @example
 * One limiter call is one `EVALSHA`, nothing more:
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { commandCalls, delta, type RedisServer } from '@floodgate/testkit/redis';
 * import { expect } from 'vitest';
 *
 * declare const server: RedisServer;
 * declare const limiter: Limiter; // on a Redis store connected to `server`
 * await limiter.limit('warm-up'); // the script is cached from here on
 * const before = await commandCalls(server.port);
 * await limiter.limit('user-1');
 * expect(delta(before, await commandCalls(server.port))).toEqual({ evalsha: 1 });
 * ```
 * @public
 */
export function delta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    if (SCRIPT_INNER.has(k) || FEED.has(k) || k === 'info') continue;
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/**
 * A small deterministic PRNG (mulberry32): numbers in [0, 1), the same sequence for a seed on
 * every run, so a failing randomized test can be replayed.
 * @example
 * ```ts
 * import { rng } from '@floodgate/testkit/redis';
 *
 * const random = rng(42);
 * const costs = Array.from({ length: 100 }, () => 1 + Math.floor(random() * 5)); // 1 to 5
 * ```
 * @public
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The Redis keys of `identity`'s policies under `prefix`, in policy order.
 * @example
 * ```ts
 * import { fixedWindow, tokenBucket } from '@floodgate/core';
 * import { keysFor } from '@floodgate/testkit/redis';
 *
 * const policies = [tokenBucket({ limit: 10, interval: '1s' }), fixedWindow({ limit: 1000, window: '1h' })];
 * // Both in the hash slot of `{user-1}`: `api:{user-1}:<policy id>`.
 * const [bucketKey, windowKey] = keysFor('api', 'user-1', policies);
 * ```
 * @public
 */
export function keysFor(prefix: string, identity: string, policies: readonly Policy[]): string[] {
  const id = encodeIdentity(identity);
  const keys = policies.map((p) => policyKey(prefix, id, p.id));
  // A limiter's call keys: then one block key per policy with blockFor (StoreCall.keys).
  policies.forEach((p, i) => {
    if (p.blockForMs !== undefined) keys.push(blockKey(keys[i]!));
  });
  return keys;
}

/**
 * Every key in the server with its PTTL (SCAN, never KEYS).
 * @example
 * ```ts
 * import { allKeysWithTtl, type RedisServer } from '@floodgate/testkit/redis';
 * import { expect, it } from 'vitest';
 *
 * declare const server: RedisServer;
 * it('leaves no key without a TTL', async () => {
 *   for (const [key, ttl] of await allKeysWithTtl(server.port)) expect(ttl, key).toBeGreaterThan(0);
 * });
 * ```
 * @public
 */
export async function allKeysWithTtl(port: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = (await redisCommand(port, ['SCAN', cursor, 'COUNT', 1000])) as [
      string,
      string[],
    ];
    cursor = next;
    for (const k of keys) out.set(k, Number(await redisCommand(port, ['PTTL', k])));
  } while (cursor !== '0');
  return out;
}
