import {
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import type { PolicyResult } from '@floodgate/core/store';
import { commandCalls, keysFor, rng } from '../redis-inspect.js';
import { redisCommand, redisCommands } from '../resp.js';
import { clientClockTrace, openClient } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

// Three combinations of kinds on one identity: every kind, a blockFor (block keys go through the
// batch's cache too) beside a plain policy, and the log's sorted set beside cached strings.
// Windows of minutes: real-time expiry never decides between the two runs of a trace.
const COMBOS: readonly (readonly Policy[])[] = [
  [
    tokenBucket({ limit: 20, interval: '1m', blockFor: '10s' }),
    fixedWindow({ limit: 30, window: '1m' }),
  ],
  [slidingWindow({ limit: 25, window: '1m' }), quota({ limit: 60, per: 'day' })],
  [
    leakyBucket({ limit: 12, interval: '1m', queue: 4 }),
    slidingWindowLog({ limit: 15, window: '1m', blockFor: '5s' }),
  ],
];

type Outcome = readonly PolicyResult[] | string;

/** Every key of the hot identity under `prefix`: name (less the prefix) → value and type. */
async function stateOf(port: number, prefix: string): Promise<Record<string, unknown>> {
  const keys = COMBOS.flatMap((policies, i) => keysFor(`${prefix}-${i}`, 'hot', policies));
  const types = await redisCommands(
    port,
    keys.map((k) => ['TYPE', k]),
  );
  const reads = await redisCommands(
    port,
    keys.map((k, i) => (types[i] === 'zset' ? ['ZRANGE', k, 0, -1, 'WITHSCORES'] : ['GET', k])),
  );
  const ttls = await redisCommands(
    port,
    keys.map((k) => ['PTTL', k]),
  );
  const out: Record<string, unknown> = {};
  keys.forEach((k, i) => {
    // Every key the limit scripts leave expires: PTTL -1 would be a key without one.
    out[k.slice(prefix.length)] = { type: types[i], value: reads[i], expires: ttls[i] !== -1 };
  });
  return out;
}

/**
 * One identity, many calls in flight: the batch script keeps each key's state in Lua for the run
 * (one GET and one SET per key, not one each per call), and must still decide every call, and
 * leave every key, exactly as one script run per call would. Registered only for an `ordered`
 * adapter: both tests read the decisions in the order the calls were made.
 */
export function hotIdentityTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => { url: string; port: number },
  tag: string,
  seed: number,
): void {
  const { it, expect } = api;
  // The trace's reference (one call per script run) and the expiry test's lone call and batch
  // run in the order they were made only on an ordered transport.
  if (adapter.ordered === false) return;

  async function trace(s: number, batch: boolean) {
    const prefix = `hot-${tag}-${s}-${batch}`;
    const { client, clock, call } = await clientClockTrace(
      adapter,
      server().url,
      prefix,
      COMBOS,
      batch,
    );
    // Scripts loaded, and Redis's clock learnt (a deadline reads TIME), before the trace.
    for (let i = 0; i < COMBOS.length; i++) {
      const deadline = performance.now() + 60_000;
      await Promise.all([0, 1, 2].map(() => call(i, 'peek', 1, deadline)));
      await call(i, 'peek', 1, deadline);
    }
    const random = rng(s);
    const pick = (n: number) => Math.floor(random() * n);
    const outcomes: Outcome[] = [];
    const states: Record<string, unknown>[] = [];
    const before = await commandCalls(server().port);
    try {
      for (let round = 0; round < 30; round++) {
        clock.now += pick(4) === 0 ? 0 : pick(20_000);
        const calls: Promise<Outcome>[] = [];
        const n = 1 + pick(round % 3 === 0 ? 200 : 70);
        for (let j = 0; j < n; j++) {
          const r = random();
          const i = pick(COMBOS.length);
          const cost = 1 + pick(3);
          // Late calls reply 'late' (STORE_TIMEOUT) and charge nothing, batched or not.
          const p =
            r < 0.05
              ? call(i, 'limit', cost, performance.now() - 60_000)
              : call(i, r < 0.2 ? 'peek' : r < 0.3 ? 'refund' : 'limit', cost);
          calls.push(
            p.then(
              (x) => x,
              (e: { code?: string }) => String(e.code),
            ),
          );
        }
        outcomes.push(...(await Promise.all(calls)));
        if (round % 10 === 9) states.push(await stateOf(server().port, prefix));
      }
    } finally {
      await adapter.disconnect(client);
    }
    const after = await commandCalls(server().port);
    const d = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
    return { outcomes, states, gets: d('get'), sets: d('set') };
  }

  it('one hot identity, many calls per batch: every decision and every key as one call per script run', async () => {
    for (const s of [seed, seed + 1]) {
      const one = await trace(s, false);
      const batched = await trace(s, true);
      expect(batched.outcomes).toEqual(one.outcomes);
      expect(batched.states).toEqual(one.states);
      // The trace reaches every outcome: admissions, denials (blocks too), late calls.
      const decided = one.outcomes.filter((o): o is readonly PolicyResult[] => Array.isArray(o));
      expect(decided.some((o) => o.every((r) => r.allowed))).toBe(true);
      expect(decided.some((o) => o.some((r) => !r.allowed))).toBe(true);
      expect(one.outcomes.includes('STORE_TIMEOUT')).toBe(true);
      expect(one.outcomes.every((o) => Array.isArray(o) || o === 'STORE_TIMEOUT')).toBe(true);
      // One read and one write per key and batch: a small share of the per-call ones.
      expect(batched.gets).toBeLessThan(one.gets / 4);
      expect(batched.sets).toBeLessThan(one.sets / 4);
    }
  }, 60_000);

  it('a key written by a batch keeps the expiry of its last write', async () => {
    const client = await openClient(adapter, server().url);
    try {
      const store = adapter.makeStore(client, {
        clock: 'client',
        now: () => 1_000_000,
        batch: true,
      });
      // 36 s a unit: the n-th admission of one instant leaves the bucket full in n × 36 s.
      const policies = [tokenBucket({ limit: 100, interval: '1h' })];
      const keys = keysFor(`hot-ttl-${tag}`, 'hot', policies);
      const results = await Promise.all(
        Array.from({ length: 40 }, () =>
          store.evaluate({ keys, policies, cost: 1, mode: 'limit' }),
        ),
      );
      expect(results.map(([r]) => r!.resetAfterMs)).toEqual(
        Array.from({ length: 40 }, (_, i) => (i + 1) * 36_000),
      );
      // The last write's expiry (40 × 36 s), not an earlier one's, and not past it.
      const ttl = Number(await redisCommand(server().port, ['PTTL', keys[0]!]));
      expect(ttl).toBeGreaterThan(39 * 36_000);
      expect(ttl).toBeLessThanOrEqual(40 * 36_000);
    } finally {
      await adapter.disconnect(client);
    }
  });
}
