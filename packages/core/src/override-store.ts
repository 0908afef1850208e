// The store side of `limiter.override`: an optional capability beside `Store`, as leases are.
// Decisions read overrides inside `evaluate` (the call's override keys, `StoreCall.overrides`);
// these two calls are the writes and reads an app makes when it sets, reads or clears one.
import type { PolicyState } from './policies/common.js';
import type { Store } from './store-types.js';

/**
 * What a store implements to hold per-identity overrides (`createLimiter({ overrides: true })`).
 * An override state is `[until, limit, ...params]`: until in epoch ms, the limit (0 blocks), the
 * policy's parameters under that limit (`Policy.params`, as many as its kind reads).
 * `MemoryStore`, every `RedisStore` and `ShardedStore` over such stores have it.
 * @example
 * Reading the override a limiter stored for one identity, straight from its store.
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { encodeIdentity, isOverrideStore, overrideKey, policyKey } from '@floodgate/core/store';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const store = new MemoryStore();
 * const policy = tokenBucket({ limit: 100, interval: '1m' });
 * const key = overrideKey(policyKey('api', encodeIdentity('user_42'), policy.id));
 * if (isOverrideStore(store)) {
 *   const [state] = await store.readOverrides([key]); // undefined: none in force
 * }
 * ```
 * @beta
 */
export interface OverrideStore {
  /**
   * Writes one identity's overrides in one atomic call: each key (an `overrideKey`; all share
   * the identity's hash tag) gets its state, expiring at its `until` on the store's clock, or is
   * deleted where the state is `null`.
   */
  writeOverrides(keys: readonly string[], states: readonly (PolicyState | null)[]): Promise<void>;
  /** Each key's override state, undefined where there is none or it has ended. */
  readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]>;
}

/**
 * True when the store can hold overrides (`OverrideStore`).
 * @example
 * ```ts
 * import { isOverrideStore, type Store } from '@floodgate/core/store';
 *
 * declare const store: Store;
 * if (!isOverrideStore(store)) console.warn('this store cannot hold overrides');
 * ```
 * @beta
 */
export function isOverrideStore(store: unknown): store is Store & OverrideStore {
  const s = store as Partial<OverrideStore> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.writeOverrides === 'function' &&
    typeof s.readOverrides === 'function'
  );
}
