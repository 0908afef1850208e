import { createServer } from 'node:net';
import { fixedWindow } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import {
  combineKeys,
  firstKey,
  headerKey,
  ipKey,
  type KeyFunction,
  routeKey,
} from '../../src/index.js';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

const one = () => fixedWindow({ name: 'one', limit: 1, window: '10s' });
const fixed = (): number => T0;
const statuses = async (url: string, list: Record<string, string>[]): Promise<number[]> => {
  const out: number[] = [];
  for (const headers of list) out.push((await send(url, headers)).status);
  return out;
};
const xff = (value: string): Record<string, string> => ({ 'x-forwarded-for': value });

/** Whether this machine can listen on ::1. */
async function hasIpv6Loopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

function recording(key: KeyFunction): { key: KeyFunction; seen: (string | undefined)[] } {
  const seen: (string | undefined)[] = [];
  return {
    seen,
    key: async (request) => {
      const value = await key(request);
      seen.push(value);
      return value;
    },
  };
}

export function keyTests(ctx: SuiteContext): void {
  describe('keys', () => {
    test('a spoofed X-Forwarded-For is ignored without trust', async () => {
      const app = await ctx.start({ limiter: ctx.limiter(one(), { now: fixed }) });
      // Both come from 127.0.0.1: one bucket, whatever the header claims.
      expect(await statuses(app.url, [xff('198.51.100.1'), xff('198.51.100.2')])).toEqual([
        200, 429,
      ]);
    });

    test('X-Forwarded-For is honoured from a trusted proxy', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: ipKey({ trustProxy: 'loopback' }),
      });
      expect(
        await statuses(app.url, [xff('198.51.100.1'), xff('198.51.100.2'), xff('198.51.100.1')]),
      ).toEqual([200, 200, 429]);
    });

    test('with one trusted hop, a client-written left part of the chain is ignored', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: ipKey({ trustProxy: 1 }),
      });
      expect(
        await statuses(app.url, [
          xff('203.0.113.1, 198.51.100.7'),
          xff('203.0.113.2, 198.51.100.7'),
        ]),
      ).toEqual([200, 429]);
    });

    test('IPv6 clients are grouped by /56; IPv4-mapped IPv6 is IPv4', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: ipKey({ trustProxy: 'loopback' }),
      });
      expect(
        await statuses(app.url, [
          xff('2001:db8:1:2300::1'),
          xff('2001:db8:1:23ff:ffff::2'),
          xff('2001:db8:1:2400::1'),
          xff('::ffff:203.0.113.9'),
          xff('203.0.113.9'),
        ]),
      ).toEqual([200, 429, 200, 200, 429]);
    });

    test('a client on ::1 is keyed by its /56 network', async (t) => {
      if (!(await hasIpv6Loopback())) {
        t.annotate('::1 is not available on this machine; covered by the key unit tests');
        return;
      }
      const rec = recording(ipKey());
      const app = await ctx.start(
        { limiter: ctx.limiter(one(), { now: fixed }), key: rec.key },
        { host: '::1' },
      );
      expect(await statuses(app.url, [{}, {}])).toEqual([200, 429]);
      expect(rec.seen).toEqual(['ip:::/56', 'ip:::/56']);
    });

    test('route keys count each route apart', async () => {
      const rec = recording(combineKeys(routeKey(), ipKey()));
      const app = await ctx.start({ limiter: ctx.limiter(one(), { now: fixed }), key: rec.key });
      const a = await send(`${app.url}/users/1`);
      const b = await send(`${app.url}/users/1`);
      const c = await send(`${app.url}/`);
      const d = await send(`${app.url}/users/2`);
      expect([a.status, b.status, c.status]).toEqual([200, 429, 200]);
      // Where the framework knows the pattern, /users/2 is the same route as /users/1.
      expect(d.status).toBe(ctx.harness.knowsRoute ? 429 : 200);
      expect(rec.seen[0]).toBe(
        ctx.harness.knowsRoute
          ? 'route:GET /users/:id|ip:127.0.0.1'
          : 'route:GET /users/1|ip:127.0.0.1',
      );
    });

    test('HEAD is answered by the GET handler and counted with it', async () => {
      const rec = recording(combineKeys(routeKey(), ipKey()));
      const app = await ctx.start({ limiter: ctx.limiter(one(), { now: fixed }), key: rec.key });
      const get = await fetch(`${app.url}/users/1`);
      await get.arrayBuffer();
      const head = await fetch(`${app.url}/users/1`, { method: 'HEAD' });
      expect([get.status, head.status]).toEqual([200, 429]);
      expect(app.handled()).toBe(1);
    });

    test('a port the trusted proxy wrote is not part of the key', async () => {
      const rec = recording(ipKey({ trustProxy: 'loopback' }));
      const app = await ctx.start({ limiter: ctx.limiter(one(), { now: fixed }), key: rec.key });
      expect(await statuses(app.url, [xff('203.0.113.9:40000'), xff('203.0.113.9:40001')])).toEqual(
        [200, 429],
      );
      expect(rec.seen).toEqual(['ip:203.0.113.9', 'ip:203.0.113.9']);
    });

    test('made-up API keys fall back to the IP when the key is verified', async () => {
      const verify = (value: string): boolean => value === 'k_live';
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: firstKey(headerKey('x-api-key', { verify }), ipKey()),
      });
      const k = (v: string) => ({ 'x-api-key': v });
      expect(await statuses(app.url, [k('made-up-1'), k('made-up-2'), k('k_live')])).toEqual([
        200, 429, 200,
      ]);
    });

    test('API keys count each key apart; a request without one is not counted', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: headerKey('x-api-key'),
      });
      const k = (v: string) => ({ 'x-api-key': v });
      expect(await statuses(app.url, [k('alpha'), k('alpha'), k('beta')])).toEqual([200, 429, 200]);
      const anonymous = await send(app.url);
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers.get('ratelimit')).toBeNull();
    });

    test('firstKey: the API key when sent, else the IP', async () => {
      const app = await ctx.start({
        limiter: ctx.limiter(one(), { now: fixed }),
        key: firstKey(headerKey('x-api-key'), ipKey()),
      });
      expect(await statuses(app.url, [{}, {}, { 'x-api-key': 'ip:127.0.0.1' }])).toEqual([
        200, 429, 200,
      ]);
    });
  });
}
