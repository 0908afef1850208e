// A ShardedStore's change feed: its shards' feeds as one. Unit-level on shards whose feeds the
// test drives, then end to end on two redis-server shards and two stores (two app servers' worth):
// a reset through one reaches the other's blocked-key cache.
import { createLimiter, fixedWindow } from '@floodgate/core';
import type { Store, StoreChange } from '@floodgate/core/store';
import { IoRedisStore } from '@floodgate/ioredis';
import { MemoryStore } from '@floodgate/memory';
import { type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

/** A MemoryStore with a feed the test drives. */
function watched(): Store & { tell(c: StoreChange): void } {
  const listeners = new Set<(c: StoreChange) => void>();
  return Object.assign(new MemoryStore(), {
    watch(l: (c: StoreChange) => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    tell(c: StoreChange) {
      for (const l of listeners) l(c);
    },
  });
}

describe('ShardedStore.watch', () => {
  it('passes changes on, and vouches only once every shard has since it last did', () => {
    const [a, b] = [watched(), watched()];
    const seen: string[] = [];
    const stop = new ShardedStore([a, b]).watch((c) => seen.push(c.type));
    a.tell({ type: 'identity', prefix: 'p', identity: 'u' });
    b.tell({ type: 'missed' });
    a.tell({ type: 'alive' });
    a.tell({ type: 'alive' });
    expect(seen).toEqual(['identity', 'missed']);
    b.tell({ type: 'alive' });
    expect(seen.at(-1)).toBe('alive');
    // A shard down: no vouching until it is back, whatever the other says.
    b.tell({ type: 'down' });
    a.tell({ type: 'alive' });
    expect(seen.slice(-1)).toEqual(['down']);
    b.tell({ type: 'alive' });
    expect(seen.slice(-1)).toEqual(['alive']);
    stop();
    a.tell({ type: 'missed' });
    expect(seen).toHaveLength(5);
  });

  it('a shard without a feed: changes still pass, the merged feed never vouches', () => {
    const a = watched();
    const seen: string[] = [];
    new ShardedStore([a, new MemoryStore()]).watch((c) => seen.push(c.type));
    a.tell({ type: 'alive' });
    a.tell({ type: 'identity', prefix: 'p', identity: 'u' });
    expect(seen).toEqual(['identity']);
  });
});

describe('ShardedStore over two redis-server shards, two app servers', () => {
  const servers: RedisServer[] = [];
  const clients: Redis[] = [];
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1].map(() => startRedisServer()))));
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  });

  it("a reset through one store drops the other's cached denial", async () => {
    const sharded = () => {
      const cs = servers.map((s) => new Redis(s.url));
      clients.push(...cs);
      return new ShardedStore(cs.map((c) => new IoRedisStore(c)));
    };
    const [storeA, storeB] = [sharded(), sharded()];
    const policy = fixedWindow({ limit: 1, window: '1h', blockFor: '1d' });
    const limiterA = createLimiter({ store: storeA, policy, prefix: 'sw' });
    const limiterB = createLimiter({ store: storeB, policy, prefix: 'sw' });
    const heard: string[] = [];
    let alive = false;
    storeA.watch((c) => {
      if (c.type === 'identity') heard.push(c.identity);
      if (c.type === 'alive') alive = true;
    });
    while (!alive) await new Promise((r) => setTimeout(r, 10));
    for (const id of ['a', 'b', 'c', 'd']) {
      await limiterA.limit(id);
      await limiterA.limit(id);
      expect((await limiterA.limit(id)).reason).toBe('blocked-cache');
      await limiterB.reset(id);
      while (!heard.includes(id)) await new Promise((r) => setTimeout(r, 2));
      const next = await limiterA.limit(id);
      expect([next.allowed, next.reason]).toEqual([true, undefined]);
    }
    // Both shards took identities: the merged feed carried each shard's resets.
    expect(new Set(['a', 'b', 'c', 'd'].map((id) => storeA.locate(`sw:{${id}}:x`))).size).toBe(2);
  });
});
