// A policy whose limit (burst, queue) changes keeps its count: ids follow what a policy counts,
// and each kind decides from the state another limit wrote. Every number below is worked out by
// hand from docs/algorithms.md ("Keys, and a limit that changes"), raised and lowered, within a
// window and across a seam.
import { describe, expect, it } from 'vitest';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import type { PolicyOutcome, PolicyState } from '../src/policies/common.js';
import { evaluatePolicy } from '../src/policies/compose.js';
import { windowRadix } from '../src/policies/fixed_window.js';
import { QUOTA_RADIX } from '../src/policies/quota.js';
import { slidingRadix } from '../src/policies/sliding_window.js';
import { decodeState } from '../src/redis/replay.js';
import { MapStore } from './map-store.js';

/** Aligned to every window that divides a day. */
const T0 = 1_699_920_000_000;

/** One identity's states through calls of possibly different policies, by policy id as a store keeps them. */
class Key {
  readonly states = new Map<string, PolicyState>();
  last: string | undefined;
  /** The state of the policy called last. */
  get state(): PolicyState | undefined {
    return this.last === undefined ? undefined : this.states.get(this.last);
  }
  call(policy: Policy, t: number, cost = 1): PolicyOutcome {
    this.last = policy.id;
    const o = evaluatePolicy(policy, this.states.get(policy.id), T0 + t, cost);
    if (o.allowed) this.states.set(policy.id, o.next!);
    return o;
  }
}

/** The parts of an outcome a caller sees, before (denied) or after (admitted) the charge. */
const seen = (o: PolicyOutcome) =>
  o.allowed
    ? { allowed: true, remaining: o.nextRemaining, reset: o.nextResetAfterMs, delay: o.delayMs }
    : { allowed: false, remaining: o.remaining, reset: o.resetAfterMs, retry: o.retryAfterMs };

describe('a policy keeps its id when its limit, burst or queue changes', () => {
  it('one id for a kind, window and name, whatever the limit', () => {
    expect(fixedWindow({ limit: 10, window: '1m' }).id).toBe(
      fixedWindow({ limit: 100, window: '1m' }).id,
    );
    expect(tokenBucket({ limit: 10, interval: '1m', name: 'api' }).id).toBe(
      tokenBucket({ limit: 100, interval: '1m', burst: 250, name: 'api' }).id,
    );
    expect(fixedWindow({ limit: 10, window: '1m', name: 'a' }).id).not.toBe(
      fixedWindow({ limit: 10, window: '1m', name: 'b' }).id,
    );
  });

  it('a limiter on another plan reads the count the first one wrote (free → pro → free)', async () => {
    const store = new MapStore(() => T0 + 1_000);
    const free = createLimiter({
      store,
      policy: fixedWindow({ limit: 10, window: '1m', name: 'api' }),
    });
    const pro = createLimiter({
      store,
      policy: fixedWindow({ limit: 100, window: '1m', name: 'api' }),
    });
    expect((await free.limit('c', { cost: 10 })).remaining).toBe(0);
    // 10 used: the pro plan has 90 left in this minute, not 100.
    const up = await pro.limit('c');
    expect([up.allowed, up.remaining]).toEqual([true, 89]);
    expect((await pro.limit('c', { cost: 40 })).remaining).toBe(49);
    // 51 used, moved back to free (10): denied at once, nothing left, until the minute ends.
    const down = await free.limit('c');
    expect([down.allowed, down.remaining, down.retryAfterMs]).toEqual([false, 0, 59_000]);
    expect(store.states.size).toBe(1);
  });

  it('two policies of one kind over one window need names of their own in one limiter', () => {
    expect(() =>
      createLimiter({
        store: new MapStore(),
        policy: [
          tokenBucket({ limit: 10, interval: '1s', burst: 100 }),
          tokenBucket({ limit: 50, interval: '1s', burst: 10 }),
        ],
      }),
    ).toThrow(/share one count; give them distinct names/);
    createLimiter({
      store: new MapStore(),
      policy: [
        tokenBucket({ limit: 10, interval: '1s', burst: 100, name: 'sustained' }),
        tokenBucket({ limit: 50, interval: '1s', burst: 10, name: 'peak' }),
      ],
    });
  });
});

describe('fixedWindow: the window count is used units, under any limit', () => {
  const free = fixedWindow({ limit: 10, window: '1m' });
  const pro = fixedWindow({ limit: 100, window: '1m' });

  it('raised mid-window: the new limit less what the window already counted', () => {
    const k = new Key();
    expect(seen(k.call(free, 1_000, 10))).toMatchObject({ allowed: true, remaining: 0 });
    expect(seen(k.call(free, 1_500))).toMatchObject({ allowed: false, retry: 58_500 });
    expect(seen(k.call(pro, 2_000))).toEqual({
      allowed: true,
      remaining: 89,
      reset: 58_000,
      delay: 0,
    });
    // 90 more would make 101: denied, tight to the window's end.
    expect(seen(k.call(pro, 2_000, 90))).toEqual({
      allowed: false,
      remaining: 89,
      reset: 58_000,
      retry: 58_000,
    });
    expect(seen(k.call(pro, 2_000, 89))).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('lowered mid-window: a count above the new limit denies at once, remaining 0, until the seam', () => {
    const k = new Key();
    k.call(pro, 0, 50);
    expect(seen(k.call(free, 30_000))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 30_000,
      retry: 30_000,
    });
    // At the seam the lowered limit holds exactly: 10, then a denial.
    expect(seen(k.call(free, 60_000, 10))).toMatchObject({ allowed: true, remaining: 0 });
    expect(seen(k.call(free, 60_000))).toMatchObject({ allowed: false, retry: 60_000 });
  });

  it('across a seam: the count holds to the seam, then the new window holds the new limit', () => {
    const up = new Key();
    up.call(free, 59_000, 10);
    expect(seen(up.call(pro, 59_999, 91))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(up.call(pro, 60_000, 100))).toMatchObject({ allowed: true, remaining: 0 });
    const down = new Key();
    down.call(pro, 59_000, 100);
    expect(seen(down.call(free, 59_999))).toMatchObject({ allowed: false, remaining: 0, retry: 1 });
    expect(seen(down.call(free, 60_000, 10))).toMatchObject({ allowed: true, remaining: 0 });
    expect(seen(down.call(free, 60_001))).toMatchObject({ allowed: false, retry: 59_999 });
  });
});

describe('quota: the period count is used units, under any limit', () => {
  const H = 3_600_000;
  const big = quota({ limit: 10, per: 'day' });
  const small = quota({ limit: 3, per: 'day' });

  it('lowered mid-period: denied until the next midnight; raised: the rest of the new limit', () => {
    const k = new Key();
    k.call(big, H, 5);
    expect(seen(k.call(small, 2 * H))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 22 * H,
      retry: 22 * H,
    });
    expect(seen(k.call(big, 3 * H))).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('across a midnight: the count holds to midnight, then the new period holds the new limit', () => {
    const k = new Key();
    k.call(big, H, 10);
    expect(seen(k.call(small, 24 * H - 1))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(k.call(small, 24 * H, 3))).toMatchObject({ allowed: true, remaining: 0 });
    expect(seen(k.call(small, 24 * H))).toMatchObject({ allowed: false, retry: 24 * H });
  });
});

describe('slidingWindow: both counters carry over; the weighted estimate meets the new limit', () => {
  const ten = slidingWindow({ limit: 10, window: 1000 });
  const four = slidingWindow({ limit: 4, window: 1000 });

  it('raised within a window: 4 used of 4, then 6 more of 10, and a tight wait', () => {
    const k = new Key();
    k.call(four, 100, 4);
    expect(seen(k.call(ten, 200, 6))).toMatchObject({ allowed: true, remaining: 0 });
    // Next window, 100 ms in: 10 × 900 + 1 × 1000 ≤ 10 × 1000 (and not 1 ms earlier).
    expect(seen(k.call(ten, 200))).toMatchObject({ allowed: false, retry: 900 });
    expect(seen(k.call(ten, 1_099))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(k.call(ten, 1_100))).toMatchObject({ allowed: true });
  });

  it('lowered within a window: current count 10 above 4 waits until it weighs 3', () => {
    const k = new Key();
    k.call(ten, 100, 10);
    // 10 × (1000 − e) + 1000 ≤ 4000 from e = 700 of the next window: 800 + 700 ms away.
    expect(seen(k.call(four, 200))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 1_800,
      retry: 1_500,
    });
    expect(seen(k.call(four, 1_699))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(k.call(four, 1_700))).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('lowered across a seam: the previous window weighs against the new limit', () => {
    const k = new Key();
    k.call(ten, 100, 10);
    // 500 ms into the next window: 10 × 500 weighs 5 units, more than 4 allows.
    expect(seen(k.call(four, 1_500))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 500,
      retry: 200,
    });
    // Under the old limit the same state leaves 5.
    expect(k.call(ten, 1_500).remaining).toBe(5);
  });
});

describe('slidingWindowLog: the log keeps every entry; a count above a lowered limit waits', () => {
  const ten = slidingWindowLog({ limit: 10, window: 1000 });
  const five = slidingWindowLog({ limit: 5, window: 1000 });
  const eight = slidingWindowLog({ limit: 8, window: 1000 });

  it('lowered: remaining 0 and the wait until the 6th oldest unit leaves', () => {
    const k = new Key();
    k.call(ten, 0, 3);
    k.call(ten, 100, 3);
    k.call(ten, 200, 4);
    // 10 + 1 − 5 = 6: the 6th oldest unit is in the entry at 100, which leaves at 1100.
    expect(seen(k.call(five, 300))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 900,
      retry: 800,
    });
    expect(seen(k.call(five, 1_099))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(k.call(five, 1_100))).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('raised: the entries already logged count, and leave on time', () => {
    const k = new Key();
    k.call(five, 0, 5);
    expect(seen(k.call(eight, 500, 3))).toMatchObject({ allowed: true, remaining: 0 });
    expect(seen(k.call(eight, 500))).toMatchObject({ allowed: false, retry: 500 });
    // Past the first entry's window: 3 left in it, 5 more of 8.
    expect(seen(k.call(eight, 1_000, 5))).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe('tokenBucket: the arrival time carries over, so the time until full does', () => {
  // 10 and 100 a minute, burst = limit: a unit is 6 s and 0.6 s, the bucket 60 s either way.
  const free = tokenBucket({ limit: 10, interval: '1m' });
  const pro = tokenBucket({ limit: 100, interval: '1m' });

  it('raised: half used stays half used (50 of 100 left), refilling at the new rate', () => {
    const k = new Key();
    k.call(free, 0, 5);
    expect(seen(k.call(pro, 0))).toEqual({
      allowed: true,
      remaining: 49,
      reset: 30_600,
      delay: 0,
    });
  });

  it('raised from drained: no new burst, the new rate from now on', () => {
    const k = new Key();
    k.call(free, 0, 10);
    expect(seen(k.call(pro, 0))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 60_000,
      retry: 600,
    });
    expect(seen(k.call(pro, 600))).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('lowered: half used stays half used (5 of 10), and drained waits a whole new unit', () => {
    const half = new Key();
    half.call(pro, 0, 50);
    expect(half.call(free, 0).remaining).toBe(5);
    const drained = new Key();
    drained.call(pro, 0, 100);
    expect(seen(drained.call(free, 0))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 60_000,
      retry: 6_000,
    });
  });

  it('a smaller burst: an arrival time past the new capacity waits until it is within reach', () => {
    const k = new Key();
    k.call(tokenBucket({ limit: 10, interval: '1m', burst: 20 }), 0, 20);
    // 120 s ahead, the bucket now holds 60 s: one unit fits at 120 − 60 + 6 s.
    expect(seen(k.call(free, 0))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 120_000,
      retry: 66_000,
    });
    expect(seen(k.call(free, 65_999))).toMatchObject({ allowed: false, retry: 1 });
    expect(seen(k.call(free, 66_000))).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('sub-ms ticks of another rate are rescaled, rounded up (3/s → 7/s), carried at a whole ms (3/s → 16/s)', () => {
    // 3 a second: a unit is 1000/3 ms, stored as 333 ms and 1 tick of 3.
    const k = new Key();
    k.call(tokenBucket({ limit: 3, interval: '1s' }), 0);
    expect(k.state).toEqual([T0 + 333, 1, 3]);
    // 7 a second: 1/3 ms is ceil(7/3) = 3 ticks of 7; 333 3/7 ms ahead leave 4.67 units: 4.
    const o = k.call(tokenBucket({ limit: 7, interval: '1s' }), 0);
    expect([o.remaining, o.nextRemaining, o.nextResetAfterMs]).toEqual([4, 3, 477]);
    expect(k.state).toEqual([T0 + 476, 2, 7]);
    // 2/3 ms in ticks of 2 (16 a second: a unit is 62.5 ms) is ceil(4/3) = 2: a whole ms.
    const j = new Key();
    j.call(tokenBucket({ limit: 3, interval: '1s' }), 0, 2);
    expect(j.state).toEqual([T0 + 666, 2, 3]);
    const p = j.call(tokenBucket({ limit: 16, interval: '1s' }), 0);
    expect([p.remaining, p.resetAfterMs]).toEqual([5, 667]);
    expect(j.state).toEqual([T0 + 729, 1, 2]);
  });
});

describe('leakyBucket: the queue keeps its end in time; admitted requests keep their starts', () => {
  it('rate raised, queue kept: the next request starts after the old queue, at the new spacing', () => {
    const k = new Key();
    const slow = leakyBucket({ limit: 10, interval: '1s', queue: 5 });
    const delays = [0, 1, 2, 3].map(() => k.call(slow, 0).delayMs);
    expect(delays).toEqual([0, 100, 200, 300]);
    // 20 a second with a queue of 5 holds 300 ms; the old queue ends 400 ms ahead.
    const fast = leakyBucket({ limit: 20, interval: '1s', queue: 5 });
    expect(seen(k.call(fast, 0))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 400,
      retry: 150,
    });
    expect(seen(k.call(fast, 150))).toEqual({
      allowed: true,
      remaining: 0,
      reset: 300,
      delay: 250,
    });
  });

  it('rate and queue raised: the queue grows from its end, 50 ms apart', () => {
    const k = new Key();
    const slow = leakyBucket({ limit: 10, interval: '1s', queue: 5 });
    for (let i = 0; i < 4; i++) k.call(slow, 0);
    const big = leakyBucket({ limit: 20, interval: '1s', queue: 15 });
    const first = k.call(big, 0);
    expect([first.remaining, first.delayMs]).toEqual([8, 400]);
    expect(k.call(big, 0).delayMs).toBe(450);
  });

  it('rate lowered: the queue ends where it did, and the next starts are 100 ms apart', () => {
    const k = new Key();
    const fast = leakyBucket({ limit: 20, interval: '1s', queue: 5 });
    const delays = [0, 1, 2, 3].map(() => k.call(fast, 0).delayMs);
    expect(delays).toEqual([0, 50, 100, 150]);
    const slow = leakyBucket({ limit: 10, interval: '1s', queue: 5 });
    const next = k.call(slow, 0);
    expect([next.remaining, next.delayMs]).toEqual([4, 200]);
    expect(k.call(slow, 0).delayMs).toBe(300);
  });
});

describe('no stored value encodes the limit', () => {
  it('window counts are packed by a radix of the window alone (a power of two)', () => {
    expect(windowRadix(60_000)).toBe(2 ** 26);
    expect(windowRadix(1_000)).toBe(2 ** 20);
    expect(windowRadix(86_400_000)).toBe(2 ** 37);
    expect(slidingRadix(60_000)).toBe(8_192);
    expect(slidingRadix(3_600_000)).toBe(65_536);
    expect(QUOTA_RADIX).toBe(windowRadix(60_000));
    // Window numbers up to 2^42 ms pack below 2^53 with any count below the radix.
    for (const w of [1, 7, 999, 1_000, 60_000, 86_400_000, 2 ** 42 + 1]) {
      const last = Math.floor(2 ** 42 / w);
      expect(last * windowRadix(w) + windowRadix(w) - 1).toBeLessThan(2 ** 53);
      expect(
        Number.isSafeInteger((last * slidingRadix(w) + slidingRadix(w) - 1) * slidingRadix(w)),
      ).toBe(true);
    }
  });

  it('a value Redis holds decodes the same under any limit (the batch replay reads it so)', () => {
    const w = 60_000;
    const k = Math.floor(T0 / w);
    const fw = k * windowRadix(w) + 57;
    for (const limit of [1, 10, 1_000_000]) {
      expect(decodeState(fw, fixedWindow({ limit, window: w }))).toEqual([k * w, 57]);
    }
    const sw = (k * slidingRadix(w) + 3) * slidingRadix(w) + 8_000;
    expect(decodeState(sw, slidingWindow({ limit: 2, window: w }))).toEqual([k * w, 3, 8_000]);
    // A bucket's integer is its arrival time in ms; between two ms, a string with its rate.
    expect(decodeState(T0 + 5, tokenBucket({ limit: 7, interval: '1m' }))).toEqual([T0 + 5, 0, 7]);
    expect(decodeState(`${T0}:2:7`, tokenBucket({ limit: 3, interval: '1m' }))).toEqual([T0, 2, 7]);
  });
});

describe('slidingWindowLog: a cost above a lowered limit is denied, never an error', () => {
  // Only an override (or a changed limit) lets a cost above the limit through: no entry can then
  // hold the unit that would have to leave, and the wait is the log's end, or a window without one.
  const five = slidingWindowLog({ limit: 5, window: '1s' });
  const one = slidingWindowLog({ limit: 1, window: '1s' });
  it('on an empty log: denied for a window', () => {
    expect(seen(new Key().call(one, 0, 2))).toEqual({
      allowed: false,
      remaining: 1,
      reset: 0,
      retry: 1000,
    });
  });
  it('on a log whose entries all left the window: denied for a window', () => {
    const k = new Key();
    k.call(five, 0);
    expect(seen(k.call(one, 1500, 2))).toMatchObject({ allowed: false, retry: 1000 });
  });
  it('on a log with entries in the window: denied until the last of them leaves', () => {
    const k = new Key();
    k.call(five, 0);
    k.call(five, 100);
    expect(seen(k.call(one, 200, 2))).toEqual({
      allowed: false,
      remaining: 0,
      reset: 900,
      retry: 900,
    });
  });
});
