/**
 * `@floodgate/http`: the keys, the shared types and the framework-agnostic core that every
 * adapter (`/express`, `/fastify`, `/hono`, `/node`, `/fetch`) is a thin layer over.
 */
export {
  combineKeys,
  firstKey,
  type HeaderKeyOptions,
  headerKey,
} from './keys/index.js';
export {
  clientAddress,
  compileTrust,
  type IpKeyOptions,
  ipKey,
  normalizeAddress,
  stripPort,
  type TrustFunction,
  type TrustProxy,
} from './keys/ip.js';
export { canonicalPath, type FrameworkSettings, routeKey } from './keys/route.js';
export {
  createEngine,
  type HoldSignal,
  type Outcome,
  type RateLimitEngine,
} from './shared/engine.js';
export { queueDelay } from './shared/hold.js';
export { rateLimitOf } from './shared/ledger.js';
export { parseJitter } from './shared/options.js';
export {
  decisionHeaders,
  type HeaderSettings,
  mergeExposeHeaders,
  retryAfterSeconds,
  tooManyRequestsProblem,
  unavailableProblem,
} from './shared/response.js';
export type {
  CostOption,
  JitterBound,
  JitterRange,
  KeyFunction,
  LimitedContext,
  LimitedResponse,
  LimiterChoice,
  ProblemDetails,
  ProblemPolicy,
  RateLimitOptions,
  RateLimitRequest,
  RateLimitRule,
} from './shared/types.js';
export type {
  RateLimitWarning,
  ValidateOption,
  WarningCode,
} from './shared/validations.js';
