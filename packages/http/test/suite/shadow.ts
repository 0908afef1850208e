import {
  createLimiter,
  type Decision,
  fixedWindow,
  leakyBucket,
  type Policy,
  tokenBucket,
} from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send, sleep } from '../support/context.js';

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
      // A shadow limiter's figures are no part of what the client is shown.
      expect((await send(app.url)).headers.get('ratelimit')).not.toContain('watch');
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(r.json()).toMatchObject({ violated: ['hard'] });
      expect(r.headers.get('ratelimit-policy')).not.toContain('watch');
    });

    test('a shadowed policy beside an enforced one is in no header, req.rateLimit or body', async () => {
      const limiter = ctx.limiter([
        fixedWindow({ name: 'hard', limit: 100, window: '1m' }),
        tokenBucket({ name: 'trial', limit: 1, interval: '1m', shadow: true }),
      ]);
      const app = await ctx.start({ limiter, key: () => 'k' });
      for (let i = 1; i <= 3; i++) {
        const r = await send(`${app.url}/decision`);
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toMatch(new RegExp(`^"hard";r=${100 - i};t=\\d+$`));
        expect(r.headers.get('ratelimit')).not.toContain('trial');
        expect(r.headers.get('ratelimit-policy')).not.toContain('trial');
        const { decision } = r.json() as { decision: Decision };
        // The enforced count, charged as if the shadowed bucket were not there.
        expect(decision.remaining).toBe(100 - i);
        expect(decision.policies.map((p) => p.name)).toEqual(['hard']);
      }
    });

    test('a shadowed leaky bucket holds nothing back', async () => {
      // Held for its turn, the second request would wait an hour (or be refused for it).
      const limiter = ctx.limiter([
        fixedWindow({ name: 'hard', limit: 100, window: '1m' }),
        leakyBucket({ name: 'shape', limit: 1, interval: '1h', queue: 5, shadow: true }),
      ]);
      const app = await ctx.start({ limiter, key: () => 'k' });
      for (let i = 0; i < 3; i++) {
        const r = await send(`${app.url}/decision`);
        expect(r.status).toBe(200);
        expect((r.json() as { decision: Decision }).decision.delayMs).toBe(0);
      }
      expect(app.handled()).toBe(3);
    });

    test('skipFailedRequests gives back nothing a shadow denial did not charge', async () => {
      // A shadow limiter and an enforcing one on the same state (same prefix and policy).
      const store = ctx.stores.make();
      const prefix = `http-shadow-refund-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const policy: Policy = fixedWindow({ name: 'p', limit: 2, window: '1h' });
      const timeoutMs = store.remote === true ? 10_000 : undefined;
      const enforce = createLimiter({ store, policy, prefix, timeoutMs });
      const shadow = createLimiter({ store, policy, prefix, timeoutMs, shadow: true });
      const app = await ctx.start({ limiter: shadow, key: () => 'k', skipFailedRequests: true });
      expect((await enforce.limit('k', { cost: 2 })).allowed).toBe(true);
      for (let i = 0; i < 3; i++) expect((await send(`${app.url}/fail`)).status).toBe(500);
      await sleep(100); // a refund runs after the response: give a wrong one time to land
      expect((await enforce.limit('k')).allowed).toBe(false);
      expect((await enforce.peek('k')).remaining).toBe(0);
    });
  });
}
