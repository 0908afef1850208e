/**
 * `@floodgate/core/store`: what the author of a store needs. The `Store` contract, the key
 * naming every store shares, the reference evaluation an in-process store runs, and the circuit
 * breaker a store that spreads keys over parts (`ShardedStore`) puts around each part. An app
 * that only configures a limiter imports `@floodgate/core`, never this.
 * @module
 */
export { Breaker, type BreakerState } from './breaker.js';
export { toDecision } from './decision.js';
export { blockKey, encodeIdentity, MAX_IDENTITY_BYTES, overrideKey, policyKey } from './keys.js';
export {
  isLeaseStore,
  type LeaseGrant,
  type LeaseRef,
  type LeaseRequest,
  type LeaseStore,
} from './lease-types.js';
export { isOverrideStore, type OverrideStore } from './override-store.js';
export type { PolicyOutcome, PolicyState } from './policies/common.js';
export { evaluateAll, evaluatePolicy, type StateWrite } from './policies/compose.js';
export { POLICY_KINDS } from './policies/kinds.js';
export { legacyPolicyId, type MigrateKeysFrom } from './policies/migrate.js';
export { MAX_LOG_LIMIT } from './policies/sliding_window_log.js';
export type { PolicyResult, Store, StoreCall, StoreChange } from './store-types.js';
