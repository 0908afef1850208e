import { type Decision, mergeDecisions } from '@floodgate/core';
import { exposeNamesOf } from './expose.js';
import { heldCount, queueDelay, releaseHold, reserveHold } from './hold.js';
import { recordDecision, withPrior } from './ledger.js';
import { resolveOptions, type Settings } from './options.js';
import { tooManyRequestsBody } from './problem-body.js';
import { report } from './report.js';
import { decisionHeaders, tooManyRequestsProblem, unavailableProblem } from './response.js';
import { ALLOWED, evaluateRules, shadowed } from './rules.js';
import { type Charge, type Settle, type Settler, settlerFor } from './settle.js';
import type { LimitedResponse, RateLimitOptions, RateLimitRequest } from './types.js';
import { bindValidator } from './validations.js';

/**
 * What an adapter does with a request: pass it on (after `delayMs`, for leaky-bucket shaping)
 * with `headers` on its response, or answer it now.
 * @example
 * The node:http side of an adapter: apply an outcome to a response.
 * ```ts
 * import type { ServerResponse } from 'node:http';
 * import type { Outcome } from '@floodgate/http/adapter';
 *
 * function apply(res: ServerResponse, outcome: Outcome): boolean {
 *   for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
 *   if (outcome.action === 'next') return true; // go on, after outcome.delayMs
 *   res.writeHead(outcome.status).end(outcome.body);
 *   return false;
 * }
 * ```
 * @public
 */
export type Outcome =
  | {
      readonly action: 'next';
      readonly headers: Record<string, string>;
      /**
       * Names to add to `Access-Control-Expose-Headers` (empty when turned off). Often one
       * frozen list shared by many outcomes: never modify it (pushing onto it throws).
       */
      readonly expose: readonly string[];
      readonly delayMs: number;
      readonly decision: Decision | undefined;
      /**
       * With `skipSuccessfulRequests`, `skipFailedRequests` or `settle`, when the request was
       * charged: the adapter calls it once the response is done, with its status (`undefined`:
       * none was sent) and whether it was cut short, and what the request was charged is given
       * back if the options say so, or its reservations settled. With `settle`, call it when the
       * body has been sent to its end (or the client left), not at the status.
       */
      readonly settle?: Settle;
    }
  | {
      readonly action: 'respond';
      readonly status: number;
      readonly headers: Record<string, string>;
      /** As on a `'next'` outcome: a list that may be shared and frozen, never to modify. */
      readonly expose: readonly string[];
      readonly body: string;
      readonly decision: Decision | undefined;
    };

/**
 * The framework-agnostic middleware: every adapter is a thin translation around `decide`.
 * `decide` never rejects: a failure to decide becomes a 503 outcome or, with `'fail-open'`, a pass.
 * @example
 * ```ts
 * import type { RateLimitRequest } from '@floodgate/http';
 * import type { RateLimitEngine } from '@floodgate/http/adapter';
 *
 * async function admitted(engine: RateLimitEngine, request: RateLimitRequest): Promise<boolean> {
 *   const outcome = await engine.decide(request);
 *   return outcome.action === 'next';
 * }
 * ```
 * @public
 */
export interface RateLimitEngine {
  /**
   * The outcome, without holding: a `'next'` outcome's `delayMs` is for the caller to wait.
   * Delays beyond `maxDelayMs` are already refused; `maxQueued` is only enforced by `admit`.
   */
  decide(request: RateLimitRequest): Promise<Outcome>;
  /**
   * `decide`, then hold a delayed request for its turn (while fewer than `maxQueued` requests
   * are held in the process; otherwise a 429). `undefined` when `signal` aborted while held: the client left, answer nothing. A
   * function for `signal` is called only when there is a wait, and its `dispose` after it.
   */
  admit(request: RateLimitRequest, signal?: HoldSignal): Promise<Outcome | undefined>;
}

/**
 * What tells `admit` that the client left while its request was held: a signal, or a function
 * making one (and a `dispose` to call after the wait), so requests that are not held pay nothing.
 * @example
 * ```ts
 * import type { HoldSignal } from '@floodgate/http/adapter';
 *
 * declare const request: Request;
 * const hold: HoldSignal = request.signal;
 * ```
 * @public
 */
export type HoldSignal =
  | AbortSignal
  | undefined
  | (() => { readonly signal: AbortSignal; dispose(): void });

// Shared by every skipped request: frozen so no adapter can leak one request's headers into the next.
const PASS: Outcome = Object.freeze({
  action: 'next',
  headers: Object.freeze({}) as Record<string, string>,
  expose: Object.freeze([]),
  delayMs: 0,
  decision: undefined,
});
const PROBLEM_JSON = 'application/problem+json';
// No names to expose: one frozen empty list for every such outcome.
const NONE: readonly string[] = Object.freeze([]);

/**
 * An admitted-but-delayed decision turned into a denial that says when its turn would have come.
 * The same policy binds: a delayed policy's units are not back before its turn (a leaky bucket
 * empties after the requests it holds start), so no tie is decided differently.
 */
function refusedForDelay(d: Decision): Decision {
  const policies = d.policies.map((p) =>
    p.delayMs > 0 ? { ...p, allowed: false, retryAfterMs: Math.max(p.retryAfterMs, p.delayMs) } : p,
  );
  const binding = policies[d.policies.indexOf(d.binding)] ?? d.binding;
  return { ...d, allowed: false, retryAfterMs: d.delayMs, delayMs: 0, policies, binding };
}

function serializeBody(custom: LimitedResponse, headers: Record<string, string>): string {
  const body = custom.body;
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = 'application/json; charset=utf-8';
  }
  return JSON.stringify(body);
}

/** The 429 itself, when no `onLimited` shapes it: made without a turn of the event loop. */
function problemDenial(
  decision: Decision,
  headers: Record<string, string>,
  retryAfter: number,
  expose: readonly string[],
): Outcome {
  // `headers` is this decision's own object: added to, not copied.
  headers['Content-Type'] = PROBLEM_JSON;
  return {
    action: 'respond',
    status: 429,
    headers,
    expose,
    // What JSON.stringify would make of the problem object, written without building it.
    body: tooManyRequestsBody(decision, retryAfter),
    decision,
  };
}

async function denial(
  onLimited: NonNullable<Settings['onLimited']>,
  request: RateLimitRequest,
  decision: Decision,
  headers: Record<string, string>,
  retryAfter: number,
  expose: readonly string[],
): Promise<Outcome> {
  const custom = await onLimited({
    request,
    decision,
    headers: { ...headers },
    retryAfterSeconds: retryAfter,
    problem: tooManyRequestsProblem(decision, retryAfter),
  });
  if (custom === undefined) return problemDenial(decision, headers, retryAfter, expose);
  const merged = { ...headers, ...custom.headers };
  const body = serializeBody(custom, merged);
  return {
    action: 'respond',
    status: custom.status ?? 429,
    headers: merged,
    expose,
    body,
    decision,
  };
}

/**
 * Builds the shared middleware logic from the options every adapter takes. Throws
 * `FloodgateError('INVALID_OPTION')` on bad options, before any store is touched.
 * `adapterOptions` names the extra options an adapter takes, so they are not rejected as unknown.
 * @example
 * The heart of an adapter of your own; `view` is your framework's request seen as a
 * `RateLimitRequest`.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { ipKey, type RateLimitRequest } from '@floodgate/http';
 * import { createEngine } from '@floodgate/http/adapter';
 *
 * declare const limiter: Limiter;
 * declare const view: RateLimitRequest;
 * const engine = createEngine({ limiter, key: ipKey() });
 * const outcome = await engine.admit(view);
 * // undefined: the client left while held. 'respond': send outcome.status, .headers and .body;
 * // 'next': set .headers, then go on.
 * ```
 * @public
 */
export function createEngine(
  options: RateLimitOptions,
  adapterOptions: readonly string[] = [],
): RateLimitEngine {
  const settings = resolveOptions(options, adapterOptions);

  const decideOnce = async (
    request: RateLimitRequest,
    holding: boolean,
    signal: HoldSignal,
  ): Promise<Outcome | undefined> => {
    // Keys warn about what they see (an untrusted X-Forwarded-For) through this middleware.
    bindValidator(request, settings.validator);
    const charges: Charge[] | undefined =
      settings.refundOn === undefined && settings.reserving === undefined ? undefined : [];
    try {
      if (settings.skip !== undefined && (await settings.skip(request))) return PASS;
      if (settings.allowList?.addressAllowed(request) === true) return PASS;
      const decisions = await evaluateRules(
        settings.rules,
        request,
        settings.allowList,
        charges,
        settings.reserving,
      );
      if (decisions === ALLOWED || decisions.length === 0) return PASS;
      // Shadow-mode limiters' decisions are no part of what a client is shown beside enforced
      // ones (headers, req.rateLimit, the 429 body); decided alone, they are reported, never
      // acted on (no delay, no 429, no Retry-After), and send headers only when asked.
      const shadow = decisions.every((d) => shadowed.has(d));
      const mixed = !shadow && decisions.some((d) => shadowed.has(d));
      let own = mergeDecisions(mixed ? decisions.filter((d) => !shadowed.has(d)) : decisions);
      const delayMs = settings.delay && !shadow ? own.delayMs : 0;
      if (
        delayMs > settings.maxDelayMs ||
        (holding && delayMs > 0 && heldCount() >= settings.maxQueued)
      ) {
        // Held that long, or beside that many others, the request would tie up a connection
        // (and overflow a timer): refused, told to come back when its turn would have come.
        own = refusedForDelay(own);
      }
      const decision = withPrior(request.raw, own);
      const hidden = shadow && !settings.shadowHeaders;
      const { headers, retryAfter } = hidden
        ? { headers: {}, retryAfter: undefined }
        : decisionHeaders(decision, settings.headers);
      const names = exposeNamesOf(headers);
      const expose = settings.exposeHeaders ? names : NONE;
      let settler: Settler | undefined;
      let outcome: Outcome;
      if (retryAfter !== undefined) {
        const onLimited = settings.onLimited;
        const answer =
          onLimited === undefined
            ? problemDenial(decision, headers, retryAfter, expose)
            : await denial(onLimited, request, decision, headers, retryAfter, expose);
        // This middleware answers it: its status is known now (its handler never runs).
        if (answer.action === 'respond' && charges !== undefined) {
          settlerFor(settings, request, charges)?.drop(answer.status);
        }
        outcome = answer;
      } else {
        // Made only now: a settler is a promise to settle (with `settle`, one the request's
        // usage meter waits for), and every path from here keeps it.
        settler = charges === undefined ? undefined : settlerFor(settings, request, charges);
        const settle = settler?.settle;
        // A shadow-only decision stays out of req.rateLimit and of later limiters' headers,
        // unless the operator asked to see it (shadowHeaders).
        const shown = hidden ? undefined : decision;
        outcome =
          settle === undefined
            ? { action: 'next', headers, expose, delayMs, decision: shown }
            : { action: 'next', headers, expose, delayMs, decision: shown, settle };
      }
      if (!hidden) {
        recordDecision(request.raw, own, decision, names.length > 0 ? outcome : undefined);
      }
      // Reserved in the same turn as the check above (no await between): the bound is exact.
      if (holding && outcome.action === 'next' && delayMs > 0) {
        reserveHold();
        // Returned, not awaited: a failure while held rejects admit, as it always did, rather
        // than being taken for a failure to decide below.
        return hold(outcome, signal, settler);
      }
      return outcome;
    } catch (error) {
      report(settings.onError, error, request);
      // What earlier rules charged: settled as a 503, or when the request passed (fail-open),
      // not at all (its response is not watched: a pass carries no settle).
      if (charges !== undefined && !settings.failOpen) {
        settlerFor(settings, request, charges)?.drop(503);
      }
      if (settings.failOpen) return PASS;
      return {
        action: 'respond',
        status: 503,
        headers: { 'Content-Type': PROBLEM_JSON },
        expose: [],
        body: JSON.stringify(unavailableProblem()),
        decision: undefined,
      };
    }
  };

  return {
    // Not holding, the outcome is never `undefined`.
    decide: (request) => decideOnce(request, false, undefined) as Promise<Outcome>,
    // The hold is started from inside decideOnce: no second async frame (and promise) per request.
    admit: (request, signal) => decideOnce(request, true, signal),
  };
}

/** Holds a delayed request for its turn (its hold already reserved); `undefined`: the client left. */
async function hold(
  outcome: Outcome & { action: 'next' },
  signal: HoldSignal,
  settler: Settler | undefined,
): Promise<Outcome | undefined> {
  let watch: { readonly signal: AbortSignal | undefined; dispose(): void } | undefined;
  try {
    watch = typeof signal === 'function' ? signal() : { signal, dispose: () => {} };
    if (await queueDelay(outcome.delayMs, watch.signal)) return outcome;
    // The client left while held: its response never finishes, its handler never runs.
    settler?.drop(undefined);
    return undefined;
  } finally {
    releaseHold();
    watch?.dispose();
  }
}
