import type { RateLimitRequest } from './types.js';

/**
 * The view with `address` read from `address()` when a key first asks for it, inside the
 * decision: a `getAddress` that throws is then a limiter error (`onLimiterError`, `onError`)
 * rather than an unanswered request, and one that no key needs is never called.
 * A new literal with a getter (not `defineProperty` on the given view): made on every request,
 * and defining a property on an existing object is many times slower. Same fields, same order.
 */
export function lazyAddress<Raw>(
  view: Omit<RateLimitRequest<Raw>, 'address'>,
  address: () => string | undefined,
): RateLimitRequest<Raw> {
  let known = false;
  let value: string | undefined;
  return {
    method: view.method,
    path: view.path,
    route: view.route,
    header: view.header,
    raw: view.raw,
    get address() {
      if (!known) {
        value = address();
        known = true;
      }
      return value;
    },
  };
}
