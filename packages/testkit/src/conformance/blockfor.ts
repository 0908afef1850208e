import { fixedWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import type { Harness } from './harness.js';

const HOUR = 3_600_000;

/** Penalties (`blockFor`): set atomically with the denial, shared, lifted by reset. */
export function registerBlockFor(h: Harness): void {
  h.api.describe('blockFor: a denial blocks the identity for a while', () => {
    // Hours, not ms: on a store that expires keys on real time the block must outlive the test,
    // and on one on the server's clock the numbers are bounds, not exact values.
    h.test(
      'a denial by a blocking policy blocks: denied, retry = the block, nothing charged',
      async (run) => {
        // A window shorter than the block: the block, not the window, sets the wait.
        const blocking = fixedWindow({ limit: 2, window: '1m', blockFor: '1h' });
        const other = tokenBucket({ limit: 100, interval: '1d' });
        const l = run.limiter([blocking, other]);
        h.expect((await l.limit('b')).allowed, 'first').toBe(true);
        h.expect((await l.limit('b')).allowed, 'second').toBe(true);
        const denied = await l.limit('b');
        h.expect(denied.allowed, 'third: over the limit').toBe(false);
        h.expect(
          denied.retryAfterMs,
          'the denial that blocks waits out the block',
        ).toBeGreaterThanOrEqual(HOUR - 60_000);
        h.expect(denied.retryAfterMs, 'and no more').toBeLessThanOrEqual(HOUR);
        h.expect(denied.policies[0]!.remaining, 'a blocked policy has nothing left').toBe(0);
        const otherBefore = denied.policies[1]!.remaining;
        for (let i = 0; i < 3; i++) {
          const d = await l.limit('b', { cost: 1 });
          h.expect(d.allowed, `blocked call ${i}`).toBe(false);
          h.expect(d.retryAfterMs, `blocked call ${i}: the time left`).toBeLessThanOrEqual(
            denied.retryAfterMs,
          );
          h.expect(d.policies[1]!.remaining, `blocked call ${i} charged no policy`).toBe(
            otherBefore,
          );
        }
        const peek = await l.peek('b');
        h.expect(peek.allowed, 'peek reports the block').toBe(false);
        h.expect(peek.retryAfterMs, 'peek: the time left').toBeGreaterThanOrEqual(HOUR - 60_000);
        h.expect((await l.limit('other')).allowed, 'another identity is not blocked').toBe(true);
      },
    );

    h.test(
      'the block lives in the store: another limiter (process) with the policy sees it',
      async (run) => {
        const policy = slidingWindowLog({ limit: 1, window: '1m', blockFor: '1h' });
        const a = run.limiter(policy);
        const b = run.limiter(policy);
        await a.limit('s');
        h.expect((await a.limit('s')).allowed, 'denied, blocked').toBe(false);
        const seen = await b.limit('s');
        h.expect(seen.allowed, 'the other limiter is denied too').toBe(false);
        h.expect(seen.retryAfterMs, 'with the block, not the window').toBeLessThanOrEqual(HOUR);
        h.expect(seen.retryAfterMs, 'with the block').toBeGreaterThanOrEqual(HOUR - 60_000);
      },
    );

    h.test('reset lifts the block and forgets the counts', async (run) => {
      const l = run.limiter(tokenBucket({ limit: 1, interval: '1d', blockFor: '1h' }));
      await l.limit('r');
      h.expect((await l.limit('r')).allowed, 'denied, blocked').toBe(false);
      await l.reset('r');
      const d = await l.limit('r');
      h.expect(d.allowed, 'admitted after reset').toBe(true);
      h.expect(d.remaining, 'from an empty state').toBe(0);
      const keys = await run.liveKeys();
      if (keys !== undefined) {
        h.expect(
          keys.filter((k) => k.endsWith(':blk')),
          'no block key left',
        ).toEqual([]);
      }
    });

    h.test(
      'a denial by a policy without blockFor blocks nothing; no block key is written',
      async (run) => {
        // Two counts of one window: each its own name.
        const l = run.limiter([
          fixedWindow({ limit: 100, window: '1d', blockFor: '1h', name: 'daily' }),
          fixedWindow({ limit: 1, window: '1d', name: 'first' }),
        ]);
        await l.limit('n');
        const d = await l.limit('n');
        h.expect(d.allowed, 'denied by the second policy').toBe(false);
        h.expect(d.policies[0]!.allowed, 'the blocking policy admitted: no block').toBe(true);
        h.expect(d.policies[0]!.remaining, 'and kept its units').toBe(99);
        const keys = await run.liveKeys();
        if (keys !== undefined) {
          h.expect(
            keys.filter((k) => k.endsWith(':blk')),
            'no block key',
          ).toEqual([]);
          h.expect(keys.length, 'the two policy keys').toBe(2);
        }
      },
    );
  });

  if (!h.controlsTime) return;
  h.api.describe('blockFor on the suite clock', () => {
    h.test(
      'the block runs blockFor from the denial, then the policy decides again',
      async (run) => {
        const policy = fixedWindow({ limit: 2, window: 1000, blockFor: 10_000 });
        const l = run.limiter(policy);
        run.at(0);
        await l.limit('k', { cost: 2 });
        const denied = await l.limit('k');
        h.expect([denied.allowed, denied.retryAfterMs, denied.remaining], 'blocked').toEqual([
          false,
          10_000,
          0,
        ]);
        run.at(2500);
        // The window has turned (the policy alone would admit), but the block holds.
        const blocked = await l.limit('k');
        h.expect([blocked.allowed, blocked.retryAfterMs], 'still blocked').toEqual([false, 7500]);
        h.expect((await l.peek('k')).retryAfterMs, 'peek').toBe(7500);
        run.at(9999);
        h.expect((await l.limit('k')).retryAfterMs, 'a ms before the end').toBe(1);
        run.at(10_000);
        const after = await l.limit('k', { cost: 2 });
        h.expect(
          [after.allowed, after.remaining],
          'over, and the blocked calls charged nothing',
        ).toEqual([true, 0]);
        // A new denial blocks again, from its own time.
        run.at(10_500);
        h.expect((await l.limit('k')).retryAfterMs, 'blocked again').toBe(10_000);
      },
    );
  });
}
