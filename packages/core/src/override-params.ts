// What a policy runs on under an overridden limit: the policy rebuilt by its own factory with the
// new limit and everything that says what it counts as it was (kind, name, window or interval,
// calendar). The factory checks the limit as it checks a configured one (a log's MAX_LOG_LIMIT,
// integers below 2^53), and the stores get parameters in the very shape their arithmetic reads.
import { FloodgateError, isFloodgateError } from './errors.js';
import { fixedWindow } from './policies/fixed_window.js';
import type { PolicyKind } from './policies/kinds.js';
import { leakyBucket } from './policies/leaky_bucket.js';
import { quota } from './policies/quota.js';
import { slidingWindow } from './policies/sliding_window.js';
import { slidingWindowLog } from './policies/sliding_window_log.js';
import { tokenBucket } from './policies/token_bucket.js';
import type { Policy } from './types.js';

// One entry per kind (the type refuses a kind without one). A bucket keeps its burst or queue
// unless it was the limit (the default), which then follows the new limit: raising a plan's rate
// raises its default burst with it, and an explicit burst stays the burst the app chose.
const REBUILD: { readonly [K in PolicyKind]: (p: Policy, limit: number) => Policy } = {
  fixedWindow: (p, limit) => fixedWindow({ limit, window: p.windowMs, name: p.name }),
  slidingWindow: (p, limit) => slidingWindow({ limit, window: p.windowMs, name: p.name }),
  slidingWindowLog: (p, limit) => slidingWindowLog({ limit, window: p.windowMs, name: p.name }),
  tokenBucket: (p, limit) =>
    tokenBucket({
      limit,
      interval: p.windowMs,
      burst: p.capacity === p.limit ? limit : p.capacity,
      name: p.name,
    }),
  leakyBucket: (p, limit) =>
    leakyBucket({
      limit,
      interval: p.windowMs,
      queue: p.capacity - 1 === p.limit ? limit : p.capacity - 1,
      name: p.name,
    }),
  quota: (p, limit) =>
    quota({ limit, per: p.calendar!.per, timeZone: p.calendar!.timeZone, name: p.name }),
};

/**
 * The parameters `policy` runs on with `limit` instead of its own (a positive safe integer,
 * checked by the caller): `Policy.params` of the rebuilt policy, as many as its kind reads.
 * A limit the factory refuses is `INVALID_OVERRIDE`, with the factory's reason.
 */
export function paramsForLimit(policy: Policy, limit: number, count: number): number[] {
  try {
    return REBUILD[policy.kind](policy, limit).params.slice(0, count) as number[];
  } catch (error) {
    if (!isFloodgateError(error)) throw error;
    throw new FloodgateError(
      'INVALID_OVERRIDE',
      `override of "${policy.name}" to ${limit}: ${error.message}`,
    );
  }
}
