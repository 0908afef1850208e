import type { RateLimitRequest } from './types.js';

/**
 * The view with `address` read from `address()` when a key first asks for it, inside the
 * decision: a `getAddress` that throws is then a limiter error (`onLimiterError`, `onError`)
 * rather than an unanswered request, and one that no key needs is never called.
 */
export function lazyAddress<Raw>(
  view: Omit<RateLimitRequest<Raw>, 'address'>,
  address: () => string | undefined,
): RateLimitRequest<Raw> {
  let known = false;
  let value: string | undefined;
  return Object.defineProperty(view, 'address', {
    enumerable: true,
    get() {
      if (!known) {
        value = address();
        known = true;
      }
      return value;
    },
  }) as RateLimitRequest<Raw>;
}
