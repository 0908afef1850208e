import { FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import type { KeyFunction, RateLimitRequest } from '../shared/types.js';
import { warnOnce } from '../shared/validations.js';

/**
 * The options of {@link headerKey}.
 * @example
 * ```ts
 * import type { HeaderKeyOptions } from '@floodgate/http';
 *
 * declare const apiKeys: { has(key: string): Promise<boolean> };
 * const options: HeaderKeyOptions = { verify: (value) => apiKeys.has(value) };
 * ```
 * @public
 */
export interface HeaderKeyOptions<Raw = unknown> {
  /**
   * Is this value a real credential? Only a verified value names a bucket; any other value is
   * treated as no header, so `firstKey` falls through to the next key. Without it, a client
   * makes itself a fresh bucket per request by inventing values. @default none (warns once)
   */
  verify?: (value: string, request: RateLimitRequest<Raw>) => boolean | Promise<boolean>;
}

const OPTION_NAMES = { verify: true } as const satisfies OptionNames<HeaderKeyOptions>;

/**
 * Counts by the value of a request header, such as an API key: `header:<name>:<value>`. A
 * request without the header, or whose value `verify` rejects, is not counted by this key's
 * rule: give a fallback with `firstKey`, so that unverified traffic is still limited per IP.
 * @example
 * Per verified API key; callers without a valid one are counted per IP, so an anonymous client
 * cannot escape the limit by sending a new made-up key on each request.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { firstKey, headerKey, ipKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * declare const apiKeys: { has(key: string): Promise<boolean> };
 * const apiKey = headerKey('x-api-key', { verify: (value) => apiKeys.has(value) });
 * const limitByKey = rateLimit({ limiter, key: firstKey(apiKey, ipKey()) });
 * ```
 * @public
 */
export function headerKey<Raw = unknown>(
  name: string,
  options: HeaderKeyOptions<Raw> = {},
): KeyFunction<Raw> {
  if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `headerKey needs a header name, got ${JSON.stringify(name)}`,
    );
  }
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'headerKey options must be an object');
  }
  checkOptions('headerKey', options, OPTION_NAMES);
  const { verify } = options;
  if (verify !== undefined && typeof verify !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'headerKey: verify must be a function');
  }
  const lower = name.toLowerCase();
  return async (request) => {
    const value = request.header(lower);
    if (value === undefined || value === '') return undefined;
    if (verify === undefined) {
      warnOnce(
        request,
        'UNVERIFIED_HEADER_KEY',
        `headerKey('${lower}') has no verify option, so every value a client makes up is a new bucket: a client escapes the limit by sending a different value per request. Pass headerKey('${lower}', { verify }) and a per-IP fallback: firstKey(headerKey(...), ipKey()).`,
      );
    } else if ((await verify(value, request)) !== true) {
      return undefined;
    }
    return `header:${lower}:${value}`;
  };
}

function checkKeys(keys: readonly KeyFunction[], what: string): void {
  if (keys.length === 0 || keys.some((k) => typeof k !== 'function')) {
    throw new FloodgateError('INVALID_OPTION', `${what} needs one or more key functions`);
  }
}

// What each composed key is made of, so the allow list finds the ipKeys inside it (at any depth)
// and reads the client address as they do.
const partsOf = new WeakMap<KeyFunction, readonly KeyFunction[]>();

/** The keys `key` was composed of by `firstKey` or `combineKeys`, else `undefined`. */
export const keyParts = (key: KeyFunction): readonly KeyFunction[] | undefined => partsOf.get(key);

// `|` joins the parts, so a part's own `|` (and the escape) is escaped: two different lists of
// parts never give one key.
const escapePart = (part: string): string => part.replace(/[\\|]/g, (c) => `\\${c}`);

/**
 * One key from several: counts the combination (e.g. per route per IP). When any part has no
 * value, the rule does not apply.
 * @example
 * ```ts
 * import { combineKeys, headerKey, type KeyFunction, routeKey } from '@floodgate/http';
 *
 * declare const apiKeys: { has(key: string): boolean };
 * // `route:GET /search|header:x-api-key:k_123`; requests without a valid API key are not counted.
 * const apiKey = headerKey('x-api-key', { verify: (value) => apiKeys.has(value) });
 * const perRoutePerKey: KeyFunction = combineKeys(routeKey(), apiKey);
 * ```
 * @public
 */
export function combineKeys(...keys: KeyFunction[]): KeyFunction {
  checkKeys(keys, 'combineKeys');
  const combined: KeyFunction = async (request) => {
    const parts: string[] = [];
    for (const key of keys) {
      const part = await key(request);
      if (part === undefined) return undefined;
      parts.push(escapePart(part));
    }
    return parts.join('|');
  };
  partsOf.set(combined, [...keys]);
  return combined;
}

/**
 * The first key that has a value: e.g. the API key when one is sent, else the IP. Keys carry
 * their kind (`header:…`, `ip:…`), so a client cannot send an API key that names someone's IP.
 * @example
 * ```ts
 * import { firstKey, headerKey, ipKey, type KeyFunction } from '@floodgate/http';
 *
 * declare const apiKeys: { has(key: string): Promise<boolean> };
 * // `header:x-api-key:<key>` when a valid key is sent, else `ip:<address>`.
 * const apiKey = headerKey('x-api-key', { verify: (value) => apiKeys.has(value) });
 * const apiKeyOrIp: KeyFunction = firstKey(apiKey, ipKey());
 * ```
 * @public
 */
export function firstKey(...keys: KeyFunction[]): KeyFunction {
  checkKeys(keys, 'firstKey');
  const first: KeyFunction = async (request) => {
    for (const key of keys) {
      const value = await key(request);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  partsOf.set(first, [...keys]);
  return first;
}
