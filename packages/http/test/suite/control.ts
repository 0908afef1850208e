import { type Decision, fixedWindow, isFloodgateError, type Policy } from '@floodgate/core';
import { parseList } from 'structured-headers';
import { describe, expect, test } from 'vitest';
import { ipKey, type KeyFunction, type RateLimitOptions } from '../../src/index.js';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

const fixed = (): number => T0;
const windowOf = (name: string, limit: number) => fixedWindow({ name, limit, window: '10s' });
const members = (value: string | null) =>
  parseList(value ?? '').map(([name, params]) => [name, Object.fromEntries(params)]);
const userKey: KeyFunction = (request) => request.header('x-user');
const statuses = async (url: string, list: Record<string, string>[]): Promise<number[]> => {
  const out: number[] = [];
  for (const headers of list) out.push((await send(url, headers)).status);
  return out;
};
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

let sequence = 0;

/** `store` + a fresh prefix, for limiters the middleware builds from `policy`. */
function built(ctx: SuiteContext): Pick<RateLimitOptions, 'store' | 'prefix' | 'timeoutMs'> {
  const store = ctx.stores.make(fixed);
  const options: Pick<RateLimitOptions, 'store' | 'prefix' | 'timeoutMs'> = {
    store,
    prefix: `http-ctl-${process.pid}-${++sequence}`,
  };
  if (store.remote === true) options.timeoutMs = 10_000;
  return options;
}

async function refusal(build: () => Promise<unknown>): Promise<string> {
  try {
    await build();
  } catch (error) {
    if (isFloodgateError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected the options to be refused');
}

export function controlTests(ctx: SuiteContext): void {
  describe('policy as a function of the request', () => {
    test('tiers: each request is counted under its tier, and the headers report that tier', async () => {
      const basic = windowOf('api', 1);
      const premium = windowOf('api', 3);
      const app = await ctx.start({
        ...built(ctx),
        key: userKey,
        policy: (request) => (request.header('x-plan') === 'premium' ? premium : basic),
      });
      const pro = { 'x-user': 'p', 'x-plan': 'premium' };
      const first = await send(app.url, pro);
      expect(members(first.headers.get('ratelimit-policy'))).toEqual([['api', { q: 3, w: 10 }]]);
      expect(members(first.headers.get('ratelimit'))).toEqual([['api', { r: 2, t: 10 }]]);
      expect(await statuses(app.url, times(3, pro))).toEqual([200, 200, 429]);
      expect(await statuses(app.url, times(2, { 'x-user': 'b' }))).toEqual([200, 429]);
    });

    test('a limit computed per request: a fresh policy each call counts exactly, and a tier switch keeps the count', async () => {
      const app = await ctx.start({
        ...built(ctx),
        key: userKey,
        // Async, and a new policy object on every call: limiters are kept per distinct policy.
        policy: async (request) => windowOf('api', Number(request.header('x-limit'))),
      });
      const at = (limit: number) => ({ 'x-user': 'u', 'x-limit': String(limit) });
      expect(await statuses(app.url, times(3, at(2)))).toEqual([200, 200, 429]);
      // Another limit, the same kind, name and window: the same store key. The 2 already counted
      // stay counted, so the higher limit leaves 1 in this window, not a whole new quota.
      expect(await statuses(app.url, times(3, at(3)))).toEqual([200, 429, 429]);
      // Back on the lower limit: 3 counted, above it, denied at once.
      expect(await statuses(app.url, [at(2)])).toEqual([429]);
    });

    test('a rule takes a policy function too, reported beside the other rules', async () => {
      const app = await ctx.start({
        ...built(ctx),
        rules: [
          {
            policy: (request) => windowOf('per-user', request.header('x-plan') === 'pro' ? 2 : 1),
            key: userKey,
          },
          { policy: windowOf('per-ip', 10), key: ipKey() },
        ],
      });
      const pro = await send(app.url, { 'x-user': 'p', 'x-plan': 'pro' });
      expect(members(pro.headers.get('ratelimit-policy'))).toEqual([
        ['per-user', { q: 2, w: 10 }],
        ['per-ip', { q: 10, w: 10 }],
      ]);
      expect(await statuses(app.url, times(2, { 'x-user': 'p', 'x-plan': 'pro' }))).toEqual([
        200, 429,
      ]);
      expect(await statuses(app.url, times(2, { 'x-user': 'f' }))).toEqual([200, 429]);
    });

    test('undefined skips the rule: no count, no headers', async () => {
      const app = await ctx.start({
        ...built(ctx),
        key: userKey,
        policy: (request) =>
          request.header('x-plan') === 'internal' ? undefined : windowOf('api', 1),
      });
      for (let i = 0; i < 3; i++) {
        const r = await send(app.url, { 'x-user': 'i', 'x-plan': 'internal' });
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toBeNull();
      }
      expect(await statuses(app.url, times(2, { 'x-user': 'i' }))).toEqual([200, 429]);
    });

    test('a bad return value goes to onError as INVALID_OPTION: 503, or a pass with fail-open', async () => {
      const errors: unknown[] = [];
      const bad = (() => ({ limit: 5 })) as unknown as () => Policy;
      const closed = await ctx.start({
        ...built(ctx),
        policy: bad,
        onError: (e) => errors.push(e),
      });
      const r = await send(closed.url);
      expect(r.status).toBe(503);
      expect(errors[0]).toMatchObject({ code: 'INVALID_OPTION' });
      expect(String((errors[0] as Error).message)).toMatch(/policy function must return a policy/);
      const open = await ctx.start({
        ...built(ctx),
        policy: () => [],
        onLimiterError: 'fail-open',
      });
      const passed = await send(open.url);
      expect(passed.status).toBe(200);
      expect(passed.headers.get('ratelimit')).toBeNull();
    });

    test('a policy function needs a store, said at construction', async () => {
      expect(await refusal(() => ctx.harness.build({ policy: () => windowOf('api', 1) }))).toMatch(
        /^INVALID_OPTION: `policy` needs a `store`/,
      );
    });
  });

  test("hook is the Fastify plugin's alone; elsewhere it is refused with where it applies", async () => {
    const options = {
      limiter: ctx.limiter(windowOf('one', 1)),
      hook: 'preHandler',
    } as RateLimitOptions;
    if (ctx.harness.name === 'fastify') {
      await ctx.harness.build(options);
      expect(
        await refusal(() => ctx.harness.build({ ...options, hook: 'later' } as never)),
      ).toMatch(/^INVALID_OPTION: hook must be 'onRequest' or 'preHandler'/);
    } else {
      expect(await refusal(() => ctx.harness.build(options))).toMatch(
        /^INVALID_OPTION: unknown option "hook" \(Floodgate's way: Fastify's plugin only/,
      );
    }
  });

  describe('allowList', () => {
    test('a listed address is neither counted nor given headers; others are limited', async () => {
      const limiter = ctx.limiter(windowOf('one', 1), { now: fixed });
      const listed = await ctx.start({ limiter, allowList: ['127.0.0.1'] });
      for (let i = 0; i < 3; i++) {
        const r = await send(listed.url);
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toBeNull();
        expect(r.headers.get('ratelimit-policy')).toBeNull();
      }
      // The store was never asked: the whole quota is still there.
      const seen: Decision = await limiter.peek('ip:127.0.0.1');
      expect(seen.remaining).toBe(1);
      const other = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        allowList: ['10.0.0.0/8', '2001:db8::/32'],
      });
      expect(await statuses(other.url, [{}, {}])).toEqual([200, 429]);
    });

    test('an IPv4-mapped IPv6 range matches the IPv4 client', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        allowList: ['::ffff:127.0.0.0/104'],
      });
      expect(await statuses(app.url, [{}, {}, {}])).toEqual([200, 200, 200]);
    });

    test('addresses are read as ipKey reads them: X-Forwarded-For only from a trusted proxy', async () => {
      const xff = (value: string) => ({ 'x-forwarded-for': value });
      const trusted = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        key: ipKey({ trustProxy: 'loopback' }),
        allowList: ['198.51.100.0/24'],
        validate: false,
      });
      expect(await statuses(trusted.url, times(3, xff('198.51.100.7')))).toEqual([200, 200, 200]);
      expect(await statuses(trusted.url, times(2, xff('203.0.113.1')))).toEqual([200, 429]);
      // Without trust, the header is the client's own word: it lists nobody.
      const untrusted = await ctx.start({
        limiter: ctx.limiter(windowOf('one', 1), { now: fixed }),
        allowList: ['198.51.100.0/24'],
        validate: false,
      });
      expect(await statuses(untrusted.url, times(2, xff('198.51.100.7')))).toEqual([200, 429]);
    });

    test('a listed identity skips every rule before any is charged', async () => {
      const perIp = ctx.limiter(windowOf('per-ip', 1), { now: fixed });
      const app = await ctx.start({
        rules: [
          { limiter: perIp, key: ipKey() },
          { limiter: ctx.limiter(windowOf('per-user', 5), { now: fixed }), key: userKey },
        ],
        allowList: ['batch-job'],
      });
      const batch = await statuses(app.url, times(3, { 'x-user': 'batch-job' }));
      expect(batch).toEqual([200, 200, 200]);
      // The per-IP rule, evaluated first, was not charged for the listed identity's requests.
      expect(await statuses(app.url, times(2, { 'x-user': 'alice' }))).toEqual([200, 429]);
    });

    test('a list that is not an array of non-empty strings is refused at construction', async () => {
      const limiter = ctx.limiter(windowOf('one', 1));
      for (const allowList of ['127.0.0.1', [''], [42]]) {
        const options = { limiter, allowList } as unknown as RateLimitOptions;
        expect(await refusal(() => ctx.harness.build(options))).toMatch(
          /^INVALID_OPTION: allowList must be an array/,
        );
      }
    });
  });
}
