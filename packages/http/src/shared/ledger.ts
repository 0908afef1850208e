import { type Decision, mergeDecisions } from '@floodgate/core';
import { createSlot } from './slot.js';

/**
 * What the limiters stacked on one request (an app-wide one and a route's own, say) decided so
 * far. Each limiter reports every decision in it, so a later one does not hide an earlier one's
 * policies, and the headers a response ends with are those of the last limiter that wrote any.
 */
interface Ledger {
  readonly decisions: Decision[];
  merged: Decision | undefined;
  /** The outcome whose headers describe every decision: the last one that set headers. */
  reporter: object | undefined;
}

// Keyed by the framework's own request object (`RateLimitRequest.raw`): the one object every
// middleware on the request sees, and that dies with it.
const ledgers = createSlot<Ledger>('floodgate.ledger');

const isObject = (value: unknown): value is object =>
  (typeof value === 'object' || typeof value === 'function') && value !== null;

/** The decisions recorded on `raw` before this one, oldest first. */
export function priorDecisions(raw: unknown): readonly Decision[] {
  return isObject(raw) ? (ledgers.get(raw)?.decisions ?? []) : [];
}

/** Records one limiter's decision on `raw`; `merged` is every decision so far as one. */
export function recordDecision(
  raw: unknown,
  own: Decision,
  merged: Decision,
  reporter: object | undefined,
): void {
  if (!isObject(raw)) return;
  let ledger = ledgers.get(raw);
  if (ledger === undefined) {
    ledger = { decisions: [], merged: undefined, reporter: undefined };
    ledgers.set(raw, ledger);
  }
  ledger.decisions.push(own);
  ledger.merged = merged;
  if (reporter !== undefined) ledger.reporter = reporter;
}

/** `own` merged with what earlier limiters on the request decided. */
export function withPrior(raw: unknown, own: Decision): Decision {
  const prior = priorDecisions(raw);
  return prior.length === 0 ? own : mergeDecisions([...prior, own]);
}

/**
 * Whether `outcome`'s headers are still the latest report for the request: false once a limiter
 * that ran after it (inside it) has written its own, which already include this one's policies.
 */
export function isLatestReport(raw: unknown, outcome: object): boolean {
  if (!isObject(raw)) return true;
  const reporter = ledgers.get(raw)?.reporter;
  return reporter === undefined || reporter === outcome;
}

/**
 * The rate-limit decision for a request: every limiter that ran on it, merged (the decision its
 * headers report). `undefined` when no limiter decided (skipped, failed open, or not limited).
 * Pass the framework's request object: Express / node:http `req`, Fastify `request`, Hono's
 * `Context`, or the fetch `Request`.
 * @example
 * A fetch handler telling its caller how much quota is left.
 * ```ts
 * import { rateLimitOf } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/fetch';
 * import type { Limiter } from '@floodgate/core';
 *
 * declare const limiter: Limiter;
 * const limit = rateLimit({ limiter, getAddress: (r) => r.headers.get('cf-connecting-ip') ?? undefined });
 * export default {
 *   fetch: limit.wrap(async (request) => Response.json({ left: rateLimitOf(request)?.remaining })),
 * };
 * ```
 * @public
 */
export function rateLimitOf(request: object): Decision | undefined {
  return ledgers.get(request)?.merged;
}
