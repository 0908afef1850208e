// A missing client address is never silent. Served the way Bun, Deno and Workers serve an app
// (its fetch function called with a Request, no socket anywhere), ipKey() cannot key the
// request; the middleware must say so, once, naming `getAddress` and the runtime.
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { Hono } from 'hono';
import { expect, test } from 'vitest';
import { rateLimit as fetchLimit } from '../src/fetch/index.js';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import type { RateLimitWarning } from '../src/index.js';
import { steadyMemoryStore } from './support/stores.js';

function limiter(): Limiter {
  return createLimiter({
    store: steadyMemoryStore(),
    policy: fixedWindow({ name: 'api', limit: 10, window: '1m' }),
  });
}

function expectAddressWarning(warnings: RateLimitWarning[]): void {
  expect(warnings.map((w) => w.code)).toEqual(['UNKNOWN_CLIENT_ADDRESS']);
  const { message, help } = warnings[0]!;
  expect(message).toContain('getAddress');
  // This suite runs on Node: the runtime is named as such, with its version.
  expect(message).toContain(`Node.js ${process.versions.node}`);
  expect(help).toMatch(/docs\/http\.md#unknown_client_address$/);
}

test('Hono through app.fetch without getAddress: still 503, and warned once', async () => {
  const warnings: RateLimitWarning[] = [];
  const app = new Hono();
  app.use('*', honoLimit({ limiter: limiter(), onWarning: (w) => warnings.push(w) }));
  app.get('/', (c) => c.text('ok'));
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await app.fetch(new Request('http://app/'))).status);
  expect(statuses).toEqual([503, 503, 503]);
  expectAddressWarning(warnings);
});

test('fetch handler without getAddress: warned once', async () => {
  const warnings: RateLimitWarning[] = [];
  const limit = fetchLimit({ limiter: limiter(), onWarning: (w) => warnings.push(w) });
  const handler = limit.wrap(async () => new Response('ok'));
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await handler(new Request('http://app/'))).status);
  expect(statuses).toEqual([503, 503, 503]);
  expectAddressWarning(warnings);
});

test('with getAddress there is nothing to warn about', async () => {
  const warnings: RateLimitWarning[] = [];
  const limit = fetchLimit({
    limiter: limiter(),
    getAddress: () => '203.0.113.9',
    onWarning: (w) => warnings.push(w),
  });
  const res = await limit.wrap(async () => new Response('ok'))(new Request('http://app/'));
  expect(res.status).toBe(200);
  expect(warnings).toEqual([]);
});

test('by default the warning reaches the process, even when onLimiterError hides the failure', async () => {
  const seen: Error[] = [];
  const listener = (w: Error): void => void seen.push(w);
  process.on('warning', listener);
  try {
    const limit = fetchLimit({ limiter: limiter(), onLimiterError: 'fail-open' });
    const res = await limit.wrap(async () => new Response('ok'))(new Request('http://app/'));
    expect(res.status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  const ours = seen.filter((w) => w.name === 'FloodgateWarning');
  expect(ours.map((w) => (w as Error & { code?: string }).code)).toEqual([
    'UNKNOWN_CLIENT_ADDRESS',
  ]);
  expect(ours[0]!.message).toContain('getAddress');
});
