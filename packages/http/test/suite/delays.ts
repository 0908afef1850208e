import { leakyBucket } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send, sendAndHangUp, sleep } from '../support/context.js';

export function delayTests(ctx: SuiteContext): void {
  describe('holding leakyBucket requests is bounded', () => {
    test('a turn beyond maxDelayMs (30 s by default) is a 429 saying when it would come', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(leakyBucket({ name: 'daily', limit: 1, interval: '1d', queue: 30 })),
      });
      expect((await send(app.url)).status).toBe(200);
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(app.handled()).toBe(1);
      // Its turn was a day away: that is when to come back, not sooner.
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(86_390);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(86_400);
      expect(r.json()).toMatchObject({ status: 429, violated: ['daily'] });
    });

    test('maxDelayMs: Infinity holds a turn 30 days away (no timer overflow runs it at once)', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(leakyBucket({ name: 'slow', limit: 1, interval: '30d', queue: 2 })),
        maxDelayMs: Number.POSITIVE_INFINITY,
      });
      expect((await send(app.url)).status).toBe(200);
      await sendAndHangUp(app.url, 1_000);
      expect(app.handled()).toBe(1);
    });

    test('past maxQueued requests held at once, one more is a 429', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(leakyBucket({ name: 'queue', limit: 1, interval: '5s', queue: 10 })),
        maxQueued: 2,
      });
      expect((await send(app.url)).status).toBe(200);
      const held = [sendAndHangUp(app.url, 4_000), sendAndHangUp(app.url, 4_000)];
      // Both are decided and held well before this (generous for a loaded machine).
      await sleep(1_500);
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(10);
      expect(r.json()).toMatchObject({ violated: ['queue'] });
      await Promise.all(held);
      expect(app.handled()).toBe(1);
    });
  });
}
