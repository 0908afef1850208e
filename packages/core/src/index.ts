// `@floodgate/core`: what an app author uses. Store authors import `@floodgate/core/store`,
// Redis-protocol store authors `@floodgate/core/redis`, header formatting lives in
// `@floodgate/core/headers`.
export type { BreakerOptions } from './breaker.js';
export type { DecisionEvent } from './decision-event.js';
export { type Duration, parseDuration } from './duration.js';
export { FloodgateError, type FloodgateErrorCode, isFloodgateError } from './errors.js';
export { createLimiter } from './limiter.js';
export type {
  BlockCacheOptions,
  Limiter,
  LimiterOptions,
  RefundOptions,
  ReservingLimiter,
  WaitOptions,
} from './limiter-types.js';
export { mergeDecisions } from './merge.js';
export type {
  LimiterOverrides,
  LimiterWithOverrides,
  OverrideOptions,
  StoredOverride,
} from './override-types.js';
export { type FixedWindowOptions, fixedWindow } from './policies/fixed_window.js';
export { type LeakyBucketOptions, leakyBucket } from './policies/leaky_bucket.js';
export { type QuotaOptions, quota } from './policies/quota.js';
export { type SlidingWindowOptions, slidingWindow } from './policies/sliding_window.js';
export { type SlidingWindowLogOptions, slidingWindowLog } from './policies/sliding_window_log.js';
export { type TokenBucketOptions, tokenBucket } from './policies/token_bucket.js';
export type { Cost, Reservation, ReserveOptions } from './reserve-types.js';
export type { Decision, DecisionReason, Policy, PolicyDecision, PolicyKind } from './types.js';
