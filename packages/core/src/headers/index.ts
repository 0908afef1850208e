/**
 * `@floodgate/core/headers`: the HTTP side of a decision. Kept apart from the main entry so a
 * client (which only reads headers) does not pull in the limiter.
 */
export type { FormatRateLimitHeadersOptions, RateLimitStandard } from './format.js';
export { formatRateLimitHeaders } from './format.js';
export type { ParsedRateLimit, RateLimitHeadersInput } from './parse.js';
export { parseRateLimitHeaders } from './parse.js';
export { formatRetryAfter, parseRetryAfter } from './retry-after.js';
