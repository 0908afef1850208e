import { FloodgateError } from '@floodgate/core';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import type { KeyFunction, RateLimitRequest } from '../shared/types.js';

/** `(address, hop)` → trust this hop? `hop` 0 is the socket peer. */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Which proxies in front of the server may speak for the client through `X-Forwarded-For`, as in
 * Express: `true` (all), a hop count, CIDR ranges or the names `'loopback'`, `'linklocal'`,
 * `'uniquelocal'` (a list or a comma-separated string), or a function.
 */
export type TrustProxy = boolean | number | string | readonly string[] | TrustFunction;

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

/** Compiles the Express-style trust setting into proxy-addr's trust function. */
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
 * Counts by client IP: `ip:<address or network>`.
 * @example
 * rateLimit({ limiter, key: ipKey({ trustProxy: 'loopback', ipv6Prefix: 64 }) })
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
