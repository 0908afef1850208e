import { FloodgateError } from '@floodgate/core';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import type { KeyFunction, RateLimitRequest } from '../shared/types.js';

/**
 * `(address, hop)` → trust this hop? `hop` 0 is the socket peer.
 * @example
 * Trust the socket peer only when it is the local reverse proxy.
 * ```ts
 * import { ipKey, type TrustFunction } from '@floodgate/http';
 *
 * const nearestProxy: TrustFunction = (address, hop) => hop === 0 && address === '127.0.0.1';
 * const key = ipKey({ trustProxy: nearestProxy });
 * ```
 */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Which proxies in front of the server may speak for the client through `X-Forwarded-For`, as in
 * Express: `true` (all), a hop count, CIDR ranges or the names `'loopback'`, `'linklocal'`,
 * `'uniquelocal'` (a list or a comma-separated string), or a function.
 * @example
 * ```ts
 * import { ipKey, type TrustProxy } from '@floodgate/http';
 *
 * // The load balancers on the private network may speak for the client.
 * const trustProxy: TrustProxy = ['loopback', '10.0.0.0/8'];
 * const key = ipKey({ trustProxy });
 * ```
 */
export type TrustProxy = boolean | number | string | readonly string[] | TrustFunction;

/**
 * The options of {@link ipKey}: which proxies to trust and how wide a network counts as one client.
 * @example
 * ```ts
 * import { type IpKeyOptions, ipKey } from '@floodgate/http';
 *
 * // Behind a proxy on this host; one IPv6 subscriber per /64.
 * const options: IpKeyOptions = { trustProxy: 'loopback', ipv6Prefix: 64 };
 * const key = ipKey(options);
 * ```
 */
export interface IpKeyOptions {
  /**
   * Trusted proxies. Without trust, `X-Forwarded-For` is ignored and the socket peer is the
   * client, so a client cannot pick its own key by sending the header. @default false
   */
  trustProxy?: TrustProxy;
  /**
   * IPv6 clients are counted per network of this prefix length: one subscriber usually holds a
   * whole /56 or /64, and would otherwise get a fresh limit per address. @default 56
   */
  ipv6Prefix?: number;
  /** IPv4 clients are counted per network of this prefix length. @default 32 */
  ipv4Prefix?: number;
}

/**
 * Compiles the Express-style trust setting into proxy-addr's trust function. Throws
 * `FloodgateError('INVALID_OPTION')` on a setting it cannot read.
 * @example
 * ```ts
 * import { compileTrust } from '@floodgate/http';
 *
 * const trust = compileTrust(['loopback', '10.0.0.0/8']);
 * trust('10.1.2.3', 1); // true
 * trust('203.0.113.9', 1); // false
 * ```
 */
export function compileTrust(trust: TrustProxy | undefined): TrustFunction {
  if (trust === undefined || trust === false) return () => false;
  if (trust === true) return () => true;
  if (typeof trust === 'number') {
    if (!Number.isSafeInteger(trust) || trust < 0) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `trustProxy hop count must be a whole number ≥ 0, got ${trust}`,
      );
    }
    return (_address, hop) => hop < trust;
  }
  if (typeof trust === 'function') return trust;
  const list =
    typeof trust === 'string'
      ? trust.split(',').map((s) => s.trim())
      : Array.isArray(trust)
        ? [...trust]
        : undefined;
  if (
    list === undefined ||
    list.length === 0 ||
    list.some((s) => typeof s !== 'string' || s === '')
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'trustProxy must be a boolean, a hop count, CIDR ranges or names (loopback, linklocal, uniquelocal), or a function',
    );
  }
  try {
    return proxyAddr.compile(list);
  } catch (cause) {
    throw new FloodgateError('INVALID_OPTION', `trustProxy: ${(cause as Error).message}`, {
      cause,
    });
  }
}

function checkPrefix(
  value: number | undefined,
  fallback: number,
  max: number,
  what: string,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `${what} must be a whole number from 0 to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The network an address belongs to, as a stable string: IPv4 as is (or `a.b.c.0/24` with a
 * shorter prefix), IPv6 as its `/prefix` network. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is IPv4.
 * Text that is not an address is returned unchanged.
 * @example
 * ```ts
 * import { normalizeAddress } from '@floodgate/http';
 *
 * normalizeAddress('2001:db8:1:2::7'); // '2001:db8:1::/56'
 * normalizeAddress('::ffff:192.0.2.7'); // '192.0.2.7'
 * normalizeAddress('192.0.2.7', 56, 24); // '192.0.2.0/24'
 * ```
 */
export function normalizeAddress(address: string, ipv6Prefix = 56, ipv4Prefix = 32): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return address;
  }
  const bits = parsed.kind() === 'ipv4' ? ipv4Prefix : ipv6Prefix;
  const full = parsed.kind() === 'ipv4' ? 32 : 128;
  if (bits >= full) {
    if (parsed.kind() === 'ipv6') (parsed as ipaddr.IPv6).zoneId = undefined;
    return parsed.toString();
  }
  const bytes = parsed.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.min(Math.max(bits - i * 8, 0), 8);
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
}

/**
 * The client address: the socket peer, or, through trusted proxies only, the nearest untrusted
 * address in `X-Forwarded-For`. `undefined` when the adapter knows no socket address.
 * @example
 * A key of your own: anonymous callers by address, signed-in ones not counted by this rule.
 * ```ts
 * import { clientAddress, compileTrust, type KeyFunction } from '@floodgate/http';
 *
 * const trust = compileTrust('loopback');
 * const anonymousIp: KeyFunction = (request) => {
 *   if (request.header('authorization') !== undefined) return undefined;
 *   const address = clientAddress(request, trust);
 *   return address === undefined ? undefined : `anon:${address}`;
 * };
 * ```
 */
export function clientAddress(request: RateLimitRequest, trust: TrustFunction): string | undefined {
  if (request.address === undefined) return undefined;
  const forwardedFor = request.header('x-forwarded-for');
  // proxy-addr reads exactly these two fields; the view supplies them for every adapter.
  const view = {
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    socket: { remoteAddress: request.address },
  };
  return proxyAddr(view as unknown as Parameters<typeof proxyAddr>[0], trust);
}

/**
 * Counts by client IP: `ip:<address or network>`. The key function throws
 * `FloodgateError('INVALID_KEY')` when the adapter knows no client address (fetch and Hono off
 * Node need `getAddress`).
 * @example
 * Behind a reverse proxy on the same host, with IPv6 clients counted per /64.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { ipKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * const perIp = rateLimit({ limiter, key: ipKey({ trustProxy: 'loopback', ipv6Prefix: 64 }) });
 * ```
 */
export function ipKey(options: IpKeyOptions = {}): KeyFunction {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'ipKey options must be an object');
  }
  for (const name of Object.keys(options)) {
    if (name !== 'trustProxy' && name !== 'ipv6Prefix' && name !== 'ipv4Prefix') {
      throw new FloodgateError('INVALID_OPTION', `ipKey: unknown option "${name}"`);
    }
  }
  const trust = compileTrust(options.trustProxy);
  const v6 = checkPrefix(options.ipv6Prefix, 56, 128, 'ipv6Prefix');
  const v4 = checkPrefix(options.ipv4Prefix, 32, 32, 'ipv4Prefix');
  return (request) => {
    const address = clientAddress(request, trust);
    if (address === undefined || address === '') {
      throw new FloodgateError(
        'INVALID_KEY',
        'ipKey: the client address is unknown; pass getAddress to the fetch/hono adapter, or use another key',
      );
    }
    return `ip:${normalizeAddress(address, v6, v4)}`;
  };
}
