// allowList with composed keys, through every adapter: the list reads the client address as the
// rules' ipKeys read it, wherever they sit (firstKey, combineKeys, nested), so a listed proxy
// does not list every client behind it. The suite's servers see the test's requests from
// loopback: loopback plays the proxy, and X-Forwarded-For names the client behind it.
import { fixedWindow } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import {
  combineKeys,
  firstKey,
  headerKey,
  ipKey,
  type KeyFunction,
  type RateLimitOptions,
  type RateLimitWarning,
} from '../../src/index.js';
import type { SuiteContext } from '../support/context.js';
import { send, T0 } from '../support/context.js';

const fixed = (): number => T0;
const CLIENT = { 'x-forwarded-for': '203.0.113.9' };
const PROXY = ['127.0.0.0/8', '::1', '::ffff:127.0.0.0/104'];

// A verified API key nobody sends here: firstKey falls through to the ipKey, as for anonymous
// callers.
const apiKey = headerKey('x-api-key', { verify: (value) => value === 'k_live' });
const tenant: KeyFunction = () => 'tenant:acme';
const behindOneProxy = () => ipKey({ trustProxy: 1 });

const COMPOSED: [string, () => KeyFunction][] = [
  ['firstKey(headerKey, ipKey)', () => firstKey(apiKey, behindOneProxy())],
  ['combineKeys(own key, ipKey)', () => combineKeys(tenant, behindOneProxy())],
  [
    'firstKey(headerKey, combineKeys(own key, ipKey))',
    () => firstKey(apiKey, combineKeys(tenant, behindOneProxy())),
  ],
];

async function statuses(url: string, n: number, headers: Record<string, string>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(url, headers)).status);
  return out;
}

export function allowListTests(ctx: SuiteContext): void {
  const limitOfTwo = () =>
    ctx.limiter(fixedWindow({ name: 'two', limit: 2, window: '10s' }), {
      now: fixed,
    });

  describe('allowList with composed keys', () => {
    for (const [shape, make] of COMPOSED) {
      test(`${shape}: a listed proxy does not list the client behind it`, async () => {
        const app = await ctx.start({ limiter: limitOfTwo(), key: make(), allowList: PROXY });
        expect(await statuses(app.url, 6, CLIENT)).toEqual([200, 200, 429, 429, 429, 429]);
      });

      test(`${shape}: the client's own address, read through the proxy, is listed`, async () => {
        const allowList = ['203.0.113.0/24'];
        const app = await ctx.start({ limiter: limitOfTwo(), key: make(), allowList });
        expect(await statuses(app.url, 6, CLIENT)).toEqual([200, 200, 200, 200, 200, 200]);
      });
    }

    test('a rule of its own with a composed key: the list reads through its ipKey', async () => {
      const app = await ctx.start({
        rules: [{ limiter: limitOfTwo(), key: firstKey(apiKey, behindOneProxy()) }],
        allowList: PROXY,
      });
      expect(await statuses(app.url, 6, CLIENT)).toEqual([200, 200, 429, 429, 429, 429]);
    });

    test('rules whose ipKeys read the address apart: listed only when every reading is', async () => {
      const options = (allowList: string[]): RateLimitOptions => ({
        key: behindOneProxy(),
        rules: [
          { limiter: limitOfTwo() },
          // This rule counts the socket peer: the proxy's reading must be listed as well.
          {
            limiter: ctx.limiter(fixedWindow({ name: 'peer', limit: 100, window: '10s' })),
            key: ipKey(),
          },
        ],
        allowList,
        validate: false,
      });
      const client = await ctx.start(options(['203.0.113.0/24']));
      expect(await statuses(client.url, 3, CLIENT)).toEqual([200, 200, 429]);
      const both = await ctx.start(options(['203.0.113.0/24', ...PROXY]));
      expect(await statuses(both.url, 3, CLIENT)).toEqual([200, 200, 200]);
    });

    test('no ipKey in sight: a listed peer forwarding X-Forwarded-For is warned about, once', async () => {
      const warnings: RateLimitWarning[] = [];
      const hidden = behindOneProxy();
      const app = await ctx.start({
        limiter: limitOfTwo(),
        // An ipKey inside a function of the app's own: the list cannot know how it reads.
        key: (request) => hidden(request),
        allowList: PROXY,
        onWarning: (w) => warnings.push(w),
      });
      await statuses(app.url, 2, {});
      expect(warnings.map((w) => w.code)).toEqual([]);
      await statuses(app.url, 2, CLIENT);
      const said = warnings.filter((w) => w.code === 'ALLOW_LIST_WITHOUT_IP_KEY');
      expect(said).toHaveLength(1);
      expect(said[0]?.message).toMatch(/firstKey\(\) or combineKeys\(\) around ipKey/);
    });
  });
}
