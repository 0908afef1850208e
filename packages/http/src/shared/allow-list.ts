import { FloodgateError } from '@floodgate/core';
import ipaddr from 'ipaddr.js';
import { keyParts } from '../keys/index.js';
import { type IpReading, ipReadingOf, readClientAddress } from '../keys/ip.js';
import type { KeyFunction, RateLimitRequest } from './types.js';
import { warnOnce } from './validations.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = readonly [Address, number];

/**
 * The allow list, compiled once: address ranges (an address alone is a range of one) checked
 * against the trusted client address, and identities checked against the keys the rules compute.
 */
export interface AllowList {
  /** Whether the request's client address is in a listed range. */
  addressAllowed(request: RateLimitRequest): boolean;
  /** Whether one of the computed keys is listed. */
  keyAllowed(keys: readonly (string | undefined)[]): boolean;
  /** Whether any identity is listed: only then are keys computed before any rule is charged. */
  readonly hasKeys: boolean;
}

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is the IPv4 address it maps. */
function unmap(address: Address, bits: number): Range {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return [(address as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
  }
  return [address, bits];
}

/** An address or CIDR range, or `undefined` when the entry is neither (an identity). */
function parseRange(entry: string): Range | undefined {
  if (entry.includes('/')) {
    if (!ipaddr.isValidCIDR(entry)) return undefined;
    const [address, bits] = ipaddr.parseCIDR(entry);
    return unmap(address, bits);
  }
  if (!ipaddr.isValid(entry)) return undefined;
  const address = ipaddr.parse(entry);
  return unmap(address, address.kind() === 'ipv4' ? 32 : 128);
}

function inRange(address: Address, [base, bits]: Range): boolean {
  return address.kind() === base.kind() && address.match(base as never, bits);
}

// An ipKey that follows the framework's trust setting: all such ipKeys read alike.
const FRAMEWORK: IpReading = { trust: undefined };

/**
 * Every way the rules' keys read the client address: one per ipKey found in them, inside
 * `firstKey` and `combineKeys` at any depth. A key function of the app's own is opaque.
 */
function readingsOf(keys: readonly KeyFunction[]): IpReading[] {
  const found = new Set<IpReading>();
  const visit = (key: KeyFunction): void => {
    const reading = ipReadingOf(key);
    if (reading !== undefined) found.add(reading.trust === undefined ? FRAMEWORK : reading);
    for (const part of keyParts(key) ?? []) visit(part);
  };
  for (const key of keys) visit(key);
  return [...found];
}

function parseAddress(seen: string | undefined): Address | undefined {
  return seen === undefined || !ipaddr.isValid(seen) ? undefined : unmap(ipaddr.parse(seen), 0)[0];
}

/**
 * Compiles `allowList`. Entries that read as an IP address or CIDR range (`203.0.113.7`,
 * `10.0.0.0/8`, `2001:db8::/32`) match the client address as every `ipKey()` in the rules' keys
 * reads it (composed ones included): a request is listed only when each reading is. Without a
 * visible ipKey, the framework's trust setting reads it, and a listed peer that forwards
 * `X-Forwarded-For` is warned about (`ALLOW_LIST_WITHOUT_IP_KEY`). Every other entry is an
 * identity, matched against the key any rule computes (`'user:42'`, `'ip:203.0.113.7'`). Throws
 * `FloodgateError('INVALID_OPTION')` on a list that is not an array of non-empty strings.
 */
export function compileAllowList(
  list: readonly string[] | undefined,
  keys: readonly KeyFunction[],
): AllowList | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list) || list.some((e) => typeof e !== 'string' || e.trim() === '')) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'allowList must be an array of IP addresses, CIDR ranges or identities (non-empty strings)',
    );
  }
  const ranges: Range[] = [];
  const identities = new Set<string>();
  for (const entry of list as readonly string[]) {
    const range = parseRange(entry.trim());
    if (range === undefined) identities.add(entry);
    else ranges.push(range);
  }
  if (ranges.length === 0 && identities.size === 0) return undefined;
  const readings = readingsOf(keys);
  const visible = readings.length > 0;
  const listed = (address: Address | undefined): boolean =>
    address !== undefined && ranges.some((range) => inRange(address, range));
  return {
    hasKeys: identities.size > 0,
    keyAllowed: (computed) => computed.some((k) => k !== undefined && identities.has(k)),
    addressAllowed(request) {
      if (ranges.length === 0) return false;
      if (!visible) {
        const seen = readClientAddress(request, FRAMEWORK);
        if (!listed(parseAddress(seen))) return false;
        // Listed as the peer while it speaks for others: what a listed proxy looks like.
        if (seen === request.address && request.header('x-forwarded-for') !== undefined) {
          const framework = request.framework?.name;
          warnOnce(
            request,
            'ALLOW_LIST_WITHOUT_IP_KEY',
            `allowList matched ${seen}, a peer that forwards X-Forwarded-For, because no key of this middleware holds an ipKey() to say which proxies to trust (an ipKey inside a key function of your own cannot be seen): behind a proxy, listing the proxy lists every client behind it. Compose the key with firstKey() or combineKeys() around ipKey({ trustProxy })${framework === undefined ? '' : `, or set ${framework}'s trust setting`}.`,
          );
        }
        return true;
      }
      // Each ipKey's reading must be listed: a request is never let through on a reading that
      // one of its rules does not use to count it.
      for (const reading of readings) {
        if (!listed(parseAddress(readClientAddress(request, reading)))) return false;
      }
      return true;
    },
  };
}
