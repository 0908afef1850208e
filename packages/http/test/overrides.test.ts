// A limiter with stored overrides (`createLimiter({ overrides: true })`) given as `limiter`: the
// middleware needs nothing of its own, its headers and 429s advertise the limit in force.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, test } from 'vitest';
import { rateLimit } from '../src/fetch/index.js';
import { headerKey } from '../src/index.js';

describe('overrides through the middleware', () => {
  test('a raised limit is what the headers advertise; a block is a 429 until its end', async () => {
    let now = 1_000_000;
    const limiter = createLimiter({
      store: new MemoryStore({ now: () => now }),
      policy: fixedWindow({ limit: 2, window: '1m', name: 'api' }),
      overrides: true,
    });
    // headerKey's identities are `header:<name>:<value>`: what an override names.
    const limit = rateLimit({ limiter, key: headerKey('x-api-key'), headers: 'draft-7' });
    const handler = limit.wrap(async () => new Response('ok'));
    const get = (key: string) =>
      handler(new Request('http://test/', { headers: { 'x-api-key': key } }));

    await limiter.override('header:x-api-key:vip', { limit: 50, until: now + 3_600_000 });
    const vip = await get('vip');
    expect(vip.status).toBe(200);
    expect(vip.headers.get('RateLimit')).toBe('limit=50, remaining=49, reset=20');
    expect((await get('plain')).headers.get('RateLimit')).toBe('limit=2, remaining=1, reset=20');

    await limiter.override('header:x-api-key:abuser', { limit: 0, until: now + 600_000 });
    const blocked = await get('abuser');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('Retry-After')).toBe('600');
    now += 600_000;
    expect((await get('abuser')).status, 'the block ended by itself').toBe(200);
  });
});
