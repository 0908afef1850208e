// Runs of identical calls in one batch (batch.lua, Repeats): sent as one entry, decided by the
// script as one call of n times the cost when every one of them is admitted, and replayed by the
// client on the state before them; one by one otherwise. Every decision and every key must be
// those of one script run per call.
import {
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  tokenBucket,
} from '@floodgate/core';
import type { PolicyResult } from '@floodgate/core/store';
import { keysFor, rng } from '../redis-inspect.js';
import { redisCommands } from '../resp.js';
import { clientClockTrace, openClient } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

// The kinds whose calls add up, alone and together, with and without a penalty; limits a run of
// up to 80 calls passes, so runs end in denials (and blocks) as often as not. Windows and blocks
// of a minute or more: real-time expiry decides nothing.
const COMBOS: readonly (readonly Policy[])[] = [
  [fixedWindow({ limit: 40, window: '1m', blockFor: '1m' })],
  [
    slidingWindow({ limit: 30, window: '1m' }),
    tokenBucket({ limit: 25, interval: '1m', blockFor: '2m' }),
  ],
  [leakyBucket({ limit: 12, interval: '1m', queue: 60 })],
  [tokenBucket({ limit: 7, interval: '7s', burst: 60 }), quota({ limit: 400, per: 'day' })],
];

type Outcome = readonly PolicyResult[] | string;

/**
 * Registers the repeats tests for one adapter (inside its `describe`); none for an adapter that
 * is not `ordered`, since both read the answers of identical calls in the order they were made.
 * @example
 * ```ts
 * repeatsTests(api, adapter, server, tag, seed);
 * ```
 */
export function repeatsTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => { url: string; port: number },
  tag: string,
  seed: number,
): void {
  const { it, expect } = api;
  // Identical calls differ only by their turn: which one Redis runs first decides its answer,
  // and the reference (one script run per call) and the lone call keep the callers' order only
  // on an ordered transport.
  if (adapter.ordered === false) return;

  async function trace(s: number, batch: boolean) {
    const prefix = `rep-${tag}-${s}-${batch}`;
    const { client, clock, keysOf, call } = await clientClockTrace(
      adapter,
      server().url,
      prefix,
      COMBOS,
      batch,
    );
    // Scripts loaded and Redis's clock learnt (a deadline reads TIME) before the trace.
    for (let i = 0; i < COMBOS.length; i++) await call(i, 'peek', 1, performance.now() + 60_000);
    const random = rng(s);
    const pick = (n: number) => Math.floor(random() * n);
    const outcomes: Outcome[] = [];
    const states: unknown[] = [];
    try {
      for (let round = 0; round < 40; round++) {
        clock.now += pick(3) === 0 ? 0 : pick(15_000);
        const calls: Promise<Outcome>[] = [];
        // Runs of identical calls, a few of them not 'limit' or past their deadline.
        for (let run = 1 + pick(4); run > 0; run--) {
          const i = pick(COMBOS.length);
          const cost = 1 + pick(2);
          const r = random();
          const mode = r < 0.1 ? 'peek' : r < 0.2 ? 'refund' : 'limit';
          const late = r > 0.95 ? performance.now() - 60_000 : undefined;
          for (let n = 1 + pick(80); n > 0; n--) {
            calls.push(
              call(i, mode, cost, late).then(
                (x) => x,
                (e: { code?: string }) => String(e.code),
              ),
            );
          }
        }
        outcomes.push(...(await Promise.all(calls)));
        if (round % 8 === 7) {
          const keys = keysOf.flat();
          const values = await redisCommands(
            server().port,
            keys.map((k) => ['GET', k]),
          );
          const ttls = await redisCommands(
            server().port,
            keys.map((k) => ['PTTL', k]),
          );
          // Every key a script leaves expires (PTTL -1 would be one without an expiry).
          states.push(
            values.map((v, j) => [String(keys[j]).slice(prefix.length), v, ttls[j] !== -1]),
          );
        }
      }
    } finally {
      await adapter.disconnect(client);
    }
    return { outcomes, states };
  }

  it('runs of identical calls in a batch: every decision and every key as one call per script run', async () => {
    for (const s of [seed, seed + 1]) {
      const one = await trace(s, false);
      const batched = await trace(s, true);
      expect(batched.outcomes).toEqual(one.outcomes);
      expect(batched.states).toEqual(one.states);
      // The trace reaches runs all admitted, runs that end in denials, and late runs.
      const decided = one.outcomes.filter((o): o is readonly PolicyResult[] => Array.isArray(o));
      expect(decided.filter((o) => o.every((r) => r.allowed)).length).toBeGreaterThan(100);
      expect(decided.filter((o) => o.some((r) => !r.allowed)).length).toBeGreaterThan(100);
      expect(one.outcomes.includes('STORE_TIMEOUT')).toBe(true);
    }
  }, 60_000);

  it('server clock: a run of identical calls is answered as the calls one after another', async () => {
    const client = await openClient(adapter, server().url);
    try {
      const store = adapter.makeStore(client, { batch: true });
      // A full bucket and a new window at whatever time the runs read TIME: 36 s a unit.
      const policies = [
        tokenBucket({ limit: 100, interval: '1h' }),
        fixedWindow({ limit: 50, window: '1h' }),
      ];
      const keys = keysFor(`rep-server-${tag}`, 'hot', policies);
      const wave = (n: number) =>
        Promise.all(
          Array.from({ length: n }, () =>
            store.evaluate({ keys, policies, cost: 1, mode: 'limit' }),
          ),
        );
      const view = (results: (readonly PolicyResult[])[]) =>
        results.map(([tb, fw]) => [tb!.allowed && fw!.allowed, tb!.remaining, fw!.remaining]);
      // The first call of a wave goes alone (nothing in flight), the others as one run: 39 all
      // admitted (decided as one), then 19 of which 9 are admitted (one by one).
      const first = await wave(40);
      expect(view(first)).toEqual(Array.from({ length: 40 }, (_, i) => [true, 99 - i, 49 - i]));
      // One TIME for the run: each admission moves the bucket's reset 36 s further.
      const resets = first.map(([tb]) => tb!.resetAfterMs);
      expect(resets.slice(2).map((r, i) => r - resets[i + 1]!)).toEqual(Array(38).fill(36_000));
      const second = await wave(20);
      expect(view(second)).toEqual(
        Array.from({ length: 20 }, (_, i) => (i < 10 ? [true, 59 - i, 9 - i] : [false, 50, 0])),
      );
    } finally {
      await adapter.disconnect(client);
    }
  });
}
