// Kept for existing imports: each factory lives next to its reference, policies/<kind>.ts.
export { type FixedWindowOptions, fixedWindow } from './fixed_window.js';
export { type LeakyBucketOptions, leakyBucket } from './leaky_bucket.js';
export { type SlidingWindowOptions, slidingWindow } from './sliding_window.js';
export {
  MAX_LOG_LIMIT,
  type SlidingWindowLogOptions,
  slidingWindowLog,
} from './sliding_window_log.js';
export { type TokenBucketOptions, tokenBucket } from './token_bucket.js';
