import { fixedWindow } from '@floodgate/core';
import { parseList } from 'structured-headers';
import { describe, expect, test } from 'vitest';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

const fixed = (): number => T0;
const members = (value: string | null) =>
  parseList(value ?? '').map(([name, params]) => [name, Object.fromEntries(params)]);
const names = (value: string | null) => members(value).map(([name]) => name);

interface Exposed {
  decision: { allowed: boolean; remaining: number; policies: { name: string }[] } | null;
}

export function stackingTests(ctx: SuiteContext): void {
  describe('stacked limiters (app-wide and on the route)', () => {
    const stacked = () =>
      ctx.harness.startStacked(
        {
          limiter: ctx.limiter(fixedWindow({ name: 'api', limit: 10, window: '1h' }), {
            now: fixed,
          }),
        },
        {
          limiter: ctx.limiter(fixedWindow({ name: 'login', limit: 1, window: '10s' }), {
            now: fixed,
          }),
        },
      );

    test('an admitted response reports every limiter that ran', async () => {
      const app = await stacked();
      try {
        const r = await send(`${app.url}/login`);
        expect(r.status).toBe(200);
        expect(names(r.headers.get('ratelimit'))).toEqual(['api', 'login']);
        expect(members(r.headers.get('ratelimit'))).toContainEqual(['login', { r: 0, t: 10 }]);
        expect(members(r.headers.get('ratelimit'))).toContainEqual([
          'api',
          expect.objectContaining({ r: 9 }),
        ]);
        expect(names(r.headers.get('ratelimit-policy'))).toEqual(['api', 'login']);
        // The handler sees the same: both limiters' policies, the binding remaining.
        const { decision } = r.json() as Exposed;
        expect(decision?.policies.map((p) => p.name)).toEqual(['api', 'login']);
        expect(decision?.remaining).toBe(0);
      } finally {
        await app.close();
      }
    });

    test("the inner limiter's 429 carries both policies and its own, binding Retry-After", async () => {
      const app = await stacked();
      try {
        expect((await send(`${app.url}/login`)).status).toBe(200);
        const r = await send(`${app.url}/login`);
        expect(r.status).toBe(429);
        expect(app.handled()).toBe(1);
        expect(members(r.headers.get('ratelimit'))).toEqual([
          ['api', expect.objectContaining({ r: 8 })],
          ['login', { r: 0, t: 10 }],
        ]);
        expect(names(r.headers.get('ratelimit-policy'))).toEqual(['api', 'login']);
        // The outer window resets in up to an hour; the wait that binds is the login one.
        expect(r.headers.get('retry-after')).toBe('10');
        expect(r.json()).toMatchObject({ violated: ['login'], retryAfter: 10 });
      } finally {
        await app.close();
      }
    });
  });

  describe('the decision is exposed to handlers', () => {
    test('each request sees its own decision', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(fixedWindow({ name: 'api', limit: 5, window: '10s' }), { now: fixed }),
      });
      const first = (await send(`${app.url}/decision`)).json() as Exposed;
      const second = (await send(`${app.url}/decision`)).json() as Exposed;
      expect(first.decision).toMatchObject({ allowed: true, remaining: 4 });
      expect(second.decision).toMatchObject({ allowed: true, remaining: 3 });
      expect(second.decision?.policies.map((p) => p.name)).toEqual(['api']);
    });

    test('a skipped request has none', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(fixedWindow({ name: 'api', limit: 5, window: '10s' })),
        skip: () => true,
      });
      expect(((await send(`${app.url}/decision`)).json() as Exposed).decision).toBeNull();
    });
  });
}
