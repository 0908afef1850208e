import { fixedWindow, tokenBucket } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send } from '../support/context.js';

export function shadowTests(ctx: SuiteContext): void {
  describe('shadow mode', () => {
    test('a shadow limiter never answers 429 nor sends Retry-After or RateLimit headers', async () => {
      const limiter = ctx.limiter(
        fixedWindow({ name: 'new-limit', limit: 1, window: '1m', shadow: true }),
      );
      expect(limiter.shadow).toBe(true);
      const app = await ctx.start({ limiter, key: () => 'k' });
      for (let i = 0; i < 3; i++) {
        const r = await send(app.url);
        expect(r.status).toBe(200);
        expect(r.headers.get('retry-after')).toBeNull();
        expect(r.headers.get('ratelimit')).toBeNull();
        expect(r.headers.get('ratelimit-policy')).toBeNull();
      }
      expect(app.handled()).toBe(3);
      // The would-be denials were reported and charged nothing: one unit used.
      expect((await limiter.peek('k')).remaining).toBe(0);
    });

    test('shadowHeaders: true sends the RateLimit headers, still no 429 and no Retry-After', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(
          tokenBucket({ name: 'trial', limit: 1, interval: '1m', shadow: true }),
        ),
        shadowHeaders: true,
      });
      expect((await send(app.url)).headers.get('ratelimit')).toContain('"trial"');
      const r = await send(app.url);
      expect(r.status).toBe(200);
      expect(r.headers.get('retry-after')).toBeNull();
      expect(r.headers.get('ratelimit')).toMatch(/"trial";r=0/);
      expect(app.handled()).toBe(2);
    });

    test('beside an enforced rule, the enforced denial is a 429 as ever', async () => {
      const app = await ctx.start({
        rules: [
          {
            limiter: ctx.limiter(
              fixedWindow({ name: 'watch', limit: 1, window: '1m', shadow: true }),
            ),
          },
          { limiter: ctx.limiter(fixedWindow({ name: 'hard', limit: 2, window: '1m' })) },
        ],
      });
      expect((await send(app.url)).status).toBe(200);
      expect((await send(app.url)).status).toBe(200); // 'watch' would have denied: reported only
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(r.json()).toMatchObject({ violated: ['hard'] });
    });
  });
}
