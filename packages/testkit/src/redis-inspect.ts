// Looking inside a throw-away Redis from the Redis store tests: which commands clients sent
// (INFO commandstats), every key with its TTL, where a policy's key lives; plus a seeded PRNG.
import { encodeIdentity, type Policy, policyKey } from '@floodgate/core';
import { redisCommand } from './resp.js';

/** Calls per command name, from `INFO commandstats`. */
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
  'pexpire',
]);

/** Commands clients sent between two commandstats snapshots (not those scripts ran, nor INFO). */
export function delta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    if (SCRIPT_INNER.has(k) || k === 'info') continue;
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** A small deterministic PRNG (mulberry32). */
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

/** The Redis keys of `identity`'s policies under `prefix`, in policy order. */
export function keysFor(prefix: string, identity: string, policies: readonly Policy[]): string[] {
  const id = encodeIdentity(identity);
  return policies.map((p) => policyKey(prefix, id, p.id));
}

/** Every key in the server with its PTTL (SCAN, never KEYS). */
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
