import { fixedWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { DAY, type Harness } from './harness.js';

/** Slack for a store host whose clock differs a little from this one's. */
const SKEW_MS = 5000;

/** For stores on their own clock (Redis `clock: 'server'`): they must agree with real time. */
export function registerServerClock(h: Harness): void {
  h.api.describe('server clock: decisions follow real time', () => {
    h.test(
      'window ends and reset times agree with the real clock, not the caller-supplied one',
      async (run) => {
        // The suite's clock sits years in the past, on a day boundary: a store reading it would
        // say a full day.
        const before = Date.now();
        const d = await run.limiter(fixedWindow({ limit: 5, window: '1d' })).limit('t');
        const after = Date.now();
        h.expect(d.allowed, 'first call').toBe(true);
        h.expect(d.resetAfterMs, 'end of the real UTC day').toBeLessThanOrEqual(
          DAY - (before % DAY) + SKEW_MS,
        );
        h.expect(d.resetAfterMs, 'end of the real UTC day').toBeGreaterThanOrEqual(
          DAY - (after % DAY) - SKEW_MS,
        );
        const sec = await run.limiter(fixedWindow({ limit: 5, window: 1000 })).limit('t');
        h.expect(sec.resetAfterMs, 'a 1 s window ends within 1 s').toBeLessThanOrEqual(1000);
        h.expect(sec.resetAfterMs, 'and not before it started').toBeGreaterThanOrEqual(1);
        const tb = run.limiter(tokenBucket({ limit: 10, interval: '1s' }));
        const spent = await tb.limit('t', { cost: 10 });
        h.expect(
          spent.resetAfterMs,
          'a drained bucket refills within its interval',
        ).toBeLessThanOrEqual(1000);
        const log = run.limiter(slidingWindowLog({ limit: 3, window: 1000 }));
        await log.limit('t');
        h.expect((await log.limit('t')).resetAfterMs, 'log: newest entry + window').toBe(1000);
      },
    );

    h.test('waiting retryAfterMs of real time is enough', async (run) => {
      const l = run.limiter([
        fixedWindow({ limit: 1, window: '40ms' }),
        tokenBucket({ limit: 1, interval: '30ms' }),
      ]);
      for (let attempt = 0; attempt < 5; attempt++) {
        let d = await l.limit('w');
        for (let i = 0; d.allowed && i < 10; i++) d = await l.limit('w');
        h.expect(d.allowed, 'a 1-per-40 ms limit denies a quick second call').toBe(false);
        h.expect(d.retryAfterMs, 'retry within the window').toBeLessThanOrEqual(40);
        // The server decided at time T; this wait ends after T + retryAfterMs on any sane clock.
        await new Promise((resolve) => setTimeout(resolve, d.retryAfterMs + 1));
        h.expect((await l.limit('w')).allowed, `admitted after waiting ${d.retryAfterMs} ms`).toBe(
          true,
        );
      }
    });
  });
}
