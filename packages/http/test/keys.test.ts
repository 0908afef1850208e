import { isFloodgateError } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import {
  canonicalPath,
  clientAddress,
  compileTrust,
  normalizeAddress,
  stripPort,
} from '../src/adapter/index.js';
import {
  combineKeys,
  firstKey,
  headerKey,
  ipKey,
  type RateLimitRequest,
  routeKey,
} from '../src/index.js';

function request(
  address: string | undefined,
  headers: Record<string, string> = {},
  extra: Partial<RateLimitRequest> = {},
): RateLimitRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: 'GET',
    path: '/items/7',
    route: undefined,
    address,
    header: (name) => lower[name.toLowerCase()],
    raw: undefined,
    ...extra,
  };
}

describe('normalizeAddress', () => {
  test.each([
    ['203.0.113.9', 56, '203.0.113.9'],
    ['::ffff:203.0.113.9', 56, '203.0.113.9'],
    ['::ffff:cb00:7109', 56, '203.0.113.9'],
    ['2001:db8:1:23ab:4:5:6:7', 56, '2001:db8:1:2300::/56'],
    ['2001:db8:1:23ab:4:5:6:7', 64, '2001:db8:1:23ab::/64'],
    ['2001:db8:1:23ab:4:5:6:7', 128, '2001:db8:1:23ab:4:5:6:7'],
    ['2001:DB8:0:0:0:0:0:1', 128, '2001:db8::1'],
    ['fe80::1%eth0', 128, 'fe80::1'],
    ['::1', 56, '::/56'],
    ['not an address', 56, 'not an address'],
  ])('%s /%i → %s', (address, prefix, expected) => {
    expect(normalizeAddress(address, prefix)).toBe(expected);
  });

  test('an IPv4 prefix groups IPv4 networks', () => {
    expect(normalizeAddress('203.0.113.9', 56, 24)).toBe('203.0.113.0/24');
  });
});

describe('trust', () => {
  const chain = '198.51.100.1, 10.0.0.2, 10.0.0.1';
  test.each([
    [false, '127.0.0.1'],
    [true, '198.51.100.1'],
    [1, '10.0.0.1'],
    [2, '10.0.0.2'],
    [3, '198.51.100.1'],
    ['loopback', '10.0.0.1'],
    ['loopback, 10.0.0.0/8', '198.51.100.1'],
    [['loopback', 'uniquelocal'], '198.51.100.1'],
    [(address: string) => address === '127.0.0.1', '10.0.0.1'],
  ] as const)('trustProxy %j → %s', (trust, expected) => {
    expect(
      clientAddress(request('127.0.0.1', { 'X-Forwarded-For': chain }), compileTrust(trust)),
    ).toBe(expected);
  });

  test('an untrusted peer cannot speak for anyone', () => {
    const r = request('198.51.100.50', { 'x-forwarded-for': '1.2.3.4' });
    expect(clientAddress(r, compileTrust('loopback'))).toBe('198.51.100.50');
  });

  test.each([[-1], [1.5], [''], ['not-a-range/99'], [[]], [{}]])(
    'trustProxy %j is refused',
    (trust) => {
      expect(() => compileTrust(trust as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    },
  );
});

describe('ipKey', () => {
  test('defaults: socket address, IPv6 by /56', async () => {
    const key = ipKey();
    expect(await key(request('2001:db8::1', { 'x-forwarded-for': '1.2.3.4' }))).toBe(
      'ip:2001:db8::/56',
    );
    expect(await key(request('::ffff:127.0.0.1'))).toBe('ip:127.0.0.1');
  });

  test('an unknown address is an error, not a shared bucket', () => {
    try {
      ipKey()(request(undefined));
      expect.unreachable();
    } catch (error) {
      expect(isFloodgateError(error) && error.code).toBe('INVALID_KEY');
    }
  });

  test.each([
    [{ ipv6Prefix: 129 }],
    [{ ipv6Prefix: 56.5 }],
    [{ ipv4Prefix: 33 }],
    [{ trust: true }],
  ])('options %j are refused', (options) => {
    expect(() => ipKey(options as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('other keys', () => {
  test('headerKey reads any case and names its kind', async () => {
    expect(await headerKey('X-API-Key')(request('1.1.1.1', { 'x-api-key': 'k' }))).toBe(
      'header:x-api-key:k',
    );
    expect(await headerKey('x-api-key')(request('1.1.1.1'))).toBeUndefined();
    expect(() => headerKey('bad name')).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });

  test('routeKey prefers the route pattern', async () => {
    expect(await routeKey()(request('1.1.1.1'))).toBe('route:GET /items/7');
    expect(await routeKey()(request('1.1.1.1', {}, { route: '/items/:id' }))).toBe(
      'route:GET /items/:id',
    );
  });

  test('combineKeys is injective over its parts', async () => {
    const fixed = (v: string) => () => v;
    const a = await combineKeys(fixed('a|b'), fixed('c'))(request('1.1.1.1'));
    const b = await combineKeys(fixed('a'), fixed('b|c'))(request('1.1.1.1'));
    const c = await combineKeys(fixed('a\\'), fixed('|c'))(request('1.1.1.1'));
    expect(new Set([a, b, c]).size).toBe(3);
    expect(await combineKeys(fixed('a'), () => undefined)(request('1.1.1.1'))).toBeUndefined();
  });

  test('firstKey takes the first key with a value', async () => {
    const key = firstKey(headerKey('x-api-key'), ipKey());
    expect(await key(request('1.1.1.1'))).toBe('ip:1.1.1.1');
    expect(await key(request('1.1.1.1', { 'x-api-key': 'k' }))).toBe('header:x-api-key:k');
    expect(() => firstKey()).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('canonicalPath', () => {
  test.each([
    ['/search', '/search'],
    ['/Search', '/search'],
    ['/search/', '/search'],
    ['/search//', '/search'],
    ['/search?q=1#x', '/search'],
    ['http://anything/search', '/search'],
    ['HTTPS://a.example:8443/Search/?q', '/search'],
    ['http://anything', '/'],
    ['/%73earch', '/search'],
    ['/a/./b/../search', '/a/search'],
    ['/a/%2e%2e/search', '/search'],
    ['/../../search', '/search'],
    ['/a/b/..', '/a'],
    ['/a%2Fb', '/a%2fb'],
    ['/bad%zz', '/bad%zz'],
    ['/', '/'],
    ['*', '*'],
  ])('%s → %s', (target, expected) => {
    expect(canonicalPath(target)).toBe(expected);
  });

  test("the framework's case and trailing-slash rules", () => {
    const strict = { caseSensitive: true, strictRouting: true };
    expect(canonicalPath('/Search/', strict)).toBe('/Search/');
    expect(canonicalPath('http://x/Search/?q', strict)).toBe('/Search/');
    expect(canonicalPath('/Search/', { caseSensitive: true })).toBe('/Search');
  });
});

describe('stripPort', () => {
  test.each([
    ['203.0.113.9:40000', '203.0.113.9'],
    ['203.0.113.9', '203.0.113.9'],
    ['[2001:db8::1]:40000', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:db8::1:443', '2001:db8::1:443'],
    ['999.0.113.9:80', '999.0.113.9:80'],
    ['unknown', 'unknown'],
  ])('%s → %s', (address, expected) => {
    expect(stripPort(address)).toBe(expected);
  });
});

test('routeKey counts HEAD with GET and folds spellings of the path', async () => {
  const key = routeKey();
  const head = await key(request('1.1.1.1', {}, { method: 'HEAD', path: '/Items/7/' }));
  expect(head).toBe('route:GET /items/7');
  const matched = await key(request('1.1.1.1', {}, { method: 'head', route: '/items/:id' }));
  expect(matched).toBe('route:GET /items/:id');
  const strict = await key(
    request(
      '1.1.1.1',
      {},
      { path: '/Items/7/', framework: { name: 'x', caseSensitive: true, strictRouting: true } },
    ),
  );
  expect(strict).toBe('route:GET /Items/7/');
});
