/**
 * `@floodgate/client`: the caller's side of the 429 contract. Back off the way the server asked
 * (`Retry-After`, `RateLimit`), spread out by jitter, within a budget, optionally paced.
 */
export type { Jitter } from './backoff.js';
export { createRetryBudget, RetryBudget, type RetryBudgetOptions } from './budget.js';
export {
  isRetryBodyNotReplayableError,
  isRetryDeadlineError,
  isRetryDelayTooLongError,
  isRetryError,
  RetryBodyNotReplayableError,
  RetryDeadlineError,
  RetryDelayTooLongError,
  RetryError,
  type RetryErrorCode,
  type RetryErrorDetails,
  RetryLater,
} from './errors.js';
export { type FetchLike, type FetchRetryOptions, fetchWithRetry, withRetry } from './fetch.js';
export type { RetryEvent, RetryOptions, RetryReason } from './options.js';
export { createPacer, Pacer, type PacerOptions, type PaceSlot } from './pacing.js';
export { type RetryContext, type RetryFnOptions, retry } from './retry.js';
export {
  type DelaySource,
  type ServerDelay,
  type ServerDelayReader,
  serverDelay,
} from './server-delay.js';
