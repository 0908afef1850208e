export { Breaker, type BreakerOptions, type BreakerState } from './breaker.js';
export { type Duration, parseDuration } from './duration.js';
export { FloodgateError, type FloodgateErrorCode, isFloodgateError } from './errors.js';
export { encodeIdentity, MAX_IDENTITY_BYTES, policyKey } from './keys.js';
export { createLimiter, type Limiter, type LimiterOptions, toDecision } from './limiter.js';
export { LIMIT_SCRIPT, LUA_SOURCES } from './lua.generated.js';
export { evaluatePolicy, type PolicyOutcome, type PolicyState } from './policies/evaluate.js';
export {
  type FixedWindowOptions,
  fixedWindow,
  type LeakyBucketOptions,
  leakyBucket,
  type SlidingWindowLogOptions,
  type SlidingWindowOptions,
  slidingWindow,
  slidingWindowLog,
  type TokenBucketOptions,
  tokenBucket,
} from './policies/factories.js';
export { RedisScriptStore, type RedisStoreOptions } from './redis-store.js';
export {
  decodeScriptReply,
  encodeScriptArgs,
  LIMIT_SCRIPT_SHA1,
  type ScriptReply,
} from './script.js';
export { evaluateAll, type PolicyResult, type Store, type StoreCall } from './store.js';
export type { Decision, DecisionReason, Policy, PolicyDecision, PolicyKind } from './types.js';
