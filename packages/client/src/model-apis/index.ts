/**
 * `@floodgate/client/model-apis`: the rate-limit headers of model APIs (OpenAI's
 * `x-ratelimit-*` and `retry-after-ms`, Anthropic's `anthropic-ratelimit-*`), read for the retry
 * loop (`modelApiDelay`, for `serverDelay`) and for pacing by requests and tokens per minute
 * (`ModelApiPacer`, for `pacing`). A subpath of its own, so that the main entry's bundle does not
 * carry it.
 */
export { modelApiDelay } from './delay.js';
export { estimateTokens, type TokenCost } from './estimate.js';
export { createModelApiPacer, ModelApiPacer, type ModelApiPacerOptions } from './pacer.js';
export {
  type ModelApiProvider,
  type ModelRateLimit,
  type ModelRateLimits,
  parseModelRateLimits,
} from './read.js';
