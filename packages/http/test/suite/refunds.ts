import { fixedWindow, isFloodgateError, type Limiter } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import { type SuiteContext, send, sleep } from '../support/context.js';

/** The refund runs once the response finished, after the client has it: wait for it to land. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting: ${what}`);
}

const remaining = async (limiter: Limiter, key = 'k') => (await limiter.peek(key)).remaining;

export function refundTests(ctx: SuiteContext): void {
  describe('skipFailedRequests / skipSuccessfulRequests (refunds)', () => {
    test('skipFailedRequests: failed responses are given back, successes count', async () => {
      const limiter = ctx.limiter(fixedWindow({ limit: 2, window: '1h' }));
      const app = await ctx.start({ limiter, key: () => 'k', skipFailedRequests: true });
      for (let i = 0; i < 3; i++) {
        expect((await send(`${app.url}/fail`)).status).toBe(500);
        await until('the failure refunded', async () => (await remaining(limiter)) === 2);
      }
      expect((await send(`${app.url}/`)).status).toBe(200);
      expect((await send(`${app.url}/`)).status).toBe(200);
      const denied = await send(`${app.url}/`);
      expect(denied.status).toBe(429);
      // The 429 is a failure too, but a denial charged nothing: nothing to give back.
      await sleep(20);
      expect(await remaining(limiter)).toBe(0);
      expect(app.handled()).toBe(5);
    });

    test('skipSuccessfulRequests: successes are given back, failures count', async () => {
      const limiter = ctx.limiter(fixedWindow({ limit: 2, window: '1h' }));
      const app = await ctx.start({ limiter, key: () => 'k', skipSuccessfulRequests: true });
      for (let i = 0; i < 3; i++) {
        const ok = await send(`${app.url}/`);
        expect(ok.status).toBe(200);
        // The headers were written before the refund: they count the request.
        expect(ok.headers.get('ratelimit')).toContain('r=1');
        await until('the success refunded', async () => (await remaining(limiter)) === 2);
      }
      expect((await send(`${app.url}/fail`)).status).toBe(500);
      expect((await send(`${app.url}/fail`)).status).toBe(500);
      expect((await send(`${app.url}/fail`)).status).toBe(429);
      await sleep(20);
      expect(await remaining(limiter)).toBe(0);
    });

    test('requestWasSuccessful decides what a success is', async () => {
      const limiter = ctx.limiter(fixedWindow({ limit: 1, window: '1h' }));
      const app = await ctx.start({
        limiter,
        key: () => 'k',
        skipSuccessfulRequests: true,
        requestWasSuccessful: (_request, status) => status === 500,
      });
      expect((await send(`${app.url}/fail`)).status).toBe(500);
      await until('the "success" refunded', async () => (await remaining(limiter)) === 1);
      expect((await send(`${app.url}/`)).status).toBe(200);
      await sleep(20);
      expect(await remaining(limiter)).toBe(0);
    });

    test('a 429 of a later rule gives back what the earlier rules charged', async () => {
      const wide = ctx.limiter(fixedWindow({ name: 'wide', limit: 10, window: '1h' }));
      const narrow = ctx.limiter(fixedWindow({ name: 'narrow', limit: 1, window: '1h' }));
      const app = await ctx.start({
        rules: [{ limiter: wide }, { limiter: narrow }],
        key: () => 'k',
        skipFailedRequests: true,
      });
      expect((await send(`${app.url}/`)).status).toBe(200);
      expect(await remaining(wide)).toBe(9);
      expect((await send(`${app.url}/`)).status).toBe(429);
      await until('the wide rule refunded', async () => (await remaining(wide)) === 9);
      expect(await remaining(narrow)).toBe(0);
    });

    test('bad options are refused at construction', async () => {
      const limiter = ctx.limiter(fixedWindow({ limit: 1, window: '1s' }));
      for (const options of [
        { limiter, skipFailedRequests: 'yes' },
        { limiter, skipSuccessfulRequests: 1 },
        { limiter, requestWasSuccessful: true },
      ]) {
        let error: unknown;
        try {
          await ctx.harness.build(options as never);
        } catch (e) {
          error = e;
        }
        expect(isFloodgateError(error) && error.code).toBe('INVALID_OPTION');
      }
    });
  });
}
