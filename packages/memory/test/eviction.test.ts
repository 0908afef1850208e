// Which entry goes, and when: the eviction order (CLOCK over all tables) and the expiry sweep.
import { createLimiter, fixedWindow, type Policy, tokenBucket } from '@floodgate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

const T0 = 1_700_000_040_000;
const policy = fixedWindow({ limit: 5, window: '1m' });

function setup(maxKeys: number) {
  const clock = { t: T0 };
  const store = new MemoryStore({ now: () => clock.t, maxKeys });
  const a = createLimiter({ store, policy, prefix: 'a' });
  const b = createLimiter({ store, policy, prefix: 'b' });
  const held = (prefix: string, id: string, p: Policy = policy) =>
    store.ttl(`${prefix}:{${id}}:${p.id}`) !== undefined;
  return { clock, store, a, b, held };
}

describe('MemoryStore eviction order', () => {
  it('past maxKeys the oldest unused key goes, whichever limiter it belongs to', async () => {
    const { store, a, b, held } = setup(3);
    await a.limit('x');
    await b.limit('y');
    await a.limit('z');
    await b.limit('w'); // x is the oldest, in the other table
    expect(store.size).toBe(3);
    expect(held('a', 'x')).toBe(false);
    expect([held('b', 'y'), held('a', 'z'), held('b', 'w')]).toEqual([true, true, true]);
    await b.limit('v'); // then y
    expect(held('b', 'y')).toBe(false);
    expect(held('a', 'z')).toBe(true);
  });

  it('a key used since it last came up gets one second chance, then goes in turn', async () => {
    const { store, a, held } = setup(3);
    for (const id of ['k1', 'k2', 'k3']) await a.limit(id);
    await a.limit('k1'); // used: survives the next pass of the hand
    await a.limit('n1');
    expect(held('a', 'k1')).toBe(true);
    expect(held('a', 'k2')).toBe(false);
    await a.limit('n2');
    expect(held('a', 'k3')).toBe(false);
    expect(held('a', 'k1')).toBe(true);
    // The second chance put k1 behind n1: n1 goes first, then k1, not used again since.
    await a.limit('n3');
    expect(held('a', 'n1')).toBe(false);
    expect(held('a', 'k1')).toBe(true);
    await a.limit('n4');
    expect(held('a', 'k1')).toBe(false);
    expect(store.size).toBe(3);
    expect((await a.peek('n2')).remaining).toBe(4);
  });

  it('when every other key is in use, the new key stays and the oldest of them goes', async () => {
    const { store, a, held } = setup(3);
    for (const id of ['k1', 'k2', 'k3']) await a.limit(id);
    for (const id of ['k1', 'k2', 'k3']) await a.peek(id); // a read counts as use
    await a.limit('n1');
    expect(store.size).toBe(3);
    expect(held('a', 'n1')).toBe(true);
    expect(held('a', 'k1')).toBe(false);
    expect([held('a', 'k2'), held('a', 'k3')]).toEqual([true, true]);
  });

  it('a denial and a peek insert nothing, so they evict nothing', async () => {
    const { store, a, held } = setup(2);
    await a.limit('x');
    await a.limit('y', { cost: 5 });
    await a.limit('y'); // denied
    await a.peek('z');
    expect(store.size).toBe(2);
    expect([held('a', 'x'), held('a', 'y')]).toEqual([true, true]);
  });

  it('reset and ttl take keys out of the order too: the bound counts what is held', async () => {
    const { clock, store, a, b, held } = setup(3);
    for (const id of ['x', 'y', 'z']) await a.limit(id);
    await a.reset('y');
    clock.t += 1; // the clock of `ttl` below is unaffected by entries held
    expect(store.size).toBe(2);
    await b.limit('u'); // room: nothing evicted
    expect([held('a', 'x'), held('a', 'z'), held('b', 'u')]).toEqual([true, true, true]);
    await b.limit('v'); // x, the oldest held, goes; y is not visited twice
    expect(held('a', 'x')).toBe(false);
    expect(store.size).toBe(3);
    clock.t += 60_000; // all expired: ttl drops each it is asked about
    for (const [p, id] of [
      ['a', 'z'],
      ['b', 'u'],
      ['b', 'v'],
    ] as const)
      expect(held(p, id)).toBe(false);
    expect(store.size).toBe(0);
    await a.limit('again');
    expect(store.size).toBe(1);
  });
});

describe('MemoryStore expiry sweep', () => {
  it("inserts under one limiter sweep the other limiters' expired keys too", async () => {
    const { clock, store, a, b } = setup(10_000);
    for (let i = 0; i < 300; i++) await a.limit(`old-${i}`);
    clock.t += 60_000 + 60_000; // expired, and past the grace minute
    for (let i = 0; i < 200; i++) await b.limit(`new-${i}`);
    // Each insert looked at up to three of the oldest: 300 expired ones gone in 200 inserts.
    expect(store.size).toBe(200);
  });

  it('keeps a key within the grace minute after expiry (a caller whose clock is behind)', async () => {
    const { clock, store, a, b } = setup(10_000);
    await a.limit('x');
    clock.t += 60_000 + 59_999;
    await b.limit('y');
    expect(store.size).toBe(2);
    clock.t += 1;
    await b.limit('z');
    expect(store.size).toBe(2);
  });

  it("an insert's sweep never takes a key of the same call that it read expired", async () => {
    // One identity, two policies: the second policy's key is long expired and the oldest held;
    // the first has none, so the call inserts, and that insert's sweep looks at the second.
    const clock = { t: T0 };
    const store = new MemoryStore({ now: () => clock.t });
    const both = [tokenBucket({ limit: 5, interval: '1m' }), policy];
    const first = createLimiter({ store, policy, prefix: 'p' });
    const pair = createLimiter({ store, policy: both, prefix: 'p' });
    await first.limit('id');
    clock.t += 60_000 + 120_000;
    expect((await pair.limit('id')).remaining).toBe(4);
    expect(store.size).toBe(2);
    // The fixed window's state was written, not lost with an entry taken from under it.
    expect(store.ttl(`p:{id}:${policy.id}`)).toBe(60_000);
    expect(store.ttl(`p:{id}:${both[0]!.id}`)).toBe(12_000);
    expect((await first.peek('id')).remaining).toBe(4);
  });
});

describe('MemoryStore eviction bookkeeping', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constantFrom('limit', 'peek', 'reset'),
      prefix: fc.constantFrom('a', 'b'),
      id: fc.integer({ min: 0, max: 11 }),
    }),
    fc.record({ kind: fc.constant('wait'), ms: fc.constantFrom(1, 30_000, 61_000, 200_000) }),
  );

  it('random limit, peek, reset and time: size is what the tables hold, never past maxKeys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(op, { maxLength: 80 }),
        async (max, ops) => {
          const { clock, store, a, b, held } = setup(max);
          const limiters = { a, b };
          for (const o of ops) {
            if (o.kind === 'wait') clock.t += o.ms;
            else if (o.kind === 'reset') await limiters[o.prefix].reset(`u${o.id}`);
            else await limiters[o.prefix][o.kind](`u${o.id}`);
            expect(store.size).toBeLessThanOrEqual(max);
          }
          // ttl drops what expired: what is left must be exactly what `size` counts.
          let left = 0;
          for (const prefix of ['a', 'b'])
            for (let id = 0; id < 12; id++) if (held(prefix, `u${id}`)) left += 1;
          expect(store.size).toBe(left);
          // The order still reaches every entry held: fresh keys fill and evict as they should.
          // An old key used twice gets one second chance and may outlive fresh keys inserted
          // before its turn comes again; every old key has had its turn within 2 × max evictions
          // after the fill, so after 3 × max fresh keys the last max of them are what is held.
          const n = 3 * max;
          for (let i = 0; i < n; i++) await a.limit(`fresh-${i}`);
          expect(store.size).toBe(max);
          for (let i = n - max; i < n; i++) expect(held('a', `fresh-${i}`)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
