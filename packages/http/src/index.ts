/**
 * `@floodgate/http`: what an app author uses beside an adapter (`/express`, `/fastify`, `/hono`,
 * `/node`, `/fetch`): the keys, the options, and the types a callback sees. The engine the
 * adapters are built on, for writing an adapter of your own, is `@floodgate/http/adapter`.
 */
export {
  combineKeys,
  firstKey,
  type HeaderKeyOptions,
  headerKey,
} from './keys/index.js';
export { type IpKeyOptions, ipKey } from './keys/ip.js';
export { routeKey } from './keys/route.js';
export type { ConcurrencyLimitOptions } from './shared/concurrency.js';
export type { TrustFunction, TrustProxy } from './shared/framework.js';
export { rateLimitOf } from './shared/ledger.js';
export type { RequestUsage, SettleContext, SettleOption } from './shared/settle-types.js';
export type {
  CostOption,
  JitterBound,
  JitterRange,
  KeyFunction,
  LimitedContext,
  LimitedResponse,
  LimiterChoice,
  PolicyChoice,
  ProblemDetails,
  ProblemPolicy,
  RateLimitOptions,
  RateLimitRequest,
  RateLimitRule,
} from './shared/types.js';
export { usageOf } from './shared/usage.js';
export type {
  RateLimitWarning,
  ValidateOption,
  WarningCode,
} from './shared/validations.js';
