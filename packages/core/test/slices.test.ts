// withSlices: option checks, how many store calls a hot identity costs, and the bounds it
// promises (none over a fixed window, at most processes × size elsewhere), on a fake clock that
// drives both the stores and the slices' local time.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createLimiter,
  fixedWindow,
  isFloodgateError,
  type Limiter,
  leakyBucket,
  type Policy,
  quota,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { withSlices } from '../src/slices.js';
import { MapStore } from './map-store.js';

// A minute boundary: windows align to the epoch, so the tests know where a window ends.
const BASE = 1_700_000_040_000;
const storeNow = (): number => BASE + Math.floor(performance.now());

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'], now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function make(policy: Policy | Policy[], size: number, store = new MapStore(storeNow)) {
  const plain = createLimiter({ store, policy });
  return { store, plain, sliced: withSlices(plain, { size }) };
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (error) {
    return isFloodgateError(error) ? error.code : 'not a FloodgateError';
  }
  return undefined;
}

describe('withSlices: options and input', () => {
  const plain = createLimiter({
    store: new MapStore(storeNow),
    policy: fixedWindow({ limit: 100, window: '1m' }),
  });

  it('refuses bad options with INVALID_OPTION', async () => {
    for (const options of [
      { size: 0 },
      { size: 1.5 },
      { size: '10' },
      { size: 10, maxAgeMs: 0 },
      { size: 10, maxAgeMs: 'soon' },
      { size: 10, maxIdentities: 0 },
      { size: 10, sise: 3 },
      null,
    ]) {
      expect(await codeOf(() => withSlices(plain, options as never))).toBe('INVALID_OPTION');
    }
  });

  it('refuses a leaky bucket, whose admissions carry a delay a slice cannot hand out', async () => {
    const shaped = createLimiter({
      store: new MapStore(storeNow),
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 5 }),
    });
    expect(await codeOf(() => withSlices(shaped, { size: 5 }))).toBe('INVALID_OPTION');
  });

  it('returns a shadow limiter as it is: it enforces nothing, so there is nothing to slice', () => {
    const shadow = createLimiter({
      store: new MapStore(storeNow),
      policy: fixedWindow({ limit: 5, window: '1m' }),
      shadow: true,
    });
    expect(withSlices(shadow, { size: 5 })).toBe(shadow);
  });

  it('rejects a bad cost before the store is touched, also while a slice is held', async () => {
    const { store, sliced } = make(fixedWindow({ limit: 100, window: '1m' }), 10);
    await sliced.limit('k');
    await sliced.limit('k'); // leases a slice
    const calls = store.calls;
    expect(await codeOf(sliced.limit('k', { cost: 0 }))).toBe('INVALID_COST');
    expect(await codeOf(sliced.limit('k', { cost: 2.5 }))).toBe('INVALID_COST');
    expect(await codeOf(sliced.limit('k', { cost: 101 }))).toBe('COST_EXCEEDS_CAPACITY');
    expect(await codeOf(sliced.limit('k', { costs: 1 } as never))).toBe('INVALID_OPTION');
    expect(await codeOf(sliced.limit(''))).toBe('INVALID_KEY');
    expect(store.calls).toBe(calls);
  });
});

describe('withSlices: a hot identity', () => {
  it('decides alone first, then sizes slices to the demand, up to size, and serves from them', async () => {
    const { store, sliced } = make(fixedWindow({ limit: 100_000, window: '1m' }), 100);
    const first = await sliced.limit('hot');
    expect(first.remaining).toBe(99_999);
    expect(store.calls).toBe(1);
    for (let i = 2; i <= 1000; i++) {
      const d = await sliced.limit('hot');
      expect(d.allowed).toBe(true);
      // One process: the units held here count as remaining, so every figure is exact.
      expect(d.remaining).toBe(100_000 - i);
      expect(d.binding.remaining).toBe(d.remaining);
    }
    // Slices of 1, 2, 4, … as the demand shows, then of 100: about 1000 / 101 + 7 store calls.
    expect(store.calls).toBeLessThanOrEqual(20);
    // The store counted every unit handed out here, and what is still held (at most size).
    const held = 100_000 - 1000 - (await sliced.peek('hot')).remaining;
    expect(held).toBeGreaterThanOrEqual(0);
    expect(held).toBeLessThanOrEqual(100);
  });

  it('makes one lease for many concurrent callers, who wait for it rather than each leasing', async () => {
    const { store, sliced } = make(tokenBucket({ limit: 100_000, interval: '1m' }), 64);
    await sliced.limit('hot');
    await Promise.all(Array.from({ length: 256 }, () => sliced.limit('hot')));
    const before = store.calls;
    const ds = await Promise.all(Array.from({ length: 256 }, () => sliced.limit('hot')));
    expect(ds.every((d) => d.allowed)).toBe(true);
    // 256 requests at up to 65 a lease: 4 leases (256 each leasing alone).
    expect(store.calls - before).toBeLessThanOrEqual(4);
    // After a pause past maxAgeMs the slice has lapsed, and the callers still share one lease.
    vi.advanceTimersByTime(1001);
    const lapsed = store.calls;
    await Promise.all(Array.from({ length: 256 }, () => sliced.limit('hot')));
    expect(store.calls - lapsed).toBeLessThanOrEqual(5);
  });

  it('strands next to nothing at a moderate rate: four processes at 20 a second admit all 800', async () => {
    const store = new MapStore(storeNow);
    const policy = fixedWindow({ limit: 1000, window: '10s' });
    const procs = [0, 1, 2, 3].map(() =>
      withSlices(createLimiter({ store, policy }), { size: 100 }),
    );
    let admitted = 0;
    for (let t = 0; t < 10_000; t += 50) {
      for (const p of procs) if ((await p.limit('id')).allowed) admitted++;
      vi.advanceTimersByTime(50);
    }
    // Slices sized to a fixed 100 stranded most of each one, every maxAgeMs: 256 of 800.
    expect(admitted).toBe(800);
    expect(store.calls).toBeLessThan(800);
  });

  it('leaves a cold identity to the store: a request now and then shows no demand for a slice', async () => {
    const { store, sliced } = make(fixedWindow({ limit: 1000, window: '1m' }), 50);
    await sliced.limit('cold');
    vi.advanceTimersByTime(2000); // past the default maxAgeMs (1 s for a minute window)
    await sliced.limit('cold');
    expect((await sliced.peek('cold')).remaining).toBe(998);
    expect(store.calls).toBe(3);
  });

  it('ends a slice after maxAgeMs, and at the end of the fixed window it was charged in', async () => {
    const store = new MapStore(storeNow);
    const plain = createLimiter({ store, policy: fixedWindow({ limit: 10_000, window: '10s' }) });
    const sliced = withSlices(plain, { size: 100, maxAgeMs: '5s' });
    await sliced.limit('k');
    await sliced.limit('k'); // a slice, at 0 ms of a 10 s window
    vi.advanceTimersByTime(4999);
    const calls = store.calls;
    await sliced.limit('k');
    expect(store.calls).toBe(calls); // still the slice
    vi.advanceTimersByTime(1);
    await sliced.limit('k');
    expect(store.calls).toBe(calls + 1); // 5 s old: a new lease

    vi.advanceTimersByTime(9000 - 5000); // 1 s before the window ends
    await sliced.limit('k'); // a lease 1 s before the window ends
    const at9 = store.calls;
    vi.advanceTimersByTime(998);
    await sliced.limit('k');
    expect(store.calls).toBe(at9);
    // The slice stops 1 ms before the window's end: a store's clock reads whole ms (below).
    vi.advanceTimersByTime(1);
    await sliced.limit('k');
    expect(store.calls).toBe(at9 + 1);
  });

  /**
   * Process a makes 30 requests `110 - offset` ms before a 2 s window ends, so that it holds a
   * slice at the seam; `at` ms after the window began, b asks 400 times and a 20 times. Returns
   * what the new window admitted and what a held at the seam.
   */
  async function acrossSeam(
    offset: number,
    at: number,
  ): Promise<{ admitted: number; held: number }> {
    const store = new MapStore(storeNow);
    const policy = fixedWindow({ limit: 300, window: '2s' });
    const [a, b] = [0, 1].map(() =>
      withSlices(createLimiter({ store, policy }), { size: 12, maxAgeMs: '1500ms' }),
    );
    const start = Math.floor(performance.now() / 2000) * 2000 + 2000; // the next window
    vi.advanceTimersByTime(start - 110 + offset - performance.now());
    for (let i = 0; i < 30; i++) expect((await a!.limit('id')).allowed).toBe(true);
    const held = 300 - (await b!.peek('id')).remaining - 30;
    vi.advanceTimersByTime(start + at - performance.now());
    let admitted = 0;
    for (let i = 0; i < 400; i++) if ((await b!.limit('id')).allowed) admitted++;
    for (let i = 0; i < 20; i++) if ((await a!.limit('id')).allowed) admitted++;
    return { admitted, held };
  }

  it('admits no more than the limit in the next window, whatever a slice held at the seam', async () => {
    const { admitted, held } = await acrossSeam(0, 0);
    expect(held).toBeGreaterThanOrEqual(6); // a slice worth testing: 300 + held if it were served
    expect(admitted).toBe(300);
  });

  it('ends a slice before the window turns on a store clock that reads whole ms', async () => {
    // Leases sent at x.5 ms: the store counts its window's end from x ms, 0.5 ms early. At
    // 0.3 ms into the next window the store is in it, and the local clock 0.2 ms short of the end
    // a lease's resetAfterMs gives.
    const { admitted, held } = await acrossSeam(0.5, 0.3);
    expect(held).toBeGreaterThanOrEqual(6);
    expect(admitted).toBe(300);
  });

  it('shrinks slices near the limit and leaves the last units and every denial to the store', async () => {
    const { store, plain, sliced } = make(fixedWindow({ limit: 40, window: '1m' }), 16);
    const admitted: number[] = [];
    for (let i = 0; i < 60; i++) {
      const d = await sliced.limit('k');
      if (d.allowed) admitted.push(i);
      else {
        // A denial is the store's own, retryAfterMs tight: the window's end.
        const twin = await plain.peek('k');
        expect(d.retryAfterMs).toBe(twin.resetAfterMs);
        expect(d.remaining).toBe(0);
      }
    }
    // Every unit of the window was handed out: none stranded in a slice.
    expect(admitted).toHaveLength(40);
    expect(store.calls).toBeLessThan(60);
  });

  it('refuses a limiter that shadows some of its policies (a lease would be charged apart)', () => {
    const plain = createLimiter({
      store: new MapStore(storeNow),
      policy: [
        fixedWindow({ name: 'enforced', limit: 1000, window: '1m' }),
        fixedWindow({ name: 'watched', limit: 10, window: '1m', shadow: true }),
      ],
    });
    expect(() => withSlices(plain, { size: 50 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });

  it("reset drops this process's slice as well as the store's state", async () => {
    const { store, sliced } = make(fixedWindow({ limit: 1000, window: '1m' }), 50);
    await sliced.limit('k');
    await sliced.limit('k');
    await sliced.reset('k');
    const calls = store.calls;
    await sliced.limit('k');
    expect(store.calls).toBe(calls + 1);
    expect((await sliced.peek('k')).remaining).toBe(999);
  });

  it('a failed lease rejects its caller and those waiting on it, and the next call tries again', async () => {
    class FlakyStore extends MapStore {
      fail = false;
      override async evaluate(call: Parameters<MapStore['evaluate']>[0]) {
        if (this.fail) throw new Error('down');
        return super.evaluate(call);
      }
    }
    const store = new FlakyStore(storeNow);
    const sliced = withSlices(
      createLimiter({
        store,
        policy: fixedWindow({ limit: 1000, window: '1m' }),
        onStoreError: 'throw',
      }),
      { size: 10 },
    );
    await sliced.limit('k');
    store.fail = true;
    const codes = await Promise.all(Array.from({ length: 3 }, () => codeOf(sliced.limit('k'))));
    expect(codes).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
    store.fail = false;
    expect((await sliced.limit('k')).allowed).toBe(true);
  });
});

/** Four processes (four wrappers over one store) at random times and costs. */
async function run(
  policy: Policy,
  size: number,
  steps: readonly { p: number; cost: number; dt: number }[],
  maxAgeMs: number,
): Promise<{ at: number; cost: number }[]> {
  const store = new MapStore(storeNow);
  const procs: Limiter[] = [0, 1, 2, 3].map(() =>
    withSlices(createLimiter({ store, policy }), { size, maxAgeMs }),
  );
  const admitted: { at: number; cost: number }[] = [];
  for (const s of steps) {
    vi.advanceTimersByTime(s.dt);
    const d = await procs[s.p]!.limit('id', { cost: s.cost });
    if (d.allowed) admitted.push({ at: storeNow(), cost: s.cost });
  }
  return admitted;
}

const steps = fc.array(
  fc.record({
    p: fc.integer({ min: 0, max: 3 }),
    cost: fc.integer({ min: 1, max: 3 }),
    // Bursts (many calls a few ms apart) between quiet gaps: a slice taken in a quiet end of one
    // window and a burst in the next is where an unbounded slice would over-admit.
    dt: fc.oneof(
      { arbitrary: fc.constant(0), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 30 }), weight: 4 },
      { arbitrary: fc.integer({ min: 0, max: 1500 }), weight: 1 },
    ),
  }),
  { minLength: 1, maxLength: 300 },
);

// Properties of a few hundred async runs each: about 3 s on a quiet 2-core machine, several
// times that under a full CI run beside other suites. What they check does not depend on time.
describe('withSlices: the bounds, four processes on one store', { timeout: 60_000 }, () => {
  it('fixedWindow and quota: never more than the limit in a window (a slice ends with its window)', async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 1, max: 12 }), async (s, size) => {
        for (const policy of [
          fixedWindow({ limit: 30, window: '2s' }),
          quota({ limit: 30, per: 'day', timeZone: 'UTC' }),
        ]) {
          // Slices that could outlive their window if nothing ended them there.
          const admitted = await run(policy, size, s, 1500);
          const per = new Map<number, number>();
          const span = policy.kind === 'quota' ? 86_400_000 : policy.windowMs;
          for (const a of admitted) {
            const w = Math.floor(a.at / span);
            per.set(w, (per.get(w) ?? 0) + a.cost);
          }
          for (const n of per.values()) expect(n).toBeLessThanOrEqual(30);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("tokenBucket and slidingWindowLog: over any interval, at most the policy's bound + 4 × size", async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 1, max: 8 }), async (s, size) => {
        const cases: [Policy, (ms: number) => number][] = [
          // burst 20, then 20 per second
          [tokenBucket({ limit: 20, interval: '1s' }), (ms) => 20 + Math.floor((ms * 20) / 1000)],
          // 20 in any 1 s: an interval of length ms spans at most ceil((ms + 1) / 1000) windows
          [slidingWindowLog({ limit: 20, window: '1s' }), (ms) => 20 * Math.ceil((ms + 1) / 1000)],
        ];
        for (const [policy, bound] of cases) {
          const admitted = await run(policy, size, s, 400);
          for (let i = 0; i < admitted.length; i++) {
            let sum = 0;
            for (let j = i; j < admitted.length; j++) {
              sum += admitted[j]!.cost;
              const ms = admitted[j]!.at - admitted[i]!.at;
              expect(sum).toBeLessThanOrEqual(bound(ms) + 4 * size);
            }
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
