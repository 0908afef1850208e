// A rolling deploy from 3 shards to 4: processes with the old list and processes with the new
// one run side by side against the same redis-servers. With a declared migration the moved
// identities still get their limit once; without one, both sides are told the fleet is mixed.
import { createLimiter, type Decision, fixedWindow, type Limiter } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { keysFor, type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MixedFleetEvent, ShardedStore } from '../src/index.js';

const NAMES = ['r1', 'r2', 'r3', 'r4'];
// Fresh servers per test: the fleet records of one test must not be seen by the next.
let servers: RedisServer[] = [];
let clients: Redis[] = [];
const stores: ShardedStore[] = [];
beforeEach(async () => {
  servers = await Promise.all(NAMES.map(() => startRedisServer()));
  clients = [];
});
afterEach(async () => {
  for (const s of stores.splice(0)) s.close();
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
});

/** One "process": its own connections to the first `n` servers, named r1…rn. */
function shards(n: number) {
  return servers.slice(0, n).map((s, i) => {
    const c = new Redis(s.url, { enableAutoPipelining: true });
    clients.push(c);
    return { name: NAMES[i]!, store: new IoRedisStore(c) };
  });
}
/** A connection of the test's own to server `i`, to look at its keys. */
function direct(i: number): Redis {
  const c = new Redis(servers[i]!.url);
  clients.push(c);
  return c;
}
function track(store: ShardedStore): ShardedStore {
  stores.push(store);
  return store;
}

const policy = fixedWindow({ limit: 10, window: '1h' });
const make = (store: ShardedStore): Limiter =>
  createLimiter({
    store,
    policy,
    prefix: 'roll',
    onStoreError: 'throw',
    timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
    blockCache: false,
  });
const keyOf = (id: string) => keysFor('roll', id, [policy])[0]!;
const ids = Array.from({ length: 240 }, (_, i) => `client-${i}`);

/** Every identity asked `rounds` times by each limiter, the two concurrently. */
async function roll(limiters: Limiter[], rounds: number): Promise<Map<string, Decision[]>> {
  const out = new Map(ids.map((id) => [id, [] as Decision[]]));
  for (let r = 0; r < rounds; r++) {
    await Promise.all(
      ids.flatMap((id) =>
        limiters.map(async (l) => {
          out.get(id)!.push(await l.limit(id));
        }),
      ),
    );
  }
  return out;
}
const admitted = (ds: readonly Decision[]) => ds.filter((d) => d.allowed).length;

describe('a rolling deploy from 3 to 4 shards', () => {
  it('with a declared migration, moved identities get 10 per window at limit 10, not 20', async () => {
    const old = track(new ShardedStore(shards(3), { fleetCheck: false }));
    const until = Date.now() + 3_600_000;
    const migrating = track(
      new ShardedStore(shards(4), {
        migration: { from: ['r1', 'r2', 'r3'], until },
        fleetCheck: false,
      }),
    );
    const moved = ids.filter((id) => migrating.locate(keyOf(id)) !== old.locate(keyOf(id)));
    expect(moved.length).toBeGreaterThan(30);
    expect(moved.every((id) => migrating.locate(keyOf(id)) === 'r4')).toBe(true);

    const seen = await roll([make(old), make(migrating)], 12);
    // 24 attempts each, from both lists at once: every identity, moved or not, exactly 10.
    const counts = ids.map((id) => admitted(seen.get(id)!));
    expect(counts.filter((n) => n !== 10)).toEqual([]);

    // The new owner holds what the new processes admitted, for when the migration ends.
    const [one] = moved;
    const onNew = await direct(3).keys('roll:*');
    expect(onNew.sort()).toEqual(moved.map(keyOf).sort());
    expect(onNew).toContain(keyOf(one!));
    // peek and reset reach both owners: reset from the new list frees the old list's count too.
    expect((await make(old).peek(one!)).allowed).toBe(false);
    expect((await make(migrating).peek(one!)).allowed).toBe(false);
    await make(migrating).reset(one!);
    expect(await make(old).limit(one!)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await direct(3).exists(keyOf(one!))).toBe(0);
  });

  it('without one, moved identities get their limit once per list (the reason for the option)', async () => {
    const old = track(new ShardedStore(shards(3), { fleetCheck: false }));
    const plain = track(new ShardedStore(shards(4), { fleetCheck: false }));
    const seen = await roll([make(old), make(plain)], 12);
    const moved = ids.filter((id) => plain.locate(keyOf(id)) !== old.locate(keyOf(id)));
    expect(moved.map((id) => admitted(seen.get(id)!))).toEqual(moved.map(() => 20));
  });

  it('after `until`, the new list decides alone: one owner, one call', async () => {
    const migrating = track(
      new ShardedStore(shards(4), {
        migration: { from: ['r1', 'r2', 'r3'], until: new Date(Date.now() - 1) },
        fleetCheck: false,
      }),
    );
    await roll([make(migrating)], 1);
    // Nothing was written to the old owners of the moved identities.
    const oldKeys = (await Promise.all([0, 1, 2].map((i) => direct(i).keys('roll:*')))).flat();
    const moved = ids.filter((id) => migrating.locate(keyOf(id)) === 'r4');
    expect(moved.length).toBeGreaterThan(30);
    expect(oldKeys.filter((k) => moved.some((id) => keyOf(id) === k))).toEqual([]);
  });
});

describe('mixed fleet detection', () => {
  const waitFor = async (done: () => boolean) => {
    for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  };

  it('both lists without a migration: each process is told, naming the shards', async () => {
    const events: [string, MixedFleetEvent][] = [];
    const watch = (who: string) => ({
      intervalMs: 20,
      onMixedFleet: (e: MixedFleetEvent) => events.push([who, e]),
    });
    const old = track(new ShardedStore(shards(3), { fleetCheck: watch('old') }));
    const plain = track(new ShardedStore(shards(4), { fleetCheck: watch('new') }));
    await waitFor(() => new Set(events.map(([w]) => w)).size === 2);
    const byOld = events.find(([w]) => w === 'old')?.[1];
    const byNew = events.find(([w]) => w === 'new')?.[1];
    expect(byOld).toMatchObject({ fingerprint: old.fingerprint, expected: old.fingerprint });
    expect(byNew).toMatchObject({ fingerprint: plain.fingerprint, migrating: false });
    expect(old.fingerprint).not.toBe(plain.fingerprint);
    // Where both lists write; never r4, which only the new list uses.
    for (const e of [byOld!, byNew!]) {
      expect(e.shards.length).toBeGreaterThan(0);
      expect(e.shards.every((s) => ['r1', 'r2', 'r3'].includes(s.name) && s.foreign > 0)).toBe(
        true,
      );
    }
    // Once per episode, not once per check.
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter(([w]) => w === 'old')).toHaveLength(1);
  });

  it('the old list beside a declared migration from it: nobody is told', async () => {
    const fleetCheck = { intervalMs: 15_000, onMixedFleet: () => {} };
    const old = track(new ShardedStore(shards(3), { fleetCheck }));
    const migrating = track(
      new ShardedStore(shards(4), {
        migration: { from: ['r1', 'r2', 'r3'], until: Date.now() + 3_600_000 },
        fleetCheck,
      }),
    );
    const plain = track(new ShardedStore(shards(4), { fleetCheck: false }));
    // Records are counted per epoch-aligned minute (the servers run on this machine's clock):
    // what follows must not straddle a minute's edge, where the count starts again.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((r) => setTimeout(r, left + 100));
    for (let i = 0; i < 3; i++) {
      expect(await old.checkFleet()).toBeUndefined();
      expect(await migrating.checkFleet()).toBeUndefined();
    }
    // A new process that forgot the migration is seen by both.
    await track(new ShardedStore(shards(4), { fleetCheck: { intervalMs: 15_000 } })).checkFleet();
    expect((await old.checkFleet())?.shards.length).toBe(3);
    expect(await migrating.checkFleet()).toMatchObject({ migrating: true });
    expect(plain.fingerprint).toBe(migrating.fingerprint);
  });
});
