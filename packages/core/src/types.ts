import type { PolicyKind } from './policies/kind-names.js';

export type { PolicyKind };

/**
 * A rate-limit policy: what a factory such as `tokenBucket(...)` returns. Plain data, so a store
 * (or a Lua script) can evaluate it without calling back into JavaScript.
 * @example
 * Policies are built by the factories and passed to a limiter, alone or several together.
 * ```ts
 * import { createLimiter, fixedWindow, type Policy, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policies: Policy[] = [
 *   tokenBucket({ limit: 10, interval: '1s', burst: 20, name: 'burst' }),
 *   fixedWindow({ limit: 10_000, window: '1d', name: 'daily' }),
 * ];
 * const limiter = createLimiter({ store: new MemoryStore(), policy: policies });
 * ```
 * @public
 */
export interface Policy {
  readonly kind: PolicyKind;
  /** Shown in `RateLimit` headers and problem bodies. */
  readonly name: string;
  /**
   * Key suffix, a few characters: the kind's tag and a short hash of what the policy counts (its
   * kind, its name when one was given, its window, interval or period and time zone), not of its
   * limit, burst or queue: two limiters with one policy share state, and a policy whose limit
   * changes keeps counting where it was (see policies/policy.ts and docs/algorithms.md).
   */
  readonly id: string;
  /** Requests (cost units) allowed per `windowMs`: the quota advertised in headers. */
  readonly limit: number;
  /**
   * The window (or refill interval) in ms: the `w` advertised in headers. A quota's is its
   * period's nominal length (a day, 7 days, 30 days); its reset is the real next midnight.
   */
  readonly windowMs: number;
  /** The largest `cost` one call can ever be admitted with. */
  readonly capacity: number;
  /**
   * Integer parameters of the algorithm, in the order the Lua scripts read them:
   * fixedWindow/slidingWindow/slidingWindowLog: [limit, windowMs, 0];
   * tokenBucket/leakyBucket: [capacity, ticksPerUnit, ticksPerMs, fillAtLimit] (the ticks the
   * bucket would take to fill were its burst its limit, which only a token bucket reads);
   * quota: [limit, 0, 0], its period's boundaries being the call's (see docs/algorithms.md).
   */
  readonly params: readonly [number, number, number, number?];
  /**
   * The `blockFor` option in ms: a denial by this policy blocks the identity for this long.
   * Absent when the policy does not block. Not part of `id` (see docs/algorithms.md, Penalties).
   */
  readonly blockForMs?: number;
  /**
   * Present (and `true`) when the policy was built with `shadow: true`: its denials are reported
   * (`Decision.shadowDenied`), not enforced. Not part of `id`: a shadowed and an enforced copy of
   * a policy share their state.
   */
  readonly shadow?: true;
  /** quota only: the calendar its periods follow, local midnights in `timeZone`. */
  readonly calendar?: { readonly per: 'day' | 'week' | 'month'; readonly timeZone: string };
}

/**
 * One policy's part of a decision.
 * @example
 * Naming the policies that denied a request.
 * ```ts
 * import type { Decision, PolicyDecision } from '@floodgate/core';
 *
 * declare const decision: Decision;
 * const violated: PolicyDecision[] = decision.policies.filter((p) => !p.allowed);
 * console.log(violated.map((p) => `${p.name}: retry in ${p.retryAfterMs} ms`));
 * ```
 * @public
 */
export interface PolicyDecision {
  readonly name: string;
  readonly kind: PolicyKind;
  readonly allowed: boolean;
  readonly limit: number;
  readonly windowMs: number;
  /** Whole units admissible right now, after this request. */
  readonly remaining: number;
  /** ms until this policy's state is empty again. */
  readonly resetAfterMs: number;
  /** 0 when allowed; when denied, the tight wait after which this request alone is admitted. */
  readonly retryAfterMs: number;
  /** leakyBucket only: how long an admitted request waits before it proceeds. */
  readonly delayMs: number;
  /**
   * Present when a stored override (`limiter.override`) decided this policy: the limit it ran on
   * (also in `limit`, unless 0: a block keeps the policy's own limit there) and when the override
   * ends, in epoch ms on the store's clock.
   * @beta
   */
  readonly override?: { readonly limit: number; readonly until: number };
  /**
   * Present (and `true`) on a shadowed policy's part: in `Decision.shadowed` when the limiter
   * enforces other policies, or on a denial of a limiter that shadows everything. Reported, not
   * enforced.
   */
  readonly shadow?: true;
}

/**
 * Why a decision was not made by the store the limiter was configured with.
 * @example
 * Counting decisions made without the configured store.
 * ```ts
 * import type { Decision, DecisionReason } from '@floodgate/core';
 *
 * declare const decision: Decision;
 * const degraded = new Map<DecisionReason, number>();
 * if (decision.reason) degraded.set(decision.reason, (degraded.get(decision.reason) ?? 0) + 1);
 * ```
 * @public
 */
export type DecisionReason = 'store-unavailable' | 'store-timeout' | 'blocked-cache';

/**
 * The answer to `limit()` or `peek()`. A denial is a value, never an exception.
 * @example
 * ```ts
 * import type { Decision } from '@floodgate/core';
 *
 * function describe(d: Decision): string {
 *   if (d.allowed) return `ok, ${d.remaining} of ${d.limit} left`;
 *   return `denied, retry in ${Math.ceil(d.retryAfterMs / 1000)} s`;
 * }
 * ```
 * @example
 * Logging which policy a request ran into: `binding` names it.
 * ```ts
 * import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: [
 *     tokenBucket({ limit: 10, interval: '1s', name: 'burst' }),
 *     fixedWindow({ limit: 1000, window: '1d', name: 'daily' }),
 *   ],
 * });
 * const d = await limiter.limit('key_123');
 * console.log(`${d.binding.name}: ${d.remaining} of ${d.limit} left`); // burst: 9 of 10 left
 * ```
 * @public
 */
export interface Decision {
  readonly allowed: boolean;
  /** The limit of the {@link Decision.binding | binding} policy. */
  readonly limit: number;
  /**
   * The units the {@link Decision.binding | binding} policy has left: the fewest across policies
   * (across the denying ones, when a per-policy cost was denied).
   */
  readonly remaining: number;
  /** Largest time until a policy is back to its empty state. */
  readonly resetAfterMs: number;
  /** 0 when allowed; otherwise the tight wait after which the same request alone is admitted. */
  readonly retryAfterMs: number;
  /** leakyBucket shaping: how long to wait before proceeding (0 for other policies). */
  readonly delayMs: number;
  /**
   * Every enforced policy's part, in the order the limiter was given its policies. A limiter
   * that shadows some policies beside enforced ones lists the shadowed ones in `shadowed`
   * instead; one that shadows every policy lists them all here.
   */
  readonly policies: readonly PolicyDecision[];
  /**
   * The policy that binds: the one with the fewest `remaining` units, whether the request was
   * allowed or denied; of a denied request, one that denied it (with one cost for every policy
   * that is always the one with the fewest; with per-policy costs, `Cost`, it may not be). On a tie the first of them in `policies` order sets the quota (`limit`);
   * among the tied policies with that same `limit`, the one whose units come back last binds
   * (its `resetAfterMs`, or when denied the longer of that and its `retryAfterMs`), the first of
   * them on a further tie. So `limit`, `remaining` and the one reset that draft-6/7 headers send
   * all describe this one policy.
   *
   * It is one of `policies`, the same object. `mergeDecisions` picks its binding by the same
   * rule over every policy of the decisions it merges.
   */
  readonly binding: PolicyDecision;
  readonly reason?: DecisionReason;
  /**
   * Present when a stored override (`limiter.override`) decided any policy of this decision:
   * the earliest of their ends, in epoch ms on the store's clock. Each overridden policy's part
   * carries its own `override`.
   * @beta
   */
  readonly override?: { readonly until: number };
  /**
   * Present (and `true`) only in shadow mode, when enforcing would have denied: the decision is
   * allowed. In a limiter that shadows everything, `retryAfterMs`, `binding` and the denying
   * `policies` say what the denial would have been, and the store charged nothing, as for a
   * denial. In a limiter that shadows some policies, the enforced ones were charged as if the
   * shadowed ones were absent, and the shadowed ones nothing; `shadowed` says which would deny.
   */
  readonly shadowDenied?: true;
  /**
   * The shadowed policies' parts (each with `shadow: true`), present only when the limiter
   * shadows some policies beside enforced ones. Nothing in the decision's other fields comes from
   * them: what a client is shown (headers, the 429 body, `Retry-After`, a delay) describes the
   * enforced policies alone. A shadowed policy is charged only when every policy admits, so its
   * counts are what enforcing it would have counted.
   */
  readonly shadowed?: readonly PolicyDecision[];
}
