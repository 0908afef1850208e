export { Breaker, type BreakerOptions, type BreakerState } from './breaker.js';
export { toDecision } from './decision.js';
export { type Duration, parseDuration } from './duration.js';
export { FloodgateError, type FloodgateErrorCode, isFloodgateError } from './errors.js';
export { encodeIdentity, MAX_IDENTITY_BYTES, policyKey } from './keys.js';
export { createLimiter, type Limiter, type LimiterOptions } from './limiter.js';
export { mergeDecisions } from './merge.js';
export type { PolicyOutcome, PolicyState } from './policies/common.js';
export { newVerdict, type Verdict } from './policies/common.js';
export { evaluatePolicy } from './policies/compose.js';
export { type FixedWindowOptions, fixedWindow } from './policies/fixed_window.js';
export { POLICY_KINDS } from './policies/kinds.js';
export { type LeakyBucketOptions, leakyBucket } from './policies/leaky_bucket.js';
export { type SlidingWindowOptions, slidingWindow } from './policies/sliding_window.js';
export {
  MAX_LOG_LIMIT,
  type SlidingWindowLogOptions,
  slidingWindowLog,
} from './policies/sliding_window_log.js';
export { type TokenBucketOptions, tokenBucket } from './policies/token_bucket.js';
export { evaluateAll, type PolicyResult, type Store, type StoreCall } from './store.js';
export type { Decision, DecisionReason, Policy, PolicyDecision, PolicyKind } from './types.js';
