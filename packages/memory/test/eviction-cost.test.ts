// Past maxKeys, every insert evicts. The old sweep found the oldest entry with
// `table.entries().next()`: V8 leaves a deleted slot in a Map's backing store until the next
// rehash, and an iterator starts at slot 0, so each look walked every key evicted since then
// (a 9–83 µs sawtooth per decision). That walk happens inside V8, where no JavaScript counter
// sees it: these tests bound the work they can see (entries looked at by the store) and assert
// that the insert path starts no Map iteration at all. Nothing here times anything.
import { fixedWindow, type Policy } from '@floodgate/core';
import type { StoreCall } from '@floodgate/core/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { evictionOf } from '../src/eviction.js';
import { MemoryStore } from '../src/index.js';

const T0 = 1_700_000_040_000;

function decider(store: MemoryStore, policy: Policy, prefix: string) {
  const policies = [policy];
  return (identity: string) => {
    const call: StoreCall = {
      keys: [`${prefix}:{${identity}}:${policy.id}`],
      policies,
      cost: 1,
      mode: 'limit',
      identity,
      prefix,
    };
    return store.evaluateSync(call)[0]!.allowed;
  };
}

const ITERATING = ['entries', 'keys', 'values', 'forEach', Symbol.iterator] as const;

/** Counts Map iterations started while `run` runs (synchronously: nothing else runs then). */
function mapIterations(run: () => void): number {
  const proto = Map.prototype as unknown as Record<string | symbol, (...a: unknown[]) => unknown>;
  const saved = ITERATING.map((name) => proto[name]!);
  let started = 0;
  ITERATING.forEach((name, i) => {
    const original = saved[i]!;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      started += 1;
      return original.apply(this, args);
    };
  });
  try {
    run();
  } finally {
    ITERATING.forEach((name, i) => {
      proto[name] = saved[i]!;
    });
  }
  return started;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('MemoryStore eviction cost', () => {
  it('1M rotating identities at maxKeys 100k: no Map iteration, size held at the bound', () => {
    const store = new MemoryStore({ maxKeys: 100_000, now: () => T0 });
    const limit = decider(store, fixedWindow({ limit: 10, window: '1h' }), 'rot');
    let denied = 0;
    const started = mapIterations(() => {
      for (let i = 0; i < 1_000_000; i++) if (!limit(`id-${i}`)) denied += 1;
    });
    expect(denied).toBe(0);
    expect(started).toBe(0);
    expect(store.size).toBe(100_000);
  }, 120_000);

  it('with several tables past the bound, still no Map iteration', () => {
    const store = new MemoryStore({ maxKeys: 1_000, now: () => T0 });
    const policy = fixedWindow({ limit: 10, window: '1h' });
    const a = decider(store, policy, 'a');
    const b = decider(store, policy, 'b');
    const started = mapIterations(() => {
      for (let i = 0; i < 20_000; i++) (i % 3 === 0 ? a : b)(`id-${i}`);
    });
    expect(started).toBe(0);
    expect(store.size).toBe(1_000);
  }, 60_000);

  it('looks at 3 entries at most per insert under rotation, 10x maxKeys', () => {
    const store = new MemoryStore({ maxKeys: 10_000, now: () => T0 });
    const eviction = evictionOf.get(store)!;
    const limit = decider(store, fixedWindow({ limit: 10, window: '1h' }), 'rot');
    let worst = 0;
    for (let i = 0; i < 100_000; i++) {
      const before = eviction.looks;
      limit(`id-${i}`);
      worst = Math.max(worst, eviction.looks - before);
    }
    expect(worst).toBeLessThanOrEqual(3);
    expect(eviction.looks).toBeLessThanOrEqual(3 * 100_000);
    expect(store.size).toBe(10_000);
  }, 60_000);

  it('with regulars among them: looks ≤ 3 × inserts + reads, and no regular is evicted', () => {
    const store = new MemoryStore({ maxKeys: 5_000, now: () => T0 });
    const eviction = evictionOf.get(store)!;
    const policy = fixedWindow({ limit: 1_000_000, window: '1h' });
    const limit = decider(store, policy, 'mix');
    const policies = [policy];
    const remaining = (identity: string) =>
      store.evaluateSync({
        keys: [`mix:{${identity}}:${policy.id}`],
        policies,
        cost: 1,
        mode: 'peek',
        identity,
        prefix: 'mix',
      })[0]!.remaining;
    let inserts = 0;
    let reads = 0;
    for (let i = 0; i < 200_000; i++) {
      // Half the calls come back to 500 regulars, each read again well within one pass of the
      // hand; the other half are new identities, each seen once.
      const identity = i % 2 === 0 ? `regular-${(i / 2) % 500}` : `new-${i}`;
      if (store.ttl(`mix:{${identity}}:${policy.id}`) === undefined) inserts += 1;
      else reads += 1;
      limit(identity);
    }
    expect(inserts).toBe(100_000 + 500);
    expect(eviction.looks).toBeLessThanOrEqual(3 * inserts + reads);
    expect(store.size).toBe(5_000);
    // Every regular kept its count through the flood: 200 charges each.
    for (let r = 0; r < 500; r++) expect(remaining(`regular-${r}`)).toBe(1_000_000 - 200);
  }, 60_000);
});
