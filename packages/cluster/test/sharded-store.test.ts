import {
  createLimiter,
  FloodgateError,
  fixedWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import type { PolicyResult, Store, StoreCall } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { keysFor } from '@floodgate/testkit/redis';
import { describe, expect, it } from 'vitest';
import { ShardedStore, type ShardHealthEvent } from '../src/index.js';

// A MemoryStore that can be switched off: the health state machine, without a network.
class Switchable implements Store {
  down = false;
  readonly inner = new MemoryStore();
  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    if (this.down) throw new Error('connection refused');
    return this.inner.evaluate(call);
  }
  async reset(keys: readonly string[]): Promise<void> {
    if (this.down) throw new Error('connection refused');
    return this.inner.reset(keys);
  }
}

const policies = [
  tokenBucket({ limit: 6, interval: '1h' }),
  slidingWindowLog({ limit: 4, window: '1h' }),
  fixedWindow({ limit: 5, window: '1d' }),
];

describe('ShardedStore', () => {
  it('rejects bad shards and options before anything runs', () => {
    const m = new MemoryStore();
    const bad: [unknown, unknown, RegExp][] = [
      [[], {}, /non-empty array/],
      ['x', {}, /non-empty array/],
      [[{}], {}, /neither a store/],
      [[{ store: m, wieght: 2 }], {}, /unknown field "wieght"/],
      [[{ store: m, weight: 0 }], {}, /weight/],
      [[{ store: m, weight: Number.NaN }], {}, /weight/],
      [[{ store: m, name: '' }], {}, /name/],
      [
        [
          { store: m, name: 'a' },
          { store: m, name: 'a' },
        ],
        {},
        /unique/,
      ],
      [[m, { store: m, name: '0' }], {}, /unique/],
      [[m], { onHealthchange: () => {} }, /unknown option "onHealthchange"/],
      [[m], { now: 5 }, /now/],
      [[m], { onHealthChange: 'x' }, /onHealthChange/],
      [[m], { breaker: 'on' }, /breaker/],
      [[m], { breaker: { failures: 0 } }, /failures/],
      [[m], null, /options/],
      [[m], { timeoutMs: 0 }, /timeoutMs/],
      [[m], { fleetCheck: 'on' }, /fleetCheck/],
      [[m], { fleetCheck: { intervalMs: 60_000 } }, /intervalMs/],
      [[m], { fleetCheck: { everyMs: 5 } }, /unknown option "everyMs"/],
      [[m], { migration: ['0'] }, /migration/],
      [[m], { migration: { from: ['0'], until: Date.now(), to: 1 } }, /unknown field "to"/],
      [[m], { migration: { from: [], until: Date.now() } }, /migration.from/],
      [[m], { migration: { from: ['x'], until: Date.now() } }, /"x" is not a current shard/],
      [[m], { migration: { from: [new MemoryStore()], until: Date.now() } }, /another store/],
      [[m], { migration: { from: ['0', '0'], until: Date.now() } }, /unique/],
      [[m], { migration: { from: ['0'], until: 3_600_000 } }, /not a duration/],
      [[m], { migration: { from: ['0'], until: 'tomorrow' } }, /until/],
      [[m], { migration: { from: ['0'], until: new Date(Number.NaN) } }, /until/],
    ];
    for (const [stores, options, message] of bad) {
      const make = () => new ShardedStore(stores as Store[], options as object);
      expect(make).toThrow(FloodgateError);
      expect(make).toThrow(message);
    }
  });

  it('puts every policy key of one identity on one shard: multi-policy stays all-or-nothing', async () => {
    const shards = [new MemoryStore(), new MemoryStore(), new MemoryStore()];
    const store = new ShardedStore(shards);
    const limiter = createLimiter({ store, policy: policies, prefix: 'mp' });
    const ids = Array.from({ length: 60 }, (_, i) => `id-${i}:{x}`);
    for (const id of ids) {
      for (let i = 0; i < 7; i++) await limiter.limit(id);
      const keys = keysFor('mp', id, policies);
      const homes = new Set(keys.map((k) => store.locate(k)));
      expect(homes.size).toBe(1);
      const home = shards[Number([...homes][0])]!;
      for (const k of keys) expect(home.ttl(k)).toBeGreaterThan(0);
      for (const other of shards.filter((s) => s !== home))
        for (const k of keys) expect(other.ttl(k)).toBeUndefined();
      expect((await limiter.peek(id)).remaining).toBe(0); // the log binds at 4
    }
    // The identities really spread.
    expect(new Set(ids.map((id) => store.locate(keysFor('mp', id, policies)[0]!))).size).toBe(3);
    await limiter.reset(ids[0]!);
    expect((await limiter.limit(ids[0]!)).remaining).toBe(3);
  });

  it('is remote when any shard is; shares the shards’ client clock; combines their fallbacks', async () => {
    let t = 1_000_000;
    const now = () => t;
    const memory = new ShardedStore([new MemoryStore({ now }), new MemoryStore({ now })]);
    expect(memory.remote).toBe(false);
    expect(memory.now?.()).toBe(1_000_000);
    t += 5;
    expect(memory.now?.()).toBe(1_000_005);
    expect(memory.fallback).toBeUndefined(); // MemoryStores have none: the limiter then throws
    const mixed = new ShardedStore([new MemoryStore(), new Switchable()]);
    expect(mixed.now).toBeUndefined();
    expect(new ShardedStore([new Switchable()], { now }).now?.()).toBe(t);

    const inner = new MemoryStore();
    const remote: Store = {
      remote: true,
      evaluate: (call) => inner.evaluate(call),
      reset: (keys) => inner.reset(keys),
    };
    const withFallback = (name: string) => ({
      name,
      store: {
        remote: true,
        evaluate: async () => Promise.reject(new Error('down')),
        reset: async () => {},
        fallback: () => new MemoryStore(),
      } satisfies Store,
    });
    expect(new ShardedStore([new MemoryStore(), remote]).remote).toBe(true);
    const store = new ShardedStore([withFallback('a'), withFallback('b')]);
    const fallback = store.fallback!();
    expect(fallback).toBeInstanceOf(ShardedStore);
    // Each identity falls back where its own shard does: same names, same hashing.
    const key = keysFor('fb', 'someone', policies)[0]!;
    expect((fallback as ShardedStore).locate(key)).toBe(store.locate(key));
    const limiter = createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1h' }) });
    const [d1, d2] = [await limiter.limit('x'), await limiter.limit('x')];
    expect([d1.allowed, d1.reason, d2.allowed, d2.reason]).toEqual([
      true,
      'store-unavailable',
      false,
      'store-unavailable',
    ]);
  });

  it('tracks health per shard: failing after a failure, healthy after a success', async () => {
    const events: ShardHealthEvent[] = [];
    const shards = [new Switchable(), new Switchable(), new Switchable()];
    const store = new ShardedStore(
      shards.map((s, i) => ({ store: s, name: `s${i}` })),
      {
        onHealthChange: (e) => {
          events.push(e);
          throw new Error('a listener that throws changes nothing');
        },
      },
    );
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 2, window: '1h' }),
      onStoreError: 'deny',
    });
    const ids = Array.from({ length: 30 }, (_, i) => `u${i}`);
    const shardOf = (id: string) => store.locate(keysFor('floodgate', id, limiter.policies)[0]!);
    const onS1 = ids.filter((id) => shardOf(id) === 's1');
    expect(onS1.length).toBeGreaterThan(0);
    shards[1]!.down = true;
    for (const id of ids) {
      const d = await limiter.limit(id);
      expect(d.reason).toBe(shardOf(id) === 's1' ? 'store-unavailable' : undefined);
      expect(d.allowed).toBe(shardOf(id) !== 's1');
    }
    const h = store.health();
    expect(h.map((x) => x.state)).toEqual(['healthy', 'failing', 'healthy']);
    expect(h[1]!.consecutiveFailures).toBe(onS1.length);
    expect(h[1]!.lastError?.code).toBe('STORE_UNAVAILABLE');
    expect(h[1]!.lastError?.message).toMatch(/shard "s1": connection refused/);
    await expect(limiter.reset(onS1[0]!)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    shards[1]!.down = false;
    expect((await limiter.limit(onS1[0]!)).allowed).toBe(true);
    expect(store.health()[1]).toMatchObject({ state: 'healthy', consecutiveFailures: 0 });
    expect(events.map((e) => [e.name, e.from, e.to, e.error?.code])).toEqual([
      ['s1', 'healthy', 'failing', 'STORE_UNAVAILABLE'],
      ['s1', 'failing', 'healthy', undefined],
    ]);
  });

  it('a migration that removes a shard asks it too, until `until`', async () => {
    const [a, b, c] = [new MemoryStore(), new MemoryStore(), new MemoryStore()];
    const old = new ShardedStore([
      { name: 'a', store: a },
      { name: 'b', store: b },
      { name: 'c', store: c },
    ]);
    const migration = { from: ['a', 'b', { name: 'c', store: c }], until: Date.now() + 60_000 };
    const next = new ShardedStore(
      [
        { name: 'a', store: a },
        { name: 'b', store: b },
      ],
      { migration },
    );
    expect(next.health().map((h) => h.name)).toEqual(['a', 'b', 'c']);
    const policy = fixedWindow({ limit: 3, window: '1h' });
    const ids = Array.from({ length: 40 }, (_, i) => `m${i}`);
    const onC = ids.filter((id) => old.locate(keysFor('rm', id, [policy])[0]!) === 'c');
    expect(onC.length).toBeGreaterThan(3);
    const make = (store: Store) => createLimiter({ store, policy, prefix: 'rm' });
    for (const id of onC) {
      // Two from the old list, then the new list: one more, then denied, as on one store.
      await make(old).limit(id);
      await make(old).limit(id);
      expect((await make(next).limit(id)).allowed).toBe(true);
      expect(await make(next).limit(id)).toMatchObject({ allowed: false, remaining: 0 });
      expect((await make(old).limit(id)).allowed).toBe(false);
    }
    expect(next.fingerprint).not.toBe(old.fingerprint);
  });

  it('a bad call is not the shard’s failure', async () => {
    const store = new ShardedStore([new MemoryStore({ now: () => -1 }), new MemoryStore()]);
    const call: StoreCall = { keys: [], policies: [], cost: 1, mode: 'limit' };
    await expect(store.evaluate(call)).rejects.toMatchObject({ code: 'INVALID_KEY' });
    await store.reset([]);
    expect(store.health().every((h) => h.state === 'healthy' && h.failures === 0)).toBe(true);
  });
});
