import { fixedWindow } from '@floodgate/core';
import { parseRateLimitHeaders } from '@floodgate/core/headers';
import { parseRateLimit } from 'ratelimit-header-parser';
import { parseList } from 'structured-headers';
import { describe, expect, test } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

const policy = (limit: number) => fixedWindow({ name: 'per-ip', limit, window: '10s' });
const fixed = (): number => T0;

/** What ratelimit-header-parser reads from a fetch `Headers` (it takes a plain record too). */
const parsedByPeer = (headers: Headers) => parseRateLimit(Object.fromEntries(headers));

export function headerTests(ctx: SuiteContext): void {
  describe('headers and the 429 contract', () => {
    test('an admitted request gets draft-8 RateLimit and RateLimit-Policy', async () => {
      const app = await ctx.start({ limiter: ctx.limiter(policy(3), { now: fixed }) });
      const r = await send(app.url);
      expect(r.status).toBe(200);
      expect(r.json()).toEqual({ ok: true });
      expect(parseList(r.headers.get('ratelimit')!)).toEqual([
        [
          'per-ip',
          new Map([
            ['r', 2],
            ['t', 10],
          ]),
        ],
      ]);
      expect(parseList(r.headers.get('ratelimit-policy')!)).toEqual([
        [
          'per-ip',
          new Map([
            ['q', 3],
            ['w', 10],
          ]),
        ],
      ]);
      expect(parseRateLimitHeaders(r.headers)).toEqual({
        source: 'draft-8',
        policy: 'per-ip',
        limit: 3,
        remaining: 2,
        resetSeconds: 10,
        windowSeconds: 10,
      });
      expect(r.headers.get('retry-after')).toBeNull();
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    });

    test('a denial is 429 with Retry-After rounded up and an RFC 9457 body', async () => {
      const app = await ctx.start({ limiter: ctx.limiter(policy(1), { now: fixed }) });
      expect((await send(app.url)).status).toBe(200);
      const r = await send(app.url);
      expect(r.status).toBe(429);
      // 9 750 ms to the next window: 10 s, never 9.
      expect(r.headers.get('retry-after')).toBe('10');
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(parseList(r.headers.get('ratelimit')!)).toEqual([
        [
          'per-ip',
          new Map([
            ['r', 0],
            ['t', 10],
          ]),
        ],
      ]);
      expect(r.json()).toEqual({
        type: 'about:blank',
        title: 'Too Many Requests',
        status: 429,
        detail: 'Rate limit exceeded for "per-ip"; retry in 10 s.',
        retryAfter: 10,
        violated: ['per-ip'],
        policies: [{ name: 'per-ip', limit: 1, remaining: 0, windowSeconds: 10, resetSeconds: 10 }],
      });
      expect(app.handled()).toBe(1);
    });

    test('Retry-After is the first whole second at which the request passes', async () => {
      let now = T0;
      const app = await ctx.start({ limiter: ctx.limiter(policy(1), { now: () => now }) });
      await send(app.url);
      const denied = await send(app.url);
      const seconds = Number(denied.headers.get('retry-after'));
      now = T0 + (seconds - 1) * 1000;
      expect((await send(app.url)).status).toBe(429);
      now = T0 + seconds * 1000;
      expect((await send(app.url)).status).toBe(200);
    });

    test('draft-7 headers, read by core and by ratelimit-header-parser', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(policy(3), { now: fixed }),
        headers: 'draft-7',
      });
      const r = await send(app.url);
      expect(r.headers.get('ratelimit')).toBe('limit=3, remaining=2, reset=10');
      expect(r.headers.get('ratelimit-policy')).toBe('3;w=10');
      expect(parseRateLimitHeaders(r.headers)).toMatchObject({
        source: 'draft-7',
        limit: 3,
        remaining: 2,
        resetSeconds: 10,
      });
      const peer = parsedByPeer(r.headers);
      expect(peer).toMatchObject({ limit: 3, remaining: 2, used: 1 });
      expect(peer?.reset?.getTime()).toBeGreaterThan(Date.now() + 8_000);
    });

    test('draft-6 headers, read by core and by ratelimit-header-parser', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(policy(3), { now: fixed }),
        headers: 'draft-6',
      });
      const r = await send(app.url);
      expect(r.headers.get('ratelimit-limit')).toBe('3');
      expect(r.headers.get('ratelimit-remaining')).toBe('2');
      expect(r.headers.get('ratelimit-reset')).toBe('10');
      expect(r.headers.get('ratelimit')).toBeNull();
      expect(parseRateLimitHeaders(r.headers)).toMatchObject({
        source: 'draft-6',
        limit: 3,
        remaining: 2,
        resetSeconds: 10,
      });
      expect(parsedByPeer(r.headers)).toMatchObject({ limit: 3, remaining: 2, used: 1 });
    });

    test('legacy headers alone, and Retry-After even with headers: false', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(policy(1), { now: fixed }),
        headers: false,
        legacyHeaders: true,
      });
      const ok = await send(app.url);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('1');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(ok.headers.get('x-ratelimit-reset')).toBe('10');
      expect(ok.headers.get('ratelimit')).toBeNull();
      expect(ok.headers.get('ratelimit-policy')).toBeNull();
      expect(parseRateLimitHeaders(ok.headers)).toMatchObject({
        source: 'legacy',
        limit: 1,
        remaining: 0,
        resetSeconds: 10,
      });
      expect(parseRateLimit(Object.fromEntries(ok.headers), { reset: 'seconds' })).toMatchObject({
        limit: 1,
        remaining: 0,
      });
      const denied = await send(app.url);
      expect(denied.status).toBe(429);
      expect(denied.headers.get('retry-after')).toBe('10');
    });

    test('no rate-limit headers at all with headers: false', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(policy(1), { now: fixed }),
        headers: false,
      });
      const ok = await send(app.url);
      expect([...ok.headers.keys()].filter((h) => /ratelimit/i.test(h))).toEqual([]);
      expect((await send(app.url)).headers.get('retry-after')).toBe('10');
    });

    test('jitter only adds, within its range, and spreads denials', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(policy(1), { now: fixed }),
        retryAfterJitter: [0, '5s'],
      });
      await send(app.url);
      const seen = new Set<number>();
      for (let i = 0; i < 25; i++) {
        const r = await send(app.url);
        const seconds = Number(r.headers.get('retry-after'));
        // The true wait is 9 750 ms; jitter up to 5 000 ms more.
        expect(seconds).toBeGreaterThanOrEqual(10);
        expect(seconds).toBeLessThanOrEqual(15);
        expect((r.json() as { retryAfter: number }).retryAfter).toBe(seconds);
        seen.add(seconds);
      }
      expect(seen.size).toBeGreaterThanOrEqual(2);
    });

    test('the jitter range bounds are reached exactly, never exceeded', async () => {
      for (const [u, expected] of [
        [0, 11],
        [0.999_999, 15],
      ] as const) {
        const app = await ctx.start({
          limiter: ctx.limiter(policy(1), { now: fixed }),
          retryAfterJitter: ['1s', '5s'],
          random: () => u,
        });
        await send(app.url);
        expect((await send(app.url)).headers.get('retry-after')).toBe(String(expected));
      }
    });
  });
}
