// headerKey: a client-written header is an identity only once the app has verified it. The
// documented pattern must hold an anonymous client to its per-IP limit, whatever keys it invents.
import { createServer } from 'node:http';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { afterEach, expect, test } from 'vitest';
import { firstKey, headerKey, ipKey, type RateLimitWarning } from '../src/index.js';
import { type NodeRateLimitOptions, rateLimit } from '../src/node/index.js';
import { T0 } from './support/context.js';
import { counter, urlOf } from './support/harness.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

function limitOf5(): Limiter {
  return createLimiter({
    store: new MemoryStore({ now: () => T0 }),
    policy: fixedWindow({ name: 'api', limit: 5, window: '1m' }),
  });
}

async function serve(
  options: NodeRateLimitOptions,
): Promise<{ url: string; handled: () => number }> {
  const limit = rateLimit(options);
  const handled = counter();
  const server = createServer(async (req, res) => {
    if (!(await limit(req, res))) return;
    handled.hit();
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: urlOf(server.address()), handled: handled.count };
}

const known = new Set(['k_live_alice']);
// As an app would: a lookup that takes a moment.
const verify = async (value: string): Promise<boolean> => known.has(value);

test('one IP inventing an x-api-key per request is still held to the per-IP limit of 5', async () => {
  const app = await serve({
    limiter: limitOf5(),
    key: firstKey(headerKey('x-api-key', { verify }), ipKey()),
  });
  let admitted = 0;
  for (let i = 0; i < 50; i++) {
    const res = await fetch(app.url, { headers: { 'x-api-key': `made-up-${i}` } });
    await res.arrayBuffer();
    if (res.status === 200) admitted++;
  }
  expect(admitted).toBe(5);
  expect(app.handled()).toBe(5);
});

test('a verified key has its own bucket, apart from the IP', async () => {
  const app = await serve({
    limiter: limitOf5(),
    key: firstKey(headerKey('x-api-key', { verify }), ipKey()),
  });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await fetch(app.url)).status);
  for (let i = 0; i < 6; i++) {
    statuses.push((await fetch(app.url, { headers: { 'x-api-key': 'k_live_alice' } })).status);
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 200, 200, 200, 200, 200, 429]);
});

test('verify receives the value and the request view', async () => {
  const seen: [string, string][] = [];
  const key = headerKey('X-API-Key', {
    verify: (value, request) => {
      seen.push([value, request.method]);
      return false;
    },
  });
  const app = await serve({ limiter: limitOf5(), key });
  const res = await fetch(app.url, { headers: { 'x-api-key': 'abc' } });
  // Unverified and no fallback: the rule does not apply.
  expect(res.status).toBe(200);
  expect(res.headers.get('ratelimit')).toBeNull();
  expect(seen).toEqual([['abc', 'GET']]);
});

test('headerKey without verify warns once, with its code and a link', async () => {
  const warnings: RateLimitWarning[] = [];
  const app = await serve({
    limiter: limitOf5(),
    key: firstKey(headerKey('x-api-key'), ipKey()),
    onWarning: (w) => warnings.push(w),
  });
  for (const v of ['a', 'b', 'c']) await fetch(app.url, { headers: { 'x-api-key': v } });
  expect(warnings.map((w) => w.code)).toEqual(['UNVERIFIED_HEADER_KEY']);
  expect(warnings[0]!.message).toContain('verify');
  expect(warnings[0]!.help).toMatch(/docs\/http\.md#unverified_header_key$/);
});

test('validate silences the warning, all at once or by code', async () => {
  const warnings: RateLimitWarning[] = [];
  for (const validate of [false, { UNVERIFIED_HEADER_KEY: false }] as const) {
    const app = await serve({
      limiter: limitOf5(),
      key: headerKey('x-api-key'),
      validate,
      onWarning: (w) => warnings.push(w),
    });
    await fetch(app.url, { headers: { 'x-api-key': 'a' } });
  }
  expect(warnings).toEqual([]);
});

test.each([[{ verify: 'yes' }], [{ verfy: () => true }], [null]])(
  'headerKey options %j are refused',
  (options) => {
    expect(() => headerKey('x-api-key', options as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  },
);

test.each([
  [{ validate: 'loud' }],
  [{ validate: { NOT_A_CODE: false } }],
  [{ validate: { UNVERIFIED_HEADER_KEY: 'no' } }],
  [{ onWarning: 'console' }],
])('middleware option %j is refused', (options) => {
  expect(() => rateLimit({ limiter: limitOf5(), ...(options as object) })).toThrow(
    expect.objectContaining({ code: 'INVALID_OPTION' }),
  );
});
