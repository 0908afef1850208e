import { fixedWindow, isFloodgateError } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, test, vi } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

/** A store whose every call fails, as a dead backend would. */
export const brokenStore: Store = {
  evaluate: async () => {
    throw new Error('connection refused');
  },
  reset: async () => {},
};

const one = () => fixedWindow({ name: 'one', limit: 1, window: '10s' });

export function failureTests(ctx: SuiteContext): void {
  describe('store failures, under each choice', () => {
    test("onStoreError 'throw' + fail-closed (the default): 503 problem+json, reported", async () => {
      const errors: unknown[] = [];
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { store: brokenStore, onStoreError: 'throw' }),
        onError: (error) => errors.push(error),
      });
      const r = await send(app.url);
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
      expect(app.handled()).toBe(0);
      expect(errors).toHaveLength(1);
      expect(isFloodgateError(errors[0]) && errors[0].code).toBe('STORE_UNAVAILABLE');
    });

    test("onStoreError 'throw' + fail-open: the request goes through without headers", async () => {
      const app = await ctx.start({
        policy: one(),
        store: brokenStore,
        onStoreError: 'throw',
        onLimiterError: 'fail-open',
      });
      const r = await send(app.url);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit')).toBeNull();
      expect(app.handled()).toBe(1);
    });

    test("onStoreError 'allow': admitted", async () => {
      const app = await ctx.start({ policy: one(), store: brokenStore, onStoreError: 'allow' });
      expect((await send(app.url)).status).toBe(200);
      expect((await send(app.url)).status).toBe(200);
    });

    test("onStoreError 'deny': 429 with a one-second Retry-After", async () => {
      const app = await ctx.start({ policy: one(), store: brokenStore, onStoreError: 'deny' });
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(app.handled()).toBe(0);
    });

    test('onStoreError with a fallback store: limits keep holding', async () => {
      const app = await ctx.start({
        policy: one(),
        store: brokenStore,
        onStoreError: new MemoryStore({ now: () => T0 }),
      });
      expect((await send(app.url)).status).toBe(200);
      expect((await send(app.url)).status).toBe(429);
    });

    test('an onError that throws does not stop fail-open letting the request through', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { store: brokenStore, onStoreError: 'throw' }),
        onLimiterError: 'fail-open',
        onError: () => {
          throw new Error('the alerting hook is broken');
        },
      });
      const r = await send(app.url);
      expect(r.status).toBe(200);
      expect(app.handled()).toBe(1);
      // Not swallowed silently: the broken hook is logged.
      expect(logged).toHaveBeenCalledWith(
        expect.stringMatching(/onError threw/),
        expect.any(Error),
      );
      logged.mockRestore();
    });

    test('an onError that throws does not stop fail-closed answering 503', async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { store: brokenStore, onStoreError: 'throw' }),
        onError: () => {
          throw new Error('the alerting hook is broken');
        },
      });
      const r = await send(app.url);
      expect(r.status).toBe(503);
      expect(r.json()).toMatchObject({ status: 503 });
      expect(app.handled()).toBe(0);
      expect(logged).toHaveBeenCalledOnce();
      logged.mockRestore();
    });

    test('onError hears store failures the fallback absorbed, with { policy, store }', async () => {
      const errors: [unknown, unknown][] = [];
      const app = await ctx.start({
        policy: one(),
        store: brokenStore,
        onStoreError: new MemoryStore({ now: () => T0 }),
        onError: (error, request) => errors.push([error, request]),
      });
      expect((await send(app.url)).status).toBe(200);
      expect(errors).toHaveLength(1);
      const [error, request] = errors[0]!;
      expect(isFloodgateError(error) && error.code).toBe('STORE_UNAVAILABLE');
      expect(request).toBeUndefined();
    });

    test('breaker passes through to the limiter built from { policy, store }', async () => {
      let calls = 0;
      const counted: Store = {
        evaluate: async () => {
          calls++;
          throw new Error('connection refused');
        },
        reset: async () => {},
      };
      const app = await ctx.start({
        policy: one(),
        store: counted,
        onStoreError: 'allow',
        breaker: { failures: 2, windowMs: 60_000, cooldownMs: 60_000 },
      });
      for (let i = 0; i < 5; i++) expect((await send(app.url)).status).toBe(200);
      // Open after two failures: the dead store is not called again for a minute.
      expect(calls).toBe(2);
    });

    test('timeoutMs: false passes through: a slow remote store is waited for', async () => {
      const memory = new MemoryStore({ now: () => T0 });
      // Remote, so the limiter would give it the 250 ms default deadline; it answers in 400 ms.
      const slow: Store = {
        remote: true,
        evaluate: async (call) => {
          await new Promise((r) => setTimeout(r, 400));
          return memory.evaluate(call);
        },
        reset: (keys) => memory.reset(keys),
      };
      const waited = await ctx.start({
        policy: one(),
        store: slow,
        onStoreError: 'deny',
        timeoutMs: false,
      });
      expect((await send(waited.url)).status).toBe(200);
      const cut = await ctx.start({ policy: one(), store: slow, onStoreError: 'deny' });
      expect((await send(cut.url)).status).toBe(429);
    });

    test('a key function that throws is a limiter error too', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one()),
        key: () => {
          throw new Error('no session');
        },
      });
      expect((await send(app.url)).status).toBe(503);
    });
  });
}
