import { FloodgateError } from '@floodgate/core';
import ipaddr from 'ipaddr.js';
import { trustedClientAddress } from '../keys/ip.js';
import type { KeyFunction, RateLimitRequest } from './types.js';

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

/**
 * Compiles `allowList`. Entries that read as an IP address or CIDR range (`203.0.113.7`,
 * `10.0.0.0/8`, `2001:db8::/32`) match the client address, read with the `trustProxy` of the
 * middleware's `key` when that is an `ipKey()`, else with the framework's trust setting; every
 * other entry is an identity, matched against the key any rule computes (`'user:42'`,
 * `'ip:203.0.113.7'`). Throws `FloodgateError('INVALID_OPTION')` on a list that is not an array
 * of non-empty strings.
 */
export function compileAllowList(
  list: readonly string[] | undefined,
  key: KeyFunction | undefined,
): AllowList | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list) || list.some((e) => typeof e !== 'string' || e.trim() === '')) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'allowList must be an array of IP addresses, CIDR ranges or identities (non-empty strings)',
    );
  }
  const ranges: Range[] = [];
  const keys = new Set<string>();
  for (const entry of list as readonly string[]) {
    const range = parseRange(entry.trim());
    if (range === undefined) keys.add(entry);
    else ranges.push(range);
  }
  if (ranges.length === 0 && keys.size === 0) return undefined;
  return {
    hasKeys: keys.size > 0,
    keyAllowed: (computed) => computed.some((k) => k !== undefined && keys.has(k)),
    addressAllowed(request) {
      if (ranges.length === 0) return false;
      const seen = trustedClientAddress(request, key);
      if (seen === undefined || !ipaddr.isValid(seen)) return false;
      const address = unmap(ipaddr.parse(seen), 0)[0];
      return ranges.some((range) => inRange(address, range));
    },
  };
}
