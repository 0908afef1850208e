/**
 * `@floodgate/http/adapter`: for writing an adapter of your own. The engine every adapter of this
 * package is a thin layer over, and the pieces it answers with: client address and proxy trust,
 * route canonicalization, headers, problem bodies, the queue delay. The options and request
 * types the engine takes are in `@floodgate/http`.
 */
export { clientAddress, compileTrust, normalizeAddress, stripPort } from '../keys/ip.js';
export { canonicalPath } from '../keys/route.js';
export {
  createEngine,
  type HoldSignal,
  type Outcome,
  type RateLimitEngine,
} from '../shared/engine.js';
export type { FrameworkSettings } from '../shared/framework.js';
export { queueDelay } from '../shared/hold.js';
export { parseJitter } from '../shared/options.js';
export {
  decisionHeaders,
  type HeaderSettings,
  mergeExposeHeaders,
  retryAfterSeconds,
  tooManyRequestsProblem,
  unavailableProblem,
} from '../shared/response.js';
export type { Settle } from '../shared/settle.js';
