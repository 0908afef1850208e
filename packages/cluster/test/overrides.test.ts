// Overrides through a ShardedStore (the conformance suite runs them on three redis-server
// shards): calls re-sent with the store's own deadline still read their override keys, an
// override goes to the identity's shard, and during a migration to both of its owners.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { encodeIdentity, overrideKey, policyKey } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

const HOUR = 3_600_000;
const policy = fixedWindow({ limit: 2, window: '1d' });
const ids = Array.from({ length: 40 }, (_, i) => `o-${i}`);

describe('overrides through a ShardedStore', () => {
  it('with its own timeoutMs (each call re-sent with a deadline): still read', async () => {
    const stores = [0, 1, 2].map(() => new MemoryStore());
    const limiter = createLimiter({
      store: new ShardedStore(stores, { timeoutMs: 5_000, fleetCheck: false }),
      policy,
      overrides: true,
    });
    for (const id of ids.slice(0, 6)) {
      await limiter.override(id, { limit: 4, until: Date.now() + HOUR });
      const ds = await Promise.all(Array.from({ length: 5 }, () => limiter.limit(id)));
      expect(ds.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
      expect(ds[0]!.override?.until).toBeGreaterThan(Date.now());
    }
  });

  it('on the identity shard alone; during a migration on both owners, read from the old', async () => {
    const [a, b, c] = [new MemoryStore(), new MemoryStore(), new MemoryStore()];
    const old = new ShardedStore(
      [
        { name: 'a', store: a },
        { name: 'b', store: b },
      ],
      { fleetCheck: false },
    );
    const store = new ShardedStore(
      [
        { name: 'a', store: a },
        { name: 'b', store: b },
        { name: 'c', store: c },
      ],
      { fleetCheck: false, migration: { from: ['a', 'b'], until: Date.now() + HOUR } },
    );
    const limiter = createLimiter({ store, policy, prefix: 'm', overrides: true });
    const byName = { a, b, c };
    const keyOf = (id: string) => overrideKey(policyKey('m', encodeIdentity(id), policy.id));
    let moved = 0;
    for (const id of ids) {
      await limiter.override(id, { limit: 3, until: Date.now() + HOUR });
      const key = keyOf(id);
      const owner = byName[store.locate(key) as 'a' | 'b' | 'c'];
      const before = byName[old.locate(key) as 'a' | 'b'];
      expect((await owner.readOverrides([key]))[0]?.[1], `${id} on its shard`).toBe(3);
      expect((await before.readOverrides([key]))[0]?.[1], `${id} on its old shard`).toBe(3);
      if (owner !== before) {
        moved++;
        // The old owner decides first: what it holds is what the limiter reads back.
        await before.writeOverrides([key], [null]);
        expect(await limiter.overrides.get(id)).toBe(undefined);
      }
      const third = [a, b, c].find((s) => s !== owner && s !== before)!;
      expect((await third.readOverrides([key]))[0], `${id} nowhere else`).toBe(undefined);
    }
    expect(moved).toBeGreaterThan(0);
  });
});
