import type {
  BreakerOptions,
  Cost,
  Decision,
  Limiter,
  LimiterOptions,
  Policy,
} from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import type { FrameworkSettings } from './framework.js';
import type { SettleOption } from './settle-types.js';
import type { RateLimitWarning, ValidateOption } from './validations.js';

/**
 * The framework-agnostic view of a request that every option function receives. `raw` is the
 * framework's own object (Express `req`, Fastify `request`, Hono `Context`, node:http
 * `IncomingMessage`, or the fetch `Request`), for anything the view does not carry.
 * @example
 * A key function reads the request through the view, whatever the framework.
 * ```ts
 * import type { RateLimitRequest } from '@floodgate/http';
 *
 * function tenantKey(request: RateLimitRequest): string | undefined {
 *   const tenant = request.header('x-tenant-id');
 *   return tenant === undefined ? undefined : `tenant:${tenant}:${request.method}`;
 * }
 * ```
 * @public
 */
export interface RateLimitRequest<Raw = unknown> {
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /**
   * The matched route pattern (`/users/:id`) where the framework knows it at this point:
   * Express when the middleware is mounted on a route, Fastify and Hono when a route matched.
   * Otherwise `undefined`.
   */
  readonly route: string | undefined;
  /** The address of the peer on the other end of the socket (the proxy, when behind one). */
  readonly address: string | undefined;
  /** A request header by name (any case); repeated fields joined with `", "`. */
  header(name: string): string | undefined;
  readonly raw: Raw;
  /**
   * The framework's own routing and proxy settings (Express, Fastify), which `routeKey()` and
   * `ipKey()` follow. Absent elsewhere.
   */
  readonly framework?: FrameworkSettings;
}

/** A value, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/**
 * Names the bucket a request is counted in. `undefined` means "this rule does not apply to this
 * request" (e.g. no API key was sent): the rule is skipped, it is not an error.
 * @example
 * ```ts
 * import type { KeyFunction } from '@floodgate/http';
 * import type { Request } from 'express';
 *
 * // Per signed-in user (set by an auth middleware earlier); anonymous requests are not counted.
 * const userKey: KeyFunction<Request> = (request) => {
 *   const user = request.raw.get('x-user-id');
 *   return user === undefined ? undefined : `user:${user}`;
 * };
 * ```
 * @public
 */
export type KeyFunction<Raw = unknown> = (
  request: RateLimitRequest<Raw>,
) => Awaitable<string | undefined>;

/**
 * A limiter, or a function choosing one per request (tiers); `undefined` skips the rule.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import type { LimiterChoice } from '@floodgate/http';
 *
 * declare const proLimiter: Limiter;
 * declare const freeLimiter: Limiter;
 * const byPlan: LimiterChoice = (request) =>
 *   request.header('x-plan') === 'pro' ? proLimiter : freeLimiter;
 * ```
 * @public
 */
export type LimiterChoice<Raw = unknown> =
  | Limiter
  | ((request: RateLimitRequest<Raw>) => Awaitable<Limiter | undefined>);

/**
 * Policies for a limiter the middleware builds on its `store`, or a function choosing them per
 * request (tiers, `limit` as a function of the request); `undefined` skips the rule. One limiter
 * is built per distinct set of policies and kept (the 256 most recently used), so a function may
 * build its policy on every call. Policies of one kind, name and window (interval, period) count
 * under one store key whatever their limits: a client whose tier changes keeps what it used, and
 * the new tier's limit decides from that count (give tiers different names to count apart).
 * @example
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import type { PolicyChoice } from '@floodgate/http';
 *
 * const perPlan: PolicyChoice = (request) =>
 *   tokenBucket({
 *     name: 'api',
 *     limit: request.header('x-plan') === 'pro' ? 1000 : 100,
 *     interval: '1m',
 *   });
 * ```
 * @public
 */
export type PolicyChoice<Raw = unknown> =
  | Policy
  | readonly Policy[]
  | ((request: RateLimitRequest<Raw>) => Awaitable<Policy | readonly Policy[] | undefined>);

/**
 * Units a request costs: a `Cost` (a number for every policy, or units per policy name), or a
 * function of the request returning one. With `settle`, it is the estimate a reservation is
 * admitted against, corrected once the response is done.
 * @example
 * ```ts
 * import type { CostOption } from '@floodgate/http';
 *
 * // Writes count five times as much as reads.
 * const cost: CostOption = (request) => (request.method === 'GET' ? 1 : 5);
 * // One request, and up to the tokens it asks for (policies named 'requests' and 'tokens').
 * const perPolicy: CostOption = (request) => ({
 *   requests: 1,
 *   tokens: Number(request.header('x-max-tokens') ?? 1024),
 * });
 * ```
 * @public
 */
export type CostOption<Raw = unknown> =
  | Cost
  | ((request: RateLimitRequest<Raw>) => Awaitable<Cost>);

/**
 * A delay in ms, or a duration string as policies read them (`'500ms'`, `'5s'`, `'1.5m'`, `'1h'`,
 * `'1d'`), `0` allowed.
 * @example
 * ```ts
 * import type { JitterBound } from '@floodgate/http';
 *
 * const most: JitterBound = '5s';
 * const least: JitterBound = 500;
 * ```
 * @public
 */
export type JitterBound = number | string;

/**
 * Extra wait added to `Retry-After`, drawn uniformly from `[min, max]`. A single value means
 * `[0, value]`. Only ever added: the advertised wait is never shorter than the real one.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import type { JitterRange } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/node';
 *
 * declare const limiter: Limiter;
 * const retryAfterJitter: JitterRange = ['1s', '5s']; // 1 to 5 s added to every Retry-After
 * const limit = rateLimit({ limiter, retryAfterJitter });
 * ```
 * @public
 */
export type JitterRange = JitterBound | readonly [JitterBound, JitterBound];

/**
 * One limiter and the key it counts by. Several rules are evaluated in order, reported together.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { headerKey, ipKey, type RateLimitRule } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/node';
 *
 * declare const perKey: Limiter;
 * declare const perIp: Limiter;
 * const rules: RateLimitRule[] = [
 *   { limiter: perKey, key: headerKey('x-api-key') },
 *   { limiter: perIp, key: ipKey() },
 * ];
 * const limit = rateLimit({ rules });
 * ```
 * @public
 */
export interface RateLimitRule<Raw = unknown> {
  /** The limiter, or a per-request choice of limiter. Give this or `policy`. @default none */
  limiter?: LimiterChoice<Raw>;
  /**
   * Policies for a limiter built on the middleware's `store`, or a function of the request
   * choosing them. Give this or `limiter`. @default none
   */
  policy?: PolicyChoice<Raw>;
  /** @default the middleware's `key` (itself `ipKey()` by default) */
  key?: KeyFunction<Raw>;
  /** @default the middleware's `cost` (itself 1 by default) */
  cost?: CostOption<Raw>;
}

/**
 * What `onLimited` may answer instead of the default problem+json body.
 * @example
 * ```ts
 * import type { LimitedResponse } from '@floodgate/http';
 *
 * const slowDown: LimitedResponse = {
 *   status: 429,
 *   headers: { 'Cache-Control': 'no-store' },
 *   body: { error: 'slow_down' },
 * };
 * ```
 * @public
 */
export interface LimitedResponse {
  /** @default 429 */
  status?: number;
  /** Added to (and overriding) the rate-limit headers, which are always set. @default none */
  headers?: Record<string, string>;
  /**
   * A string is sent as is; anything else as JSON (`application/json` unless a header says
   * otherwise). @default an empty body
   */
  body?: unknown;
}

/**
 * What `onLimited` is told about a denial.
 * @example
 * A plain-text 429 that still says when to come back.
 * ```ts
 * import type { LimitedContext, LimitedResponse } from '@floodgate/http';
 *
 * function onLimited(context: LimitedContext): LimitedResponse {
 *   const names = context.problem.violated?.join(', ') ?? 'rate limit';
 *   return { body: `Too many requests (${names}); retry in ${context.retryAfterSeconds} s.` };
 * }
 * ```
 * @public
 */
export interface LimitedContext<Raw = unknown> {
  readonly request: RateLimitRequest<Raw>;
  /** Every rule's decision merged: the policies of all rules that were evaluated. */
  readonly decision: Decision;
  /** The rate-limit and `Retry-After` headers that will be sent. */
  readonly headers: Readonly<Record<string, string>>;
  /** The `Retry-After` value sent, in seconds (jitter included). */
  readonly retryAfterSeconds: number;
  /** The default RFC 9457 body. */
  readonly problem: ProblemDetails;
}

/**
 * An RFC 9457 problem body, with Floodgate's extension members.
 * @example
 * Reading a 429 body on the caller's side.
 * ```ts
 * import type { ProblemDetails } from '@floodgate/http';
 *
 * declare const response: Response;
 * const problem = (await response.json()) as ProblemDetails;
 * console.warn(`${problem.title}: ${problem.violated?.join(', ')}, retry in ${problem.retryAfter} s`);
 * ```
 * @public
 */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** Seconds, as in `Retry-After` (429 only). */
  readonly retryAfter?: number;
  /** Names of the policies that denied the request (429 only). */
  readonly violated?: readonly string[];
  /** Every policy evaluated for the request (429 only). */
  readonly policies?: readonly ProblemPolicy[];
}

/**
 * One policy as reported in a 429's problem body: its quota, what is left and, in whole
 * seconds, its window and the time until it is whole again.
 * @example
 * ```ts
 * import type { ProblemDetails, ProblemPolicy } from '@floodgate/http';
 *
 * declare const problem: ProblemDetails;
 * const exhausted: ProblemPolicy[] = (problem.policies ?? []).filter((p) => p.remaining === 0);
 * for (const p of exhausted) console.warn(`${p.name}: ${p.limit} used up, whole in ${p.resetSeconds} s`);
 * ```
 * @public
 */
export interface ProblemPolicy {
  readonly name: string;
  readonly limit: number;
  readonly remaining: number;
  /** Absent when the policy has no window to speak of. */
  readonly windowSeconds?: number;
  readonly resetSeconds: number;
}

/**
 * The options every adapter takes. Give a `limiter`, a `policy` with a `store`, or `rules`.
 * @example
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { firstKey, headerKey, ipKey, type RateLimitOptions } from '@floodgate/http';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const options: RateLimitOptions = {
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ name: 'api', limit: 100, interval: '1m' }),
 *   key: firstKey(headerKey('x-api-key'), ipKey()),
 *   headers: 'draft-7',
 *   retryAfterJitter: '5s',
 * };
 * ```
 * @public
 */
export interface RateLimitOptions<Raw = unknown> {
  /**
   * The limiter, or a function choosing one per request (tiers). Or give `policy` + `store`, or
   * `rules`. @default none
   */
  limiter?: LimiterChoice<Raw>;
  /**
   * Policies for a limiter the middleware builds on `store`, or a function of the request
   * choosing them (`limit` per request: see `PolicyChoice`). @default none
   * @example
   * ```ts
   * import { fixedWindow } from '@floodgate/core';
   * import { rateLimit } from '@floodgate/http/node';
   * import { MemoryStore } from '@floodgate/memory';
   *
   * const basic = fixedWindow({ name: 'api', limit: 100, window: '1m' });
   * const premium = fixedWindow({ name: 'api', limit: 1000, window: '1m' });
   * const limit = rateLimit({
   *   store: new MemoryStore(),
   *   policy: (request) => (request.header('x-plan') === 'premium' ? premium : basic),
   * });
   * ```
   */
  policy?: PolicyChoice<Raw>;
  /** The store for `policy` (and for `policy` in `rules`). @default none */
  store?: Store;
  /** Key prefix of limiters built from `policy`. @default 'floodgate' */
  prefix?: string;
  /** Passed to limiters built from `policy`; see `createLimiter`. @default the store's fallback */
  onStoreError?: 'throw' | 'allow' | 'deny' | Store;
  /**
   * Passed to limiters built from `policy`: `false` waits for the store however long it takes.
   * @default 250 for a remote store, none for `MemoryStore` (see `createLimiter`)
   */
  timeoutMs?: number | false;
  /** Passed to limiters built from `policy`; see `createLimiter`. @default on for remote stores */
  breaker?: boolean | BreakerOptions;
  /** Passed to limiters built from `policy`; see `createLimiter`. @default on for remote stores */
  blockCache?: boolean | { max: number };
  /**
   * Passed to limiters built from `policy`, every one a `policy` function builds: told of each
   * decision (see `createLimiter`). @default none
   */
  onDecision?: LimiterOptions['onDecision'];
  /**
   * Passed to limiters built from `policy`, every one a `policy` function builds:
   * `openTelemetry()` from `@floodgate/core/telemetry`. @default none
   */
  telemetry?: LimiterOptions['telemetry'];
  /** Several limiters per request (per IP, per API key, per route), reported together. @default none */
  rules?: readonly RateLimitRule<Raw>[];
  /** @default ipKey() */
  key?: KeyFunction<Raw>;
  /**
   * What a request costs: a number for every policy, or units per policy name (each name one
   * of the rule's limiter's policies), or a function of the request returning either. With
   * `settle`, the estimate. @default 1
   */
  cost?: CostOption<Raw>;
  /**
   * Charge an estimate first and the real cost once the response is done (`limiter.reserve`
   * instead of `limiter.limit`): `true` settles with what the handler reported through
   * `usageOf(request)`, a function computes the actual cost from the response (`SettleContext`).
   * Nothing reported (and `undefined` from the function): the estimate stands. See
   * docs/http.md, "Charging the real cost". @default false
   * @beta
   */
  settle?: SettleOption<Raw>;
  /**
   * With `settle`: how long after admission the reservation may still be settled, in ms (a
   * whole number > 0); a response that takes longer keeps its estimate (and `onError` hears
   * `RESERVATION_EXPIRED`). @default 600000 (10 minutes, the limiter's default)
   * @beta
   */
  settleWithinMs?: number;
  /** Which `RateLimit` header standard to send, or `false` for none. @default 'draft-8' */
  headers?: 'draft-6' | 'draft-7' | 'draft-8' | false;
  /** Also send `X-RateLimit-Limit/-Remaining/-Reset` (delta-seconds). @default false */
  legacyHeaders?: boolean;
  /** Extra wait spread over denied clients' `Retry-After`; ms or duration strings. @default 0 */
  retryAfterJitter?: JitterRange;
  /** Add the rate-limit header names to `Access-Control-Expose-Headers`. @default true */
  exposeHeaders?: boolean;
  /**
   * Send the `RateLimit` headers for a request decided by shadow-mode limiters only (a limiter
   * with `shadow: true`, or all of whose policies are shadowed). Such a request is never
   * answered `429`, never held for a leaky bucket's delay, and never gets `Retry-After`.
   * @default false
   */
  shadowHeaders?: boolean;
  /**
   * Clients never limited: IP addresses and CIDR ranges (IPv4-mapped IPv6 included) matched
   * against the client address as the rules' `ipKey()`s read it, inside `firstKey` and
   * `combineKeys` too (with several readings, each must be listed; with no ipKey in sight, the
   * framework's trust setting, and a warning for a listed peer that forwards), and identities
   * matched against the key any rule computes. Checked before the store is asked: a listed client is not counted and gets no
   * headers, as with `skip`. @default none
   * @example
   * ```ts
   * import { fixedWindow } from '@floodgate/core';
   * import { firstKey, headerKey, ipKey } from '@floodgate/http';
   * import { rateLimit } from '@floodgate/http/node';
   * import { MemoryStore } from '@floodgate/memory';
   *
   * declare const apiKeys: { has(key: string): boolean };
   * const limit = rateLimit({
   *   store: new MemoryStore(),
   *   policy: fixedWindow({ name: 'api', limit: 100, window: '1m' }),
   *   key: firstKey(headerKey('x-api-key', { verify: (value) => apiKeys.has(value) }), ipKey()),
   *   // Internal networks, and the batch job's API key (keys read `header:<name>:<value>`).
   *   allowList: ['10.0.0.0/8', '2001:db8::/32', 'header:x-api-key:batch-job-key'],
   * });
   * ```
   */
  allowList?: readonly string[];
  /** Requests for which this returns true are not counted and get no headers. @default none */
  skip?: (request: RateLimitRequest<Raw>) => Awaitable<boolean>;
  /**
   * Give back what a request was charged once its response succeeded (`requestWasSuccessful`),
   * with `limiter.refund`: only failures count. The headers it was sent with still count it.
   * @default false
   */
  skipSuccessfulRequests?: boolean;
  /**
   * Give back what a request was charged once its response failed (status ≥ 400 by default,
   * the 429s and 503s this middleware sends included, or a response that never finished):
   * only successes count. @default false
   */
  skipFailedRequests?: boolean;
  /**
   * Whether a finished response counts as a success for `skipSuccessfulRequests` and
   * `skipFailedRequests`. @default status < 400
   */
  requestWasSuccessful?: (request: RateLimitRequest<Raw>, status: number) => Awaitable<boolean>;
  /** A custom response for denials; `undefined` keeps the default problem+json. @default none */
  onLimited?: (context: LimitedContext<Raw>) => Awaitable<LimitedResponse | undefined>;
  /**
   * When deciding throws (the limiter with `onStoreError: 'throw'`, a key or cost function):
   * `'fail-closed'` answers `503` with a problem+json body; `'fail-open'` lets the request
   * through without rate-limit headers. @default 'fail-closed'
   */
  onLimiterError?: 'fail-closed' | 'fail-open';
  /**
   * Told about every error absorbed, for logging and alerts: the ones `onLimiterError` answered
   * (with the request), and the store failures a limiter built from `policy` decided around
   * with its `onStoreError` fallback (`request` is `undefined`: the limiter does not know it).
   * If it throws, that is logged and the request is answered all the same. @default none
   */
  onError?: (error: unknown, request: RateLimitRequest<Raw> | undefined) => void;
  /** Hold admitted `leakyBucket` requests for their `delayMs` before passing them on. @default true */
  delay?: boolean;
  /**
   * The longest a request is held for its `leakyBucket` turn, in ms. A later turn is answered
   * with a 429 whose `Retry-After` is when the turn would have come. @default 30000
   */
  maxDelayMs?: number;
  /**
   * How many requests may be held for their turn at once in this process, counted across every
   * Floodgate middleware in it; a request that would be held beyond that is answered with a 429.
   * @default 1000
   */
  maxQueued?: number;
  /** Uniform in [0, 1): the jitter's randomness, injectable for tests. @default Math.random */
  random?: () => number;
  /**
   * Configuration warnings (each said once per middleware): `false` silences them all, an
   * object turns single codes off. @default true
   */
  validate?: ValidateOption;
  /** Receives the warnings instead of the process warning (or console) they go to. @default none */
  onWarning?: (warning: RateLimitWarning) => void;
}
