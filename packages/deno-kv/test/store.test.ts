// DenoKvStore's own behaviour beyond the conformance suite: where its keys live, what a denial
// and a late call write (nothing), how a lost check-and-set is retried and bounded, decisions
// with more keys than one getMany reads, and how failures are reported.
import type { Kv } from '@deno/kv';
import {
  createLimiter,
  fixedWindow,
  type Policy,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import {
  encodeIdentity,
  type OverrideStore,
  policyKey,
  type Store,
  type StoreCall,
} from '@floodgate/core/store';
import { describe, expect, it } from 'vitest';
import { type DenoKvLike, DenoKvStore } from '../src/index.js';
import { codeOf, freshKv, keysUnder, referenceStore } from './support/kv.js';

const T0 = 1_700_000_000_000;
const bucket = tokenBucket({ limit: 10, interval: '1m' });
const call = (policy: Policy, identity: string, deadline?: number): StoreCall => ({
  keys: [policyKey('t', encodeIdentity(identity), policy.id)],
  policies: [policy],
  cost: 1,
  mode: 'limit',
  ...(deadline === undefined ? {} : { deadline }),
});

/**
 * The real `kv`, where another writer acts between a read and the commit that follows it (the
 * race check-and-set exists for), on the first `times` reads.
 */
function racing(kv: Kv, between: () => Promise<unknown>, times: number): DenoKvLike {
  let left = times;
  return {
    async getMany(keys) {
      const entries = await kv.getMany(keys);
      if (left-- > 0) await between();
      return entries;
    },
    atomic: () => kv.atomic(),
  };
}

describe('DenoKvStore', () => {
  it('keeps each Floodgate key as one part under its root', async () => {
    const kv = await freshKv();
    const a = createLimiter({ store: new DenoKvStore(kv), policy: bucket, prefix: 't' });
    const b = createLimiter({
      store: new DenoKvStore(kv, { root: ['app', 'fg'] }),
      policy: bucket,
      prefix: 't',
    });
    await a.limit('u');
    await b.limit('u');
    await b.limit('u');
    const key = call(bucket, 'u').keys[0]!;
    expect(await keysUnder(kv)).toEqual([key]);
    expect(await keysUnder(kv, ['app', 'fg'])).toEqual([key]);
    // Two roots, two counts.
    expect((await a.peek('u')).remaining).toBe(9);
    expect((await b.peek('u')).remaining).toBe(8);
  });

  it('a denial and a peek write nothing', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv, { now: () => T0 });
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1m' }),
      prefix: 't',
    });
    expect((await limiter.limit('u')).allowed).toBe(true);
    const key = ['floodgate', (await keysUnder(kv))[0]!];
    const [before] = await kv.getMany([key]);
    const commits = store.stats.commits;
    expect((await limiter.limit('u')).allowed).toBe(false);
    expect((await limiter.peek('u')).allowed).toBe(false);
    const [after] = await kv.getMany([key]);
    expect(after!.versionstamp).toBe(before!.versionstamp);
    expect(store.stats.commits).toBe(commits);
  });

  it('a call past its deadline charges nothing: STORE_TIMEOUT; a denial still answers', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv, { now: () => T0 });
    const late = performance.now() - 1;
    expect(await codeOf(() => store.evaluate(call(bucket, 'u', late)))).toBe('STORE_TIMEOUT');
    expect(await keysUnder(kv)).toEqual([]);
    const leases = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: 1000,
      onStoreError: 'throw',
    });
    expect(
      await codeOf(() =>
        store.acquireLease({
          key: 'l:{u}:concurrency',
          id: 'a',
          cost: 1,
          limit: 1,
          leaseMs: 1000,
          deadline: late,
        }),
      ),
    ).toBe('STORE_TIMEOUT');
    expect((await leases.acquire('u')).allowed).toBe(true);
    // Spent: the next call is a denial, which writes nothing, so the deadline does not matter.
    const one = fixedWindow({ limit: 1, window: '1m' });
    await store.evaluate(call(one, 'v'));
    const [denied] = await store.evaluate(call(one, 'v', late));
    expect(denied!.allowed).toBe(false);
  });

  it('a commit that lost to another writer is decided again, on what that writer wrote', async () => {
    const kv = await freshKv();
    const other = createLimiter({
      store: new DenoKvStore(kv, { now: () => T0 }),
      policy: bucket,
      prefix: 't',
    });
    const store = new DenoKvStore(
      racing(kv, () => other.limit('u', { cost: 3 }), 1),
      { now: () => T0 },
    );
    const [r] = await store.evaluate(call(bucket, 'u'));
    expect(r!.allowed).toBe(true);
    expect(r!.remaining).toBe(6); // 10 − 3 (the other writer) − 1
    expect(store.stats).toEqual({ commits: 1, conflicts: 1, busy: 0, exhausted: 0 });
    expect((await other.peek('u')).remaining).toBe(6);
  });

  it('after maxRetries lost commits the call fails with STORE_UNAVAILABLE, having written nothing', async () => {
    const kv = await freshKv();
    const other = createLimiter({
      store: new DenoKvStore(kv, { now: () => T0 }),
      policy: bucket,
      prefix: 't',
    });
    const store = new DenoKvStore(
      racing(kv, () => other.limit('u'), Number.POSITIVE_INFINITY),
      {
        now: () => T0,
        maxRetries: 2,
      },
    );
    expect(await codeOf(() => store.evaluate(call(bucket, 'u')))).toBe('STORE_UNAVAILABLE');
    expect(store.stats).toEqual({ commits: 0, conflicts: 3, busy: 0, exhausted: 1 });
    // Only the other writer's three charges.
    expect((await other.peek('u')).remaining).toBe(7);
  });

  it('stops retrying once its caller has stopped waiting: STORE_TIMEOUT', async () => {
    const kv = await freshKv();
    const roomy = tokenBucket({ limit: 1000, interval: '1m' });
    const other = createLimiter({
      store: new DenoKvStore(kv, { now: () => T0 }),
      policy: roomy,
      prefix: 't',
    });
    const store = new DenoKvStore(
      racing(kv, () => other.limit('u'), Number.POSITIVE_INFINITY),
      {
        now: () => T0,
        maxRetries: 1000,
      },
    );
    const deadline = performance.now() + 100;
    expect(await codeOf(() => store.evaluate(call(roomy, 'u', deadline)))).toBe('STORE_TIMEOUT');
    expect(store.stats.commits).toBe(0);
    expect(store.stats.exhausted).toBe(0);
    const conflicts = store.stats.conflicts;
    expect(conflicts).toBeGreaterThan(0);
    // Only the other writer's charges: one per read this store made (a last read may not have
    // reached a commit).
    const left = (await other.peek('u')).remaining;
    expect([1000 - conflicts, 999 - conflicts]).toContain(left);
  });

  it('in a batch, a late call is dropped and the others are decided without it', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv, { now: () => T0 });
    // The first call takes the identity's lane; the next two queue and go together.
    const first = store.evaluate(call(bucket, 'u'));
    const late = store.evaluate(call(bucket, 'u', performance.now() - 1));
    const third = store.evaluate(call(bucket, 'u'));
    expect((await first)[0]!.remaining).toBe(9);
    expect(await codeOf(() => late)).toBe('STORE_TIMEOUT');
    expect((await third)[0]!.remaining).toBe(8);
    expect(store.stats.commits).toBe(2);
    const peek = createLimiter({ store, policy: bucket, prefix: 't' });
    expect((await peek.peek('u')).remaining).toBe(8);
  });

  it('calls of one process on one identity queue, then commit together, without conflicts', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv);
    const limiter = createLimiter({
      store,
      policy: slidingWindowLog({ limit: 40, window: '1h' }),
      blockCache: false,
    });
    const all = await Promise.all(Array.from({ length: 60 }, () => limiter.limit('hot')));
    expect(all.filter((d) => d.allowed)).toHaveLength(40);
    expect(all.map((d) => d.remaining)).toEqual([
      ...Array.from({ length: 40 }, (_, i) => 39 - i),
      ...Array.from({ length: 20 }, () => 0),
    ]);
    expect(store.stats.conflicts).toBe(0);
    // The first call alone, then those that queued behind it together: far fewer commits.
    expect(store.stats.commits).toBeLessThan(10);
  });

  it('decides as the reference with more keys than one getMany reads (blocks and overrides)', async () => {
    const kv = await freshKv();
    // Real time: an override's until must be ahead of the limiter's clock.
    const start = Date.now();
    let now = start;
    const policies = [1, 2, 3, 4, 5].map((i) =>
      fixedWindow({ limit: 2 + i, window: i * 60_000, blockFor: i * 1000, name: `w${i}` }),
    );
    // 5 policy keys, 5 block keys (all checked), 5 override keys (read only): 15 keys.
    const make = (store: Store & OverrideStore) =>
      createLimiter({
        store,
        policy: policies,
        prefix: 't',
        overrides: true,
        onStoreError: 'throw',
        blockCache: false,
      });
    const kvStore = new DenoKvStore(kv, { now: () => now });
    const actual = make(kvStore);
    const expected = make(referenceStore(() => now));
    for (const limiter of [actual, expected]) {
      await limiter.override('u', { limit: { w2: 2 }, until: start + 60_000 });
    }
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const a = await actual.limit('u');
      expect(a, `call ${i}`).toEqual(await expected.limit('u'));
      seen.add(a.allowed ? 'allowed' : 'blocked');
      now += 700;
    }
    // Not vacuous: the trace admitted, and denied (every policy blocks when it denies).
    expect([...seen].sort()).toEqual(['allowed', 'blocked']);
    expect(kvStore.stats.conflicts).toBe(0);
  });

  it('reports stored values it did not write as STORE_PROTOCOL, and a closed KV as STORE_UNAVAILABLE', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv);
    const c = call(bucket, 'u');
    await kv.set(['floodgate', c.keys[0]!], 'not floodgate state');
    expect(await codeOf(() => store.evaluate(c))).toBe('STORE_PROTOCOL');
    kv.close();
    expect(await codeOf(() => store.evaluate(call(bucket, 'v')))).toBe('STORE_UNAVAILABLE');
    expect(await codeOf(() => store.reset(['x']))).toBe('STORE_UNAVAILABLE');
  });

  it('a limiter on a failing KV decides by its default fallback, an in-process MemoryStore', async () => {
    const kv = await freshKv();
    const limiter = createLimiter({
      store: new DenoKvStore(kv),
      policy: tokenBucket({ limit: 2, interval: '1m' }),
      breaker: false,
    });
    expect((await limiter.limit('u')).reason).toBeUndefined();
    kv.close();
    const during = [await limiter.limit('u'), await limiter.limit('u'), await limiter.limit('u')];
    expect(during.map((d) => d.reason)).toEqual(Array(3).fill('store-unavailable'));
    // The fallback counts on its own: 2 admitted, then the limit holds in this process.
    expect(during.map((d) => d.allowed)).toEqual([true, true, false]);
  });
});
