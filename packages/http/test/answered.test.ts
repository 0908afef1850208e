import { fixedWindow } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as fetchLimit } from '../src/fetch/index.js';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import { ipKey } from '../src/index.js';
import { serveFetch } from './adapters/hono.js';
import { send } from './support/context.js';

// A getAddress that throws is a limiter error like any other: the request is still answered,
// as onLimiterError says, on real servers for both adapters that take one.
const policy = fixedWindow({ name: 'one', limit: 5, window: '10s' });
const broken = (): string => {
  throw new Error('no connection info on this runtime');
};
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

type Mode = 'fail-open' | 'fail-closed';

async function honoApp(mode: Mode, errors: unknown[]): Promise<string> {
  const app = new Hono();
  app.use(
    '*',
    honoLimit({
      policy,
      store: new MemoryStore(),
      key: ipKey(),
      getAddress: broken,
      onLimiterError: mode,
      onError: (error) => errors.push(error),
    }),
  );
  app.get('/', (c) => c.text('handled'));
  const served = await serveFetch(app.fetch, '127.0.0.1');
  open.push(served.close);
  return served.url;
}

async function fetchApp(mode: Mode, errors: unknown[]): Promise<string> {
  const limit = fetchLimit({
    policy,
    store: new MemoryStore(),
    getAddress: broken,
    onLimiterError: mode,
    onError: (error) => errors.push(error),
  });
  const served = await serveFetch(
    limit.wrap(async () => new Response('handled')),
    '127.0.0.1',
  );
  open.push(served.close);
  return served.url;
}

describe.each([
  ['hono', honoApp],
  ['fetch', fetchApp],
])('%s: getAddress that throws', (_name, start) => {
  test('fail-open: the request goes through, and onError is told', async () => {
    const errors: unknown[] = [];
    const r = await send(await start('fail-open', errors));
    expect(r.status).toBe(200);
    expect(r.text).toBe('handled');
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toMatch(/no connection info/);
  });

  test('fail-closed: a 503 problem, not a 500', async () => {
    const errors: unknown[] = [];
    const r = await send(await start('fail-closed', errors));
    expect(r.status).toBe(503);
    expect(r.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(errors).toHaveLength(1);
  });
});
