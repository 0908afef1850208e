// allowList address matching beyond the loopback the suite's servers see: IPv6 ranges, IPv4-mapped
// addresses on either side, proxies. The fetch adapter's getAddress stands in for the socket peer.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import { rateLimit } from '../src/fetch/index.js';
import { ipKey, type RateLimitOptions } from '../src/index.js';
import { steadyMemoryStore } from './support/stores.js';

const PEER = 'x-test-peer';

/** Statuses of three requests from `peer` (with `forwarded` as X-Forwarded-For, if given). */
async function threeFrom(
  options: Partial<RateLimitOptions<Request>>,
  peer: string,
  forwarded?: string,
): Promise<(number | 'next')[]> {
  const limit = rateLimit({
    limiter: createLimiter({
      store: steadyMemoryStore(),
      policy: fixedWindow({ name: 'one', limit: 1, window: '1m' }),
    }),
    getAddress: (request) => request.headers.get(PEER) ?? undefined,
    validate: false,
    ...options,
  });
  const out: (number | 'next')[] = [];
  for (let i = 0; i < 3; i++) {
    const headers: Record<string, string> = { [PEER]: peer };
    if (forwarded !== undefined) headers['x-forwarded-for'] = forwarded;
    const denied = await limit(new Request('https://api.test/', { headers }));
    out.push(denied?.status ?? 'next');
  }
  return out;
}

const LISTED = ['next', 'next', 'next'];
const LIMITED = ['next', 429, 429];

describe('allowList addresses', () => {
  test('IPv6 ranges and single addresses; zone-less and compressed forms alike', async () => {
    const allowList = ['2001:db8:aa::/48', '2001:0db8:0000:0000:0000:0000:0000:0007'];
    expect(await threeFrom({ allowList }, '2001:db8:aa:1::5')).toEqual(LISTED);
    expect(await threeFrom({ allowList }, '2001:db8::7')).toEqual(LISTED);
    expect(await threeFrom({ allowList }, '2001:db8:ab::5')).toEqual(LIMITED);
  });

  test('IPv4-mapped IPv6: a mapped client matches an IPv4 range, a mapped entry an IPv4 client', async () => {
    expect(await threeFrom({ allowList: ['203.0.113.0/24'] }, '::ffff:203.0.113.9')).toEqual(
      LISTED,
    );
    expect(await threeFrom({ allowList: ['::ffff:203.0.113.9'] }, '203.0.113.9')).toEqual(LISTED);
    expect(await threeFrom({ allowList: ['::ffff:203.0.113.0/120'] }, '203.0.113.200')).toEqual(
      LISTED,
    );
    expect(await threeFrom({ allowList: ['203.0.113.0/24'] }, '198.51.100.1')).toEqual(LIMITED);
  });

  test("behind a proxy the key's trustProxy decides which hop is the client", async () => {
    const behind = { key: ipKey({ trustProxy: '10.0.0.0/8' }), allowList: ['198.51.100.0/24'] };
    // The proxy 10.0.0.2 says the client is 198.51.100.4 (a port written by the proxy is dropped).
    expect(await threeFrom(behind, '10.0.0.2', '198.51.100.4:51000')).toEqual(LISTED);
    // A client that wrote the listed address itself, in front of its real one, is not listed.
    expect(await threeFrom(behind, '10.0.0.2', '198.51.100.4, 203.0.113.8')).toEqual(LIMITED);
    // The proxy itself is not listed.
    expect(
      await threeFrom({ ...behind, allowList: ['10.0.0.0/8'] }, '10.0.0.2', '203.0.113.8'),
    ).toEqual(LIMITED);
  });

  test("an entry that is not an address is an identity: ipKey's own key form lists one", async () => {
    expect(await threeFrom({ allowList: ['ip:203.0.113.9'] }, '203.0.113.9')).toEqual(LISTED);
    expect(await threeFrom({ allowList: ['ip:203.0.113.9'] }, '203.0.113.10')).toEqual(LIMITED);
  });
});
