// Concurrency leases on a ShardedStore: each identity's leases live on the shard that holds its
// decisions, and during a migration on the old owner, where the processes not yet moved hold
// theirs, so a limit stays one limit across the rolling deploy.
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

const NAMES = ['s1', 's2', 's3', 's4'];
const shardsOf = (memories: MemoryStore[], n: number) =>
  memories.slice(0, n).map((store, i) => ({ name: NAMES[i]!, store }));

describe('ShardedStore: concurrency leases', () => {
  it('acquire, release and extend go to the shard owning the identity', async () => {
    const memories = NAMES.map(() => new MemoryStore());
    const store = new ShardedStore(shardsOf(memories, 3));
    const limiter = createConcurrencyLimiter({ store, limit: 2, leaseMs: '1m' });
    const ids = Array.from({ length: 60 }, (_, i) => `user-${i}`);
    const leases = await Promise.all(ids.map((id) => limiter.acquire(id)));
    const owners = new Set<string>();
    for (const id of ids) {
      const key = limiter.key(id);
      const owner = store.locate(key);
      owners.add(owner);
      expect(memories.map((m) => m.leasesHeld(key))).toEqual(
        NAMES.map((name) => (name === owner ? 1 : 0)),
      );
    }
    expect(owners.size).toBe(3);
    expect(await leases[0]!.extend()).toBe(true);
    await Promise.all(leases.map((l) => l.release()));
    for (const id of ids) {
      expect(memories.map((m) => m.leasesHeld(limiter.key(id)))).toEqual([0, 0, 0, 0]);
    }
  });

  it('during a migration, leases stay on the old owner: old and new processes share one limit', async () => {
    const memories = NAMES.map(() => new MemoryStore());
    const old = new ShardedStore(shardsOf(memories, 3), { fleetCheck: false });
    const migrating = new ShardedStore(shardsOf(memories, 4), {
      migration: { from: ['s1', 's2', 's3'], until: Date.now() + 3_600_000 },
      fleetCheck: false,
    });
    const after = new ShardedStore(shardsOf(memories, 4), { fleetCheck: false });
    const options = { limit: 1, leaseMs: '1m' } as const;
    const onOld = createConcurrencyLimiter({ store: old, ...options });
    const onNew = createConcurrencyLimiter({ store: migrating, ...options });
    // An identity the fourth shard takes over.
    const moved = Array.from({ length: 200 }, (_, i) => `client-${i}`).find(
      (id) => after.locate(onOld.key(id)) === 's4',
    )!;
    expect(moved).toBeDefined();
    const held = await onOld.acquire(moved);
    expect(held.allowed).toBe(true);
    expect((await onNew.acquire(moved)).allowed).toBe(false);
    await held.release();
    const next = await onNew.acquire(moved);
    expect(next.allowed).toBe(true);
    expect((await onOld.acquire(moved)).allowed).toBe(false);
    expect(memories[3]!.leasesHeld(onOld.key(moved))).toBe(0);
    await next.release();
  });
});
