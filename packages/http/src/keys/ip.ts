import { FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import type { TrustFunction, TrustProxy } from '../shared/framework.js';
import type { KeyFunction, RateLimitRequest } from '../shared/types.js';
import { runtimeName, warnOnce } from '../shared/validations.js';

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
 * @public
 */
export interface IpKeyOptions {
  /**
   * Trusted proxies. Without trust, `X-Forwarded-For` is ignored and the socket peer is the
   * client, so a client cannot pick its own key by sending the header. @default the
   * framework's own setting (Express `trust proxy`, Fastify `trustProxy`), else false
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
 * import { compileTrust } from '@floodgate/http/adapter';
 *
 * const trust = compileTrust(['loopback', '10.0.0.0/8']);
 * trust('10.1.2.3', 1); // true
 * trust('203.0.113.9', 1); // false
 * ```
 * @public
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
 * import { normalizeAddress } from '@floodgate/http/adapter';
 *
 * normalizeAddress('2001:db8:1:2::7'); // '2001:db8:1::/56'
 * normalizeAddress('::ffff:192.0.2.7'); // '192.0.2.7'
 * normalizeAddress('192.0.2.7', 56, 24); // '192.0.2.0/24'
 * ```
 * @public
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

// `ip:port` (IPv4) and `[v6]:port` / `[v6]` are how some proxies write the hop they saw. An
// unbracketed IPv6 address ends in `:digits` too, so only these two shapes lose a port.
const V4_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const V6_BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * An address as a proxy may have written it in `X-Forwarded-For`, without a port: `ip:port`
 * for IPv4 and `[v6]:port` (or `[v6]`) for IPv6. Anything else is returned unchanged.
 * @example
 * ```ts
 * import { stripPort } from '@floodgate/http/adapter';
 *
 * stripPort('203.0.113.9:40000'); // '203.0.113.9'
 * stripPort('[2001:db8::1]:40000'); // '2001:db8::1'
 * stripPort('2001:db8::1'); // '2001:db8::1'
 * ```
 * @public
 */
export function stripPort(address: string): string {
  const v4 = V4_PORT.exec(address);
  if (v4 && ipaddr.IPv4.isValidFourPartDecimal(v4[1]!)) return v4[1]!;
  const v6 = V6_BRACKETED.exec(address);
  if (v6 && ipaddr.IPv6.isValid(v6[1]!)) return v6[1]!;
  return address;
}

/**
 * The client address: the socket peer, or, through trusted proxies only, the nearest untrusted
 * address in `X-Forwarded-For` (ports that proxies wrote there removed). `undefined` when the
 * adapter knows no socket address. Warns once when the address is unknown, and when
 * `X-Forwarded-For` arrives from a peer that is not trusted.
 * @example
 * A key of your own: anonymous callers by address, signed-in ones not counted by this rule.
 * ```ts
 * import type { KeyFunction } from '@floodgate/http';
 * import { clientAddress, compileTrust } from '@floodgate/http/adapter';
 *
 * const trust = compileTrust('loopback');
 * const anonymousIp: KeyFunction = (request) => {
 *   if (request.header('authorization') !== undefined) return undefined;
 *   const address = clientAddress(request, trust);
 *   return address === undefined ? undefined : `anon:${address}`;
 * };
 * ```
 * @public
 */
export function clientAddress(request: RateLimitRequest, trust: TrustFunction): string | undefined {
  if (request.address === undefined || request.address === '') {
    warnOnce(
      request,
      'UNKNOWN_CLIENT_ADDRESS',
      `The client address is unknown on ${runtimeName()}: no socket address reached the rate limiter, so ipKey() cannot tell clients apart and answers with INVALID_KEY (a 503 under the default onLimiterError). Pass getAddress to rateLimit() of @floodgate/http/hono or /fetch (e.g. (c) => getConnInfo(c).remote.address, or a header only your edge sets), or use another key. (On node, Express and Fastify it means the connection closed before the limiter ran.)`,
    );
    return undefined;
  }
  const forwardedFor = request.header('x-forwarded-for');
  if (forwardedFor === undefined) return request.address;
  if (!trust(request.address, 0)) {
    const framework = request.framework?.name;
    warnOnce(
      request,
      'UNTRUSTED_X_FORWARDED_FOR',
      `An X-Forwarded-For header arrived from ${request.address}, which is not a trusted proxy, so the header is ignored: behind a proxy, every client then shares the proxy's bucket. If a proxy is in front, trust it with ipKey({ trustProxy })${framework === undefined ? '' : ` or ${framework}'s own trust setting`}; if not, a client wrote the header itself.`,
    );
    return request.address;
  }
  const hops = forwardedFor
    .split(',')
    .map((hop) => stripPort(hop.trim()))
    .join(', ');
  // proxy-addr reads exactly these two fields; the view supplies them for every adapter.
  const view = {
    headers: { 'x-forwarded-for': hops },
    socket: { remoteAddress: request.address },
  };
  return proxyAddr(view as unknown as Parameters<typeof proxyAddr>[0], trust);
}

// A framework's trust setting is read per request but changes rarely: compile each value once.
const frameworkTrust = new Map<unknown, TrustFunction>();

function trustOf(setting: TrustProxy | undefined): TrustFunction {
  let trust = frameworkTrust.get(setting);
  if (trust === undefined) {
    trust = compileTrust(setting);
    if (frameworkTrust.size >= 64) frameworkTrust.clear();
    frameworkTrust.set(setting, trust);
  }
  return trust;
}

/** How an ipKey reads the address: its own `trustProxy`, or (`undefined`) the framework's. */
export interface IpReading {
  readonly trust: TrustFunction | undefined;
}

// Recorded per ipKey so that the allow list reads the address the same way (allow-list.ts).
const readingOf = new WeakMap<KeyFunction, IpReading>();

/** The reading of `key` when it is an `ipKey()`, else `undefined`. */
export const ipReadingOf = (key: KeyFunction): IpReading | undefined => readingOf.get(key);

/** The client address as an ipKey with `reading` reads it; `undefined` when it is unknown. */
export function readClientAddress(
  request: RateLimitRequest,
  reading: IpReading,
): string | undefined {
  const address = clientAddress(request, reading.trust ?? trustOf(request.framework?.trustProxy));
  return address === undefined || address === '' ? undefined : stripPort(address);
}

const OPTION_NAMES = {
  trustProxy: true,
  ipv6Prefix: true,
  ipv4Prefix: true,
} as const satisfies OptionNames<IpKeyOptions>;

/**
 * Counts by client IP: `ip:<address or network>`. Without a `trustProxy` of its own it follows
 * the framework's trust setting (Express `app.set('trust proxy', …)`, Fastify's `trustProxy`),
 * else trusts no proxy. The key function throws `FloodgateError('INVALID_KEY')` when the adapter
 * knows no client address (fetch and Hono off Node need `getAddress`).
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
 * @public
 */
export function ipKey(options: IpKeyOptions = {}): KeyFunction {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'ipKey options must be an object');
  }
  checkOptions('ipKey', options, OPTION_NAMES);
  const own = options.trustProxy;
  const ownTrust = own === undefined ? undefined : compileTrust(own);
  const v6 = checkPrefix(options.ipv6Prefix, 56, 128, 'ipv6Prefix');
  const v4 = checkPrefix(options.ipv4Prefix, 32, 32, 'ipv4Prefix');
  const keyFunction: KeyFunction = (request) => {
    const setting = own ?? request.framework?.trustProxy;
    const trust = ownTrust ?? trustOf(setting);
    const address = clientAddress(request, trust);
    if (address === undefined || address === '') {
      throw new FloodgateError(
        'INVALID_KEY',
        'ipKey: the client address is unknown; pass getAddress to the fetch/hono adapter, or use another key',
      );
    }
    const key = `ip:${normalizeAddress(stripPort(address), v6, v4)}`;
    // Warned last, once the key is known: the trust setting then travels one way, compiled,
    // applied, and only then reported on.
    if (setting === true) {
      const where = own === undefined ? `${request.framework?.name}'s trust setting` : 'ipKey';
      warnOnce(
        request,
        'PERMISSIVE_TRUST_PROXY',
        `trustProxy is true in ${where}: the leftmost X-Forwarded-For entry is taken as the client, and any client can write it, so each request can name a fresh bucket. Trust a hop count or your proxies' addresses instead.`,
      );
    }
    return key;
  };
  readingOf.set(keyFunction, { trust: ownTrust });
  return keyFunction;
}
