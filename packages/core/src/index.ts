export { Breaker, type BreakerOptions, type BreakerState } from './breaker.js';
export { toDecision } from './decision.js';
export { type Duration, parseDuration } from './duration.js';
export { FloodgateError, type FloodgateErrorCode, isFloodgateError } from './errors.js';
export { encodeIdentity, MAX_IDENTITY_BYTES, policyKey } from './keys.js';
export { createLimiter, type Limiter, type LimiterOptions } from './limiter.js';
export { LUA_SOURCES } from './lua.generated.js';
export { newVerdict, type Verdict } from './policies/common.js';
export { evaluatePolicy, type PolicyOutcome, type PolicyState } from './policies/evaluate.js';
export {
  type FixedWindowOptions,
  fixedWindow,
  type LeakyBucketOptions,
  leakyBucket,
  MAX_LOG_LIMIT,
  type SlidingWindowLogOptions,
  type SlidingWindowOptions,
  slidingWindow,
  slidingWindowLog,
  type TokenBucketOptions,
  tokenBucket,
} from './policies/factories.js';
export { fixedWindowKernel } from './policies/fixed_window.js';
export { POLICY_KINDS } from './policies/kinds.js';
export { slidingWindowKernel } from './policies/sliding_window.js';
export { slidingWindowLogKernel } from './policies/sliding_window_log.js';
export { bucketKernel } from './policies/token_bucket.js';
export { RedisScriptStore, type RedisStoreOptions } from './redis-store.js';
export {
  assembleScript,
  decodeScriptReply,
  encodeScriptArgs,
  LIMIT_SCRIPT,
  LIMIT_SCRIPT_SHA1,
  type LimitScript,
  type ScriptReply,
  scriptFor,
  scriptForKinds,
} from './script.js';
export { evaluateAll, type PolicyResult, type Store, type StoreCall } from './store.js';
export type { Decision, DecisionReason, Policy, PolicyDecision, PolicyKind } from './types.js';
