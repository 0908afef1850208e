import {
  createLimiter,
  fixedWindow,
  type Policy,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../src/index.js';

const T0 = 1_700_000_040_000; // a multiple of every window below

function setup(policy: Policy | Policy[], maxKeys?: number) {
  const clock = { t: T0 };
  const store = new MemoryStore({
    now: () => clock.t,
    ...(maxKeys === undefined ? {} : { maxKeys }),
  });
  const limiter = createLimiter({ store, policy, prefix: 'm' });
  const key = (id: string, p: Policy = limiter.policies[0]!) => `m:{${id}}:${p.id}`;
  return { clock, store, limiter, key };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('MemoryStore', () => {
  it('holds a key exactly as long as its state is not empty: TTL = resetAfterMs', async () => {
    const { clock, store, limiter, key } = setup(fixedWindow({ limit: 2, window: 1000 }));
    clock.t = T0 + 300;
    const d = await limiter.limit('a');
    expect(d.resetAfterMs).toBe(700);
    expect(store.ttl(key('a'))).toBe(700);
    clock.t += 699;
    expect(store.ttl(key('a'))).toBe(1);
    expect((await limiter.peek('a')).remaining).toBe(1);
    clock.t += 2;
    expect(store.ttl(key('a'))).toBe(undefined);
    expect((await limiter.peek('a')).remaining).toBe(2);
  });

  it('drops entries whose state is empty again, so memory follows live keys', async () => {
    const { clock, store, limiter, key } = setup(slidingWindowLog({ limit: 5, window: 1000 }));
    for (const id of ['a', 'b', 'c']) await limiter.limit(id);
    expect(store.size).toBe(3);
    clock.t += 1001;
    for (const id of ['a', 'b', 'c']) expect(store.ttl(key(id))).toBe(undefined);
    // Expiry is lazy (no timer per key): an entry goes when next touched, or at the next sweep.
    for (const id of ['a', 'b', 'c']) expect((await limiter.peek(id)).remaining).toBe(5);
    expect(store.size).toBe(0);
  });

  it('sweeps expired entries as writes go on, without anyone reading them', async () => {
    const { clock, store, limiter } = setup(fixedWindow({ limit: 1, window: 1000 }), 10_000);
    for (let i = 0; i < 1500; i++) await limiter.limit(`old-${i}`);
    // Expired for more than the sweep's grace minute (a caller behind may still read them).
    clock.t += 1000 + 60_000;
    for (let i = 0; i < 1600; i++) await limiter.limit(`new-${i}`);
    // Each insert looked at the oldest entries: the 1500 expired ones are gone unread.
    expect(store.size).toBe(1600);
    for (let i = 0; i < 3; i++)
      expect(store.ttl(`m:{old-${i}}:${limiter.policies[0]!.id}`)).toBe(undefined);
  });

  it('rejects bad options with INVALID_OPTION', () => {
    for (const bad of [
      { maxKeys: 0 },
      { maxKeys: 1.5 },
      { maxKeys: -1 },
      { now: 5 },
      { max: 10 },
    ]) {
      // biome-ignore lint/suspicious/noExplicitAny: simulating a JavaScript caller
      expect(() => new MemoryStore(bad as any)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
  });

  it('new keys evict the least recently used ones, here the expired ones', async () => {
    const { clock, store, limiter, key } = setup(fixedWindow({ limit: 1, window: 1000 }), 3);
    for (const id of ['a', 'b', 'c']) await limiter.limit(id);
    clock.t += 1000;
    for (const id of ['d', 'e', 'f']) expect((await limiter.limit(id)).allowed).toBe(true);
    expect(store.size).toBe(3);
    for (const id of ['d', 'e', 'f']) expect(store.ttl(key(id))).toBe(1000);
    for (const id of ['d', 'e', 'f']) expect((await limiter.limit(id)).allowed).toBe(false);
  });

  it('maxKeys bounds it: the least recently used key is evicted (and its usage forgotten)', async () => {
    const { store, limiter, key } = setup(tokenBucket({ limit: 1, interval: '1m' }), 3);
    for (const id of ['a', 'b', 'c']) expect((await limiter.limit(id)).allowed).toBe(true);
    await limiter.peek('a'); // a is now more recent than b
    await limiter.limit('d');
    expect(store.size).toBe(3);
    expect(store.ttl(key('b'))).toBe(undefined);
    expect(store.ttl(key('a'))).toBeGreaterThan(0);
    expect((await limiter.limit('a')).allowed).toBe(false);
    expect((await limiter.limit('b')).allowed).toBe(true); // the documented cost of the bound
    expect(store.size).toBe(3);
  });

  it('decides the same long after its first decision (times past the small-integer range)', async () => {
    const { clock, store, limiter, key } = setup(fixedWindow({ limit: 2, window: 1000 }));
    await limiter.limit('a');
    clock.t += 40 * 86_400_000 + 400; // 2^31 ms is under 25 days
    expect((await limiter.limit('a')).remaining).toBe(1);
    expect(store.ttl(key('a'))).toBe(600);
    expect((await limiter.limit('a')).remaining).toBe(0);
    expect((await limiter.limit('a')).allowed).toBe(false);
    clock.t += 600;
    expect((await limiter.limit('a')).allowed).toBe(true);
  });

  it('reset still reaches an identity after eviction emptied its table', async () => {
    // Two limiters, one key between them: each insert empties the other limiter's table.
    const clock = { t: T0 };
    const store = new MemoryStore({ now: () => clock.t, maxKeys: 1 });
    const policy = fixedWindow({ limit: 1, window: '1m' });
    const a = createLimiter({ store, policy, prefix: 'a' });
    const b = createLimiter({ store, policy, prefix: 'b' });
    await a.limit('x');
    await b.limit('y');
    expect((await a.limit('x')).allowed).toBe(true); // x was evicted: its usage forgotten
    expect(store.size).toBe(1);
    await a.reset('x');
    expect(store.size).toBe(0);
    expect(store.ttl(`a:{x}:${policy.id}`)).toBe(undefined);
    expect((await a.limit('x')).allowed).toBe(true);
  });

  it('counts one key per identity and policy', async () => {
    const policies = [
      fixedWindow({ limit: 5, window: '1m' }),
      tokenBucket({ limit: 5, interval: '1m' }),
    ];
    const { store, limiter, key } = setup(policies, 4);
    await limiter.limit('a');
    await limiter.limit('b');
    expect(store.size).toBe(4);
    await limiter.limit('c');
    expect(store.size).toBe(4);
    for (const p of policies) {
      expect(store.ttl(key('a', p))).toBe(undefined);
      expect(store.ttl(key('c', p))).toBeGreaterThan(0);
    }
  });

  it('peek writes nothing and leaves TTLs alone; a denial writes nothing either', async () => {
    const { clock, store, limiter, key } = setup(fixedWindow({ limit: 1, window: 1000 }));
    await limiter.peek('a');
    expect(store.size).toBe(0);
    await limiter.limit('a');
    clock.t += 400;
    await limiter.peek('a');
    await limiter.limit('a');
    expect(store.ttl(key('a'))).toBe(600);
    await limiter.limit('b', { cost: 1 });
    await limiter.limit('b', { cost: 1 });
    expect(store.size).toBe(2);
  });

  it('reset deletes every key of the identity, and only those', async () => {
    const policies = [
      fixedWindow({ limit: 5, window: '1m' }),
      tokenBucket({ limit: 5, interval: '1m' }),
    ];
    const { store, limiter, key } = setup(policies);
    await limiter.limit('a', { cost: 5 });
    await limiter.limit('b');
    await limiter.reset('a');
    expect(store.size).toBe(2);
    for (const p of policies) expect(store.ttl(key('a', p))).toBe(undefined);
    expect((await limiter.limit('a', { cost: 5 })).allowed).toBe(true);
    await store.reset(['m:{nobody}:x']);
    expect(store.size).toBe(4);
  });

  it('expired entries within the grace minute are reused in place, not re-inserted', async () => {
    const { clock, store, limiter, key } = setup(fixedWindow({ limit: 1, window: 1000 }));
    await limiter.limit('a');
    clock.t += 5000;
    expect((await limiter.limit('a')).allowed).toBe(true);
    expect(store.size).toBe(1);
    expect(store.ttl(key('a'))).toBe(1000);
  });

  it('decides synchronously for the limiter, and its async evaluate returns fresh copies', async () => {
    const store = new MemoryStore({ now: () => T0 });
    const policies = [fixedWindow({ limit: 2, window: 1000 })];
    const call = { keys: ['m:{a}:x'], policies, cost: 1, mode: 'limit' as const };
    const first = await store.evaluate(call);
    const second = await store.evaluate(call);
    expect(first[0]).toEqual({
      allowed: true,
      remaining: 1,
      resetAfterMs: 1000,
      retryAfterMs: 0,
      delayMs: 0,
    });
    expect(second[0]!.remaining).toBe(0);
    expect(store.evaluateSync(call)[0]!.allowed).toBe(false);
    // Keys alone (no identity/prefix) and the limiter's (prefix, identity) reach one state.
    const limiter = createLimiter({ store, policy: policies, prefix: 'm' });
    expect((await limiter.peek('b')).remaining).toBe(2);
    await store.evaluate({ ...call, keys: [`m:{b}:${policies[0]!.id}`] });
    expect((await limiter.peek('b')).remaining).toBe(1);
  });

  it('a now() that is not integer ms fails the call with INVALID_OPTION, writing nothing', async () => {
    for (const bad of [Number.NaN, 1.5, -1, 2 ** 53, Number.POSITIVE_INFINITY]) {
      const store = new MemoryStore({ now: () => bad });
      const policies = [fixedWindow({ limit: 1, window: 1000 })];
      await expect(
        store.evaluate({ keys: ['k'], policies, cost: 1, mode: 'limit' }),
      ).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        message: expect.stringContaining('now()'),
      });
      expect(store.size).toBe(0);
    }
  });

  it('uses Date.now by default', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
    const store = new MemoryStore();
    const limiter = createLimiter({ store, policy: fixedWindow({ limit: 1, window: 1000 }) });
    vi.setSystemTime(T0 + 250);
    expect((await limiter.limit('a')).resetAfterMs).toBe(750);
    vi.setSystemTime(T0 + 999);
    expect((await limiter.limit('a')).retryAfterMs).toBe(1);
    vi.setSystemTime(T0 + 1000);
    expect((await limiter.limit('a')).allowed).toBe(true);
  });

  it('is a local store: no blocked-key cache, no fallback', () => {
    const store = new MemoryStore();
    expect((store as { remote?: boolean }).remote).not.toBe(true);
    expect('fallback' in store).toBe(false);
  });
});
