// What a ShardedStore hands a shard: the limiter's call, or a copy with the sharded store's own
// (earlier) deadline; and, for a shard that may hold calls back while it is busy, how to read
// when that call's caller stops waiting (`Store.waitUntil`).
import type { Store, StoreCall } from '@floodgate/core/store';

/** A shard's reading of when the caller of a call it was given stops waiting. */
export type Until = () => number | undefined;

/** `call` with another deadline; the limiter's call object may be a class, so fields are copied. */
export function withDeadline(call: StoreCall, deadline: number): StoreCall {
  const copy: StoreCall = {
    keys: call.keys,
    policies: call.policies,
    cost: call.cost,
    mode: call.mode,
    deadline,
    // The override and 0.1 keys are among `keys`: the shard must know to read them.
    ...(call.overrides === true ? { overrides: true } : {}),
    ...(call.migrate === undefined ? {} : { migrate: call.migrate }),
    ...(call.costs === undefined ? {} : { costs: call.costs }),
    // Its caller reads the sharded store's `waitUntil`, which asks the shard's.
    ...(call.extendable === true ? { extendable: true } : {}),
  };
  if (call.identity === undefined) return copy;
  return { ...copy, identity: call.identity, prefix: call.prefix };
}

/**
 * How to read the shard's `waitUntil` for `sent`, when its caller asks (`StoreCall.extendable`)
 * and the shard's store has one; undefined otherwise (the call's deadline stands).
 */
export function untilOn(store: Store, sent: StoreCall): Until | undefined {
  if (sent.extendable !== true || typeof store.waitUntil !== 'function') return undefined;
  return () => store.waitUntil!(sent);
}
