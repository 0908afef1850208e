import {
  fixedWindow,
  leakyBucket,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { expectTtls, type Harness, type Run } from './harness.js';

/** `[at, cost | 'peek', allowed, remaining, resetAfterMs, retryAfterMs, delayMs]`, `at` from an aligned base. */
type Step = readonly [number, number | 'peek', boolean, number, number, number, number];

/**
 * Plays `steps` on `policy` with every time and duration in them × `k` (`policy` is built with
 * its windows × `k`): where a table's values are exact, not rounded, they scale with its windows.
 */
async function play(
  h: Harness,
  run: Run,
  k: number,
  policy: Policy,
  steps: readonly Step[],
): Promise<void> {
  const l = run.limiter(policy);
  for (const [t, cost, allowed, remaining, ...durations] of steps) {
    const at = t * k;
    const expected = [allowed, remaining, ...durations.map((ms) => ms * k)];
    run.at(at);
    const d = cost === 'peek' ? await l.peek('k') : await l.limit('k', { cost });
    const what = `${policy.id} at +${at} ms, ${cost === 'peek' ? 'peek' : `cost ${cost}`}: [allowed, remaining, resetAfterMs, retryAfterMs, delayMs]`;
    h.expect([d.allowed, d.remaining, d.resetAfterMs, d.retryAfterMs, d.delayMs], what).toEqual(
      expected,
    );
    const { name: _n, kind: _k, limit: _l, windowMs: _w, ...part } = d.policies[0]!;
    h.expect(part, `${what}: the policy's own part`).toEqual({
      allowed: d.allowed,
      remaining: d.remaining,
      resetAfterMs: d.resetAfterMs,
      retryAfterMs: d.retryAfterMs,
      delayMs: d.delayMs,
    });
    if (cost !== 'peek' && d.allowed) await expectTtls(h, run, l, 'k', d);
  }
}

export function registerSemantics(h: Harness): void {
  // The tables are written for windows of W = 1 s; with `semanticsScale` (a store whose keys
  // expire on real time, behind slow round trips) W and every time in them are k times that,
  // so no key the table still needs expires within a round trip.
  const k = h.semanticsScale;
  const W = 1000 * k;
  h.api.describe('the semantics table, policy by policy', () => {
    h.test(
      'fixedWindow: count + cost ≤ limit per epoch-aligned window; 2 × limit at the seam',
      async (run) => {
        await play(h, run, k, fixedWindow({ limit: 5, window: W }), [
          [900, 3, true, 2, 100, 0, 0],
          [900, 3, false, 2, 100, 100, 0],
          [950, 2, true, 0, 50, 0, 0],
          [999, 1, false, 0, 1, 1, 0],
          [1000, 'peek', true, 5, 0, 0, 0],
          // Five more right after the seam: ten admitted within 101 ms.
          [1000, 5, true, 0, 1000, 0, 0],
          [1999, 1, false, 0, 1, 1, 0],
          [2500, 4, true, 1, 500, 0, 0],
        ]);
      },
    );

    h.test('slidingWindowLog: units in (now − window, now] + cost ≤ limit', async (run) => {
      await play(h, run, k, slidingWindowLog({ limit: 3, window: W }), [
        [0, 1, true, 2, 1000, 0, 0],
        [400, 2, true, 0, 1000, 0, 0],
        [999, 1, false, 0, 401, 1, 0],
        // Cost 2 waits for the second-oldest unit, logged at 400.
        [999, 2, false, 0, 401, 401, 0],
        [1000, 1, true, 0, 1000, 0, 0],
        [1000, 2, false, 0, 1000, 400, 0],
        [1399, 2, false, 0, 601, 1, 0],
        [1400, 2, true, 0, 1000, 0, 0],
      ]);
    });

    h.test(
      'slidingWindow: prev × (window − elapsed) + (cur + cost) × window ≤ limit × window',
      async (run) => {
        await play(h, run, k, slidingWindow({ limit: 10, window: W }), [
          [0, 10, true, 0, 2000, 0, 0],
          [999, 1, false, 0, 1001, 101, 0],
          [1000, 1, false, 0, 1000, 100, 0],
          [1099, 1, false, 0, 901, 1, 0],
          // 10 × 900 + 1 × 1000 = 10 × 1000: equality admits.
          [1100, 1, true, 0, 1900, 0, 0],
          [1500, 'peek', true, 4, 1500, 0, 0],
          [1500, 5, false, 4, 1500, 100, 0],
          [1600, 5, true, 0, 1400, 0, 0],
          [2000, 1, true, 3, 2000, 0, 0],
        ]);
      },
    );

    h.test('tokenBucket: continuous refill of limit per interval, capped at burst', async (run) => {
      await play(h, run, k, tokenBucket({ limit: 2, interval: W, burst: 4 }), [
        [0, 'peek', true, 4, 0, 0, 0],
        [0, 4, true, 0, 2000, 0, 0],
        [0, 1, false, 0, 2000, 500, 0],
        [250, 1, false, 0, 1750, 250, 0],
        [499, 1, false, 0, 1501, 1, 0],
        [500, 1, true, 0, 2000, 0, 0],
        [1500, 3, false, 2, 1000, 500, 0],
        [1500, 2, true, 0, 2000, 0, 0],
        // Idle for long: the bucket holds burst tokens, not more.
        [10_000, 'peek', true, 4, 0, 0, 0],
        [10_000, 3, true, 1, 1500, 0, 0],
      ]);
    });

    h.test(
      'tokenBucket: a fractional rate (3 per second) is exact, fractions carried',
      async (run) => {
        // Never stretched: a rate of 3 per k s rounds to other whole ms than k × these (334 is
        // ⌈333.3⌉), and this table is about that rounding. Its shortest TTL is a second.
        await play(h, run, 1, tokenBucket({ limit: 3, interval: '1s' }), [
          [0, 3, true, 0, 1000, 0, 0],
          [0, 1, false, 0, 1000, 334, 0],
          [333, 1, false, 0, 667, 1, 0],
          [334, 1, true, 0, 1000, 0, 0],
          [666, 1, false, 0, 668, 1, 0],
          [667, 1, true, 0, 1000, 0, 0],
          [999, 1, false, 0, 668, 1, 0],
          // Six in the first 1000 ms: burst + rate × t, exactly.
          [1000, 1, true, 0, 1000, 0, 0],
        ]);
      },
    );

    h.test(
      'leakyBucket: starts evenly spaced, up to queue waiting, delayMs says how long',
      async (run) => {
        await play(h, run, k, leakyBucket({ limit: 2, interval: W, queue: 2 }), [
          [0, 'peek', true, 3, 0, 0, 0],
          [0, 1, true, 2, 500, 0, 0],
          [0, 'peek', true, 2, 500, 0, 500],
          [0, 1, true, 1, 1000, 0, 500],
          [0, 1, true, 0, 1500, 0, 1000],
          [0, 1, false, 0, 1500, 500, 0],
          [499, 1, false, 0, 1001, 1, 0],
          // Starts at +0, +500, +1000, +1500.
          [500, 1, true, 0, 1500, 0, 1000],
          // Drained: cost 2 takes two slots (+2000, +2500), the next starts at +3000.
          [2000, 2, true, 1, 1000, 0, 0],
          [2000, 1, true, 0, 1500, 0, 1000],
        ]);
      },
    );
  });

  h.api.describe('a caller whose clock is behind the key: waits longer, never gets more', () => {
    // A request at a time before the key's state (skewed hosts, clock: 'client') is evaluated at
    // the key's time; its durations count from the caller's own clock, and the key lives until
    // its state is empty on that clock too. A TTL counted from the key's time instead would
    // expire the key early: at +1950 below, a store would have forgotten and admitted a third.
    h.test('fixedWindow', async (run) => {
      await play(h, run, k, fixedWindow({ limit: 2, window: W }), [
        [1500, 1, true, 1, 500, 0, 0],
        [900, 1, true, 0, 1100, 0, 0],
        [950, 1, false, 0, 1050, 1050, 0],
        [1950, 1, false, 0, 50, 50, 0],
        [2000, 1, true, 1, 1000, 0, 0],
      ]);
    });
    h.test('slidingWindowLog', async (run) => {
      await play(h, run, k, slidingWindowLog({ limit: 2, window: W }), [
        [1500, 1, true, 1, 1000, 0, 0],
        [900, 1, true, 0, 1600, 0, 0],
        [950, 1, false, 0, 1550, 1550, 0],
        [1950, 1, false, 0, 550, 550, 0],
        [2499, 1, false, 0, 1, 1, 0],
        [2500, 1, true, 1, 1000, 0, 0],
      ]);
    });
    h.test('slidingWindow', async (run) => {
      await play(h, run, k, slidingWindow({ limit: 2, window: W }), [
        [1500, 1, true, 1, 1500, 0, 0],
        [900, 1, true, 0, 2100, 0, 0],
        [950, 1, false, 0, 2050, 1550, 0],
        [1950, 1, false, 0, 1050, 550, 0],
        [2499, 1, false, 0, 501, 1, 0],
        [2500, 1, true, 0, 1500, 0, 0],
      ]);
    });
    h.test('tokenBucket', async (run) => {
      await play(h, run, k, tokenBucket({ limit: 2, interval: W }), [
        [1500, 2, true, 0, 1000, 0, 0],
        [900, 1, false, 0, 1600, 1100, 0],
        [1999, 1, false, 0, 501, 1, 0],
        [2000, 1, true, 0, 1000, 0, 0],
      ]);
    });
    h.test('leakyBucket', async (run) => {
      await play(h, run, k, leakyBucket({ limit: 2, interval: W, queue: 1 }), [
        [1500, 1, true, 1, 500, 0, 0],
        [1500, 1, true, 0, 1000, 0, 500],
        [900, 1, false, 0, 1600, 1100, 0],
        [2000, 1, true, 0, 1000, 0, 500],
      ]);
    });
  });
}
