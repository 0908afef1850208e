import { fixedWindow, leakyBucket } from '@floodgate/core';
import { parseList } from 'structured-headers';
import { describe, expect, test } from 'vitest';
import { headerKey, ipKey } from '../../src/index.js';
import type { SuiteContext } from '../support/context.js';
import { send, sendAndHangUp, sleep, T0 } from '../support/context.js';

const fixed = (): number => T0;
const windowOf = (name: string, limit: number) => fixedWindow({ name, limit, window: '10s' });
const members = (value: string | null) =>
  parseList(value ?? '').map(([name, params]) => [name, Object.fromEntries(params)]);
const exposed = (value: string | null) =>
  (value ?? '').split(',').map((s) => s.trim().toLowerCase());

export function policyTests(ctx: SuiteContext): void {
  describe('policies', () => {
    test('several rules are reported together; after a denial the rest are not charged', async () => {
      const app = await ctx.start({
        rules: [
          {
            limiter: ctx.limiter(windowOf('per-key', 1), { now: fixed }),
            key: headerKey('x-api-key'),
          },
          { limiter: ctx.limiter(windowOf('per-ip', 5), { now: fixed }), key: ipKey() },
        ],
      });
      const first = await send(app.url, { 'x-api-key': 'k1' });
      expect(first.status).toBe(200);
      expect(members(first.headers.get('ratelimit'))).toEqual([
        ['per-key', { r: 0, t: 10 }],
        ['per-ip', { r: 4, t: 10 }],
      ]);
      expect(members(first.headers.get('ratelimit-policy'))).toEqual([
        ['per-key', { q: 1, w: 10 }],
        ['per-ip', { q: 5, w: 10 }],
      ]);
      const denied = await send(app.url, { 'x-api-key': 'k1' });
      expect(denied.status).toBe(429);
      expect(members(denied.headers.get('ratelimit'))).toEqual([
        ['per-key', { r: 0, t: 10 }],
        ['per-ip', { r: 4, t: 10 }],
      ]);
      expect(denied.json()).toMatchObject({ violated: ['per-key'] });
      // Anonymous: only the per-IP rule applies.
      const anonymous = await send(app.url);
      expect(members(anonymous.headers.get('ratelimit'))).toEqual([['per-ip', { r: 3, t: 10 }]]);
    });

    test('one limiter with two policies reports both', async () => {
      const limiter = ctx.limiter(
        [
          fixedWindow({ name: 'burst', limit: 2, window: '1s' }),
          fixedWindow({ name: 'hourly', limit: 100, window: '1h' }),
        ],
        { now: fixed },
      );
      const app = await ctx.start({ limiter });
      const r = await send(app.url);
      expect(members(r.headers.get('ratelimit-policy'))).toEqual([
        ['burst', { q: 2, w: 1 }],
        ['hourly', { q: 100, w: 3600 }],
      ]);
      expect(
        members(r.headers.get('ratelimit')).map(([n, p]) => [n, (p as { r: number }).r]),
      ).toEqual([
        ['burst', 1],
        ['hourly', 99],
      ]);
    });

    test('per-request tiers: the limiter is chosen per request', async () => {
      const free = ctx.limiter(windowOf('free', 1), { now: fixed });
      const pro = ctx.limiter(windowOf('pro', 3), { now: fixed });
      const app = await ctx.start({
        limiter: (request) => (request.header('x-plan') === 'pro' ? pro : free),
        key: headerKey('x-user'),
      });
      const as = (user: string, plan?: string) => ({
        'x-user': user,
        ...(plan ? { 'x-plan': plan } : {}),
      });
      const proReplies = [await send(app.url, as('p', 'pro')), await send(app.url, as('p', 'pro'))];
      expect(proReplies.map((r) => r.status)).toEqual([200, 200]);
      expect(members(proReplies[1]!.headers.get('ratelimit-policy'))).toEqual([
        ['pro', { q: 3, w: 10 }],
      ]);
      expect([
        (await send(app.url, as('f'))).status,
        (await send(app.url, as('f'))).status,
      ]).toEqual([200, 429]);
    });

    test('cost, fixed or per request', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(windowOf('units', 10), { now: fixed }),
        cost: (request) => Number(request.header('x-cost') ?? 2),
      });
      expect(members((await send(app.url)).headers.get('ratelimit'))).toEqual([
        ['units', { r: 8, t: 10 }],
      ]);
      expect(members((await send(app.url, { 'x-cost': '5' })).headers.get('ratelimit'))).toEqual([
        ['units', { r: 3, t: 10 }],
      ]);
      expect((await send(app.url, { 'x-cost': '4' })).status).toBe(429);
    });

    test('skip: skipped requests are neither counted nor given headers', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        skip: (request) => request.path === '/health',
      });
      for (let i = 0; i < 3; i++) {
        const r = await send(`${app.url}/health`);
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toBeNull();
      }
      expect((await send(app.url)).status).toBe(200);
      expect((await send(app.url)).status).toBe(429);
    });

    test('onLimited answers instead of the default body; headers stay', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        onLimited: ({ retryAfterSeconds, decision }) => ({
          body: { error: 'slow down', wait: retryAfterSeconds, policies: decision.policies.length },
          headers: { 'X-Reason': 'quota' },
        }),
      });
      await send(app.url);
      const r = await send(app.url);
      expect(r.status).toBe(429);
      expect(r.json()).toEqual({ error: 'slow down', wait: 10, policies: 1 });
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.headers.get('x-reason')).toBe('quota');
      expect(r.headers.get('retry-after')).toBe('10');
      expect(r.headers.get('ratelimit')).not.toBeNull();
    });

    test('CORS: the headers are exposed, merged with what the app exposes', async () => {
      const app = await ctx.start({ limiter: ctx.limiter(windowOf('one', 1), { now: fixed }) });
      const ok = await send(app.url, { origin: 'https://example.test' });
      expect(exposed(ok.headers.get('access-control-expose-headers')).sort()).toEqual(
        ['ratelimit', 'ratelimit-policy', 'x-request-id'].sort(),
      );
      const denied = await send(app.url, { origin: 'https://example.test' });
      expect(exposed(denied.headers.get('access-control-expose-headers')).sort()).toEqual(
        ['ratelimit', 'ratelimit-policy', 'retry-after'].sort(),
      );
    });

    test('CORS exposure can be turned off', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        exposeHeaders: false,
      });
      expect((await send(app.url)).headers.get('access-control-expose-headers')).toBe(
        'X-Request-Id',
      );
      expect((await send(app.url)).headers.get('access-control-expose-headers')).toBeNull();
    });

    test('leakyBucket: admitted requests wait their turn, past the queue they are refused', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(leakyBucket({ name: 'queue', limit: 1, interval: '800ms', queue: 2 })),
      });
      const replies = await Promise.all([0, 1, 2, 3].map(() => send(app.url)));
      expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
      // Admitted requests are scheduled one interval apart from the first, whenever they arrived.
      // Timers never fire early; the slack covers the first handler starting late on a busy machine.
      const starts = app.handledAt();
      expect(starts).toHaveLength(3);
      expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(650);
      expect(starts[2]! - starts[0]!).toBeGreaterThanOrEqual(1_450);
    });

    test('leakyBucket: a client that hangs up while queued never reaches the handler', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(
          leakyBucket({ name: 'queue', limit: 1, interval: '1500ms', queue: 2 }),
        ),
      });
      expect((await send(app.url)).status).toBe(200);
      await sendAndHangUp(app.url, 200);
      await sleep(2_000);
      expect(app.handled()).toBe(1);
    });
  });
}
