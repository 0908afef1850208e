// Both plugins on one app, at run time; test/types/fastify-beside-rate-limit.ts checks that their
// declarations compile side by side with lib checks on (TS2717 on `config.rateLimit` before).

import fastifyRateLimit from '@fastify/rate-limit';
import { fixedWindow } from '@floodgate/core';
import Fastify from 'fastify';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { type FastifyRouteRateLimitOptions, rateLimit } from '../src/fastify/index.js';
import { steadyMemoryStore } from './support/stores.js';

const apps: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('@floodgate/http/fastify beside @fastify/rate-limit', () => {
  test('each reads its own route config key', async () => {
    const app = Fastify();
    apps.push(app);
    await app.register(fastifyRateLimit, { global: false });
    await app.register(rateLimit, { store: steadyMemoryStore(), global: false });
    const ours: FastifyRouteRateLimitOptions = {
      policy: fixedWindow({ name: 'ours', limit: 2, window: '1m' }),
    };
    app.get(
      '/both',
      { config: { floodgate: ours, rateLimit: { max: 5, timeWindow: '1m' } } },
      async () => 'ok',
    );
    // Their key on a route: not ours, even though earlier versions read it.
    app.get('/theirs', { config: { rateLimit: { max: 1, timeWindow: '1m' } } }, async () => 'ok');
    await app.ready();

    const first = await app.inject('/both');
    expect(first.statusCode).toBe(200);
    expect(first.headers.ratelimit).toMatch(/^"ours";r=1;/);
    expect(first.headers['x-ratelimit-limit']).toBe('5');
    await app.inject('/both');
    expect((await app.inject('/both')).statusCode).toBe(429);

    const theirs = await app.inject('/theirs');
    expect(theirs.statusCode).toBe(200);
    expect(theirs.headers.ratelimit).toBeUndefined();
    expect((await app.inject('/theirs')).statusCode).toBe(429);
  });

  test('without @fastify/rate-limit, config.rateLimit is still read, with a deprecation warning', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const app = Fastify();
    apps.push(app);
    await app.register(rateLimit, { store: steadyMemoryStore(), global: false });
    const legacy = {
      config: { rateLimit: { policy: fixedWindow({ name: 'old', limit: 1, window: '1m' }) } },
    };
    app.get('/old', legacy as object, async () => 'ok');
    await app.ready();
    expect((await app.inject('/old')).headers.ratelimit).toMatch(/^"old";r=0;/);
    expect((await app.inject('/old')).statusCode).toBe(429);
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/config\.rateLimit is deprecated.*config\.floodgate/),
      expect.objectContaining({ type: 'DeprecationWarning' }),
    );
    warn.mockRestore();
  });
});
