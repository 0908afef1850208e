import { fixedWindow } from '@floodgate/core';
import { Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as fetchLimit } from '../src/fetch/index.js';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import { ipKey } from '../src/index.js';
import { serveFetch } from './adapters/hono.js';
import { send } from './support/context.js';
import { steadyMemoryStore } from './support/stores.js';

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
      store: steadyMemoryStore(),
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
    store: steadyMemoryStore(),
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

describe('node: a failure writing the answer', () => {
  test('an onLimited header node refuses is a 500, not a hung request and an unhandled rejection', async () => {
    const { createServer } = await import('node:http');
    const { rateLimit: nodeLimit } = await import('../src/node/index.js');
    const { urlOf } = await import('./support/harness.js');
    const limit = nodeLimit({
      policy: fixedWindow({ name: 'one', limit: 1, window: '10s' }),
      store: steadyMemoryStore(),
      onLimited: () => ({ headers: { 'X-Reason': 'line\nbreak' } }),
    });
    const server = createServer(async (req, res) => {
      if (await limit(req, res)) res.end('handled');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push(
      () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const url = urlOf(server.address());
    expect((await send(url)).status).toBe(200);
    const r = await send(url);
    expect(r.status).toBe(500);
    expect(r.json()).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect(r.headers.get('x-reason')).toBeNull();
  });
});
