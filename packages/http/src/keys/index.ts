import { FloodgateError } from '@floodgate/core';
import type { KeyFunction } from '../shared/types.js';

/**
 * Counts by the value of a request header, such as an API key: `header:<name>:<value>`. A
 * request without the header is not counted by this key's rule (see `firstKey` for a fallback).
 * @example
 * Per API key; callers that send none are counted per IP.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { firstKey, headerKey, ipKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * const limitByKey = rateLimit({ limiter, key: firstKey(headerKey('x-api-key'), ipKey()) });
 * ```
 */
export function headerKey(name: string): KeyFunction {
  if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `headerKey needs a header name, got ${JSON.stringify(name)}`,
    );
  }
  const lower = name.toLowerCase();
  return (request) => {
    const value = request.header(lower);
    return value === undefined || value === '' ? undefined : `header:${lower}:${value}`;
  };
}

/**
 * Counts by route: `route:<METHOD> <pattern>`, the matched pattern where the framework knows it
 * (Fastify; Express when mounted on the route), else the path. Combine it with a client key to
 * protect one endpoint per client, or use it alone to cap an endpoint for everyone.
 * @example
 * Each client gets its own allowance per endpoint.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { combineKeys, ipKey, routeKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * const perRoutePerIp = rateLimit({ limiter, key: combineKeys(routeKey(), ipKey()) });
 * ```
 */
export function routeKey(): KeyFunction {
  return (request) => `route:${request.method.toUpperCase()} ${request.route ?? request.path}`;
}

function checkKeys(keys: readonly KeyFunction[], what: string): void {
  if (keys.length === 0 || keys.some((k) => typeof k !== 'function')) {
    throw new FloodgateError('INVALID_OPTION', `${what} needs one or more key functions`);
  }
}

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
 * // `route:GET /search|header:x-api-key:k_123`; requests without an API key are not counted.
 * const perRoutePerKey: KeyFunction = combineKeys(routeKey(), headerKey('x-api-key'));
 * ```
 */
export function combineKeys(...keys: KeyFunction[]): KeyFunction {
  checkKeys(keys, 'combineKeys');
  return async (request) => {
    const parts: string[] = [];
    for (const key of keys) {
      const part = await key(request);
      if (part === undefined) return undefined;
      parts.push(escapePart(part));
    }
    return parts.join('|');
  };
}

/**
 * The first key that has a value: e.g. the API key when one is sent, else the IP. Keys carry
 * their kind (`header:…`, `ip:…`), so a client cannot send an API key that names someone's IP.
 * @example
 * ```ts
 * import { firstKey, headerKey, ipKey, type KeyFunction } from '@floodgate/http';
 *
 * // `header:x-api-key:<key>` when the header is sent, else `ip:<address>`.
 * const apiKeyOrIp: KeyFunction = firstKey(headerKey('x-api-key'), ipKey());
 * ```
 */
export function firstKey(...keys: KeyFunction[]): KeyFunction {
  checkKeys(keys, 'firstKey');
  return async (request) => {
    for (const key of keys) {
      const value = await key(request);
      if (value !== undefined) return value;
    }
    return undefined;
  };
}
