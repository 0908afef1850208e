import type { BlockedCache } from './blocked-cache.js';
import { Breaker, type BreakerState } from './breaker.js';
import { blockedCacheFor, exposeInvalidation } from './cache-watch.js';
import { LimiterCall } from './call.js';
import { type CallCost, costOf } from './cost.js';
import { plainDecision } from './decision.js';
import { FloodgateError, isCallerError, storeError } from './errors.js';
import { breakerOpen, guarded } from './guarded.js';
import { callKeys, encodeIdentity, validateIdentity, validatePrefix } from './keys.js';
import { migrateOption, timeoutOf, validateOptions, validatePolicies } from './limiter-config.js';
import type { LimiterOptions, ReservingLimiter } from './limiter-types.js';
import {
  complainer,
  guardHook,
  observed,
  reporter,
  storeKind,
  timedStore,
  watchBreaker,
} from './observe.js';
import type { OverrideStore } from './override-store.js';
import type { LimiterWithOverrides } from './override-types.js';
import { overriddenDecision, overridesOption, withOverrides } from './overrides.js';
import { legacyPolicyId } from './policies/migrate.js';
import { refundDecisionOf, refundScope } from './refund.js';
import { reservationOf, reserveOptionsOf, type SettleHost } from './reserve.js';
import { applyShadow, partlyShadowed, shadowMask } from './shadow.js';
import type { PolicyResult, Store, StoreCall } from './store-types.js';
import { withTimeout } from './timeout.js';
import type { Decision, DecisionReason, Policy } from './types.js';
import { checkWaitOptions, WaitQueues } from './wait.js';
import { withWriteFormat } from './write-format.js';

const LIMIT = { method: 'limit', admission: true } as const;

/** `{ cost }` or `{}`: no other own enumerable key (as `Object.keys`, without its array). */
function onlyCost(opts: unknown): boolean {
  if (typeof opts !== 'object' || opts === null) return false;
  for (const k in opts) if (k !== 'cost' && Object.hasOwn(opts, k)) return false;
  return true;
}

/**
 * Builds a limiter with per-identity overrides stored beside the counts (`overrides: true`):
 * `override`, `overrides.get` and `overrides.clear` (docs/changing-limits.md).
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 *   overrides: true,
 * });
 * await limiter.override('key_123', { limit: 1000, until: Date.now() + 3_600_000 });
 * ```
 * @beta
 */
export function createLimiter(options: LimiterOptions & { overrides: true }): LimiterWithOverrides;
/**
 * Builds a limiter over one store and one or more policies.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * const d = await limiter.limit('key_123');
 * if (!d.allowed) console.log(`retry in ${d.retryAfterMs} ms`);
 * ```
 * @public
 */
export function createLimiter(options: LimiterOptions): ReservingLimiter;
export function createLimiter(options: LimiterOptions): ReservingLimiter {
  validateOptions(options);
  // Token buckets in the state forms 1.0 reads, for a fleet that still runs it (write-format.ts).
  const policies = withWriteFormat(validatePolicies(options.policy), options.writeFormat);
  // Stored per-identity overrides (overrides.ts): read by every decision's store call.
  const overriding = overridesOption(options);
  // Migrating keys from 0.1 (policies/migrate.ts): every call reads and writes the 0.1 keys too.
  const migrate = migrateOption(options);
  // `policies` is frozen for callers; V8 (Node 20) reads elements of a frozen array through a
  // generic inline-cache call, so decisions are built from this unfrozen copy.
  const list = policies.slice();
  const prefix = options.prefix ?? 'floodgate';
  validatePrefix(prefix);
  // Telemetry is bound once, here: without it the store is used as given and nothing is timed.
  const complain = complainer();
  const onError = guardHook(options.onError, 'onError', complain);
  const tele = options.telemetry?.bind({
    limiter: prefix,
    store: storeKind(options.store),
    breakerState: (): BreakerState | undefined => breaker?.state,
  });
  const store = tele === undefined ? options.store : timedStore(options.store, tele, complain);
  // The store may hold a call past its deadline only for a caller that asks it (window.ts).
  const extendable = typeof store.waitUntil === 'function';
  const shadow = shadowMask(list, options.shadow === true);
  const timeoutMs = timeoutOf(options);
  const onStoreError = options.onStoreError ?? store.fallback?.() ?? 'throw';
  const capacity = Math.min(...policies.map((p) => p.capacity));
  // Listens to the store's change feed (cache-watch.ts), timed on the clock decisions use.
  const blocked = blockedCacheFor(options.blockCache, store, prefix, () =>
    store.now === undefined ? Date.now() : store.now(),
  );
  const breakerOption =
    options.breaker ?? (store.remote === true && store.isolatesFailures !== true);
  const breaker = breakerOption
    ? new Breaker(watchBreaker(breakerOption === true ? {} : breakerOption, tele, complain))
    : undefined;
  /** The decision the results give, shadowed policies reported and not enforced (shadow.ts). */
  const decideAs = (
    ps: readonly Policy[],
    results: readonly PolicyResult[],
    reason?: DecisionReason,
  ): Decision => {
    if (shadow === undefined) return plainDecision(ps, results, reason);
    if (shadow === true) return applyShadow(plainDecision(ps, results, reason));
    return partlyShadowed(ps, results, shadow, reason);
  };
  const decide: typeof decideAs = overriding
    ? (ps, results, reason) => overriddenDecision(ps, results, reason, decideAs, shadow)
    : decideAs;

  const clock = store.now === undefined ? Date.now : () => store.now!();
  const idOf = (identity: string): string => {
    validateIdentity(identity);
    return encodeIdentity(identity);
  };
  // With block keys: a reset lifts the identity's blocks too.
  const keysOf = (id: string): string[] =>
    callKeys(
      prefix,
      id,
      policies,
      false,
      migrate === undefined ? undefined : policies.map(legacyPolicyId),
    );

  /** The decision `onStoreError` makes when the store cannot. */
  async function fallBack(
    call: StoreCall,
    error: FloodgateError | (() => FloodgateError),
  ): Promise<Decision> {
    // An open breaker passes a factory: most calls never need the error, and building one (its
    // stack trace) would cost more than the fallback's whole decision.
    if (onStoreError === 'throw') throw typeof error === 'function' ? error() : error;
    const reason: DecisionReason =
      typeof error !== 'function' && error.code === 'STORE_TIMEOUT'
        ? 'store-timeout'
        : 'store-unavailable';
    if (onStoreError === 'allow' || onStoreError === 'deny') {
      const allowed = onStoreError === 'allow';
      const results = policies.map(() => ({
        allowed,
        remaining: 0,
        resetAfterMs: 0,
        retryAfterMs: allowed ? 0 : 1000,
        delayMs: 0,
      }));
      return decide(list, results, reason);
    }
    // The deadline was the primary store's; the fallback is not bounded by the limiter's timer.
    let local = call;
    if (call instanceof LimiterCall) local = call.withoutDeadline();
    else if (call.deadline !== undefined) {
      const { deadline: _, ...rest } = call;
      local = rest;
    }
    return decide(list, await onStoreError.evaluate(local), reason);
  }

  // An in-process store that can answer synchronously skips the promise machinery entirely.
  const sync =
    store.evaluateSync !== undefined && timeoutMs === undefined && breaker === undefined
      ? store
      : undefined;

  // On the in-process path one call object is refilled per decision: nothing to allocate, and an
  // instance that outlives each call keeps LimiterCall's hidden class alive. V8 collects a hidden
  // class once every instance of it died, and then throws away the optimized code that checked it:
  // with a fresh call per decision, every full GC sent the hot path back to the interpreter.
  let spare =
    sync === undefined
      ? undefined
      : new LimiterCall(policies, prefix, '', 1, 'limit', undefined, overriding, migrate);

  // Not async: on the in-process path the promise returned is the only one made per decision.
  function run(
    id: string,
    cost: number,
    mode: 'limit' | 'peek',
    costs?: readonly number[],
  ): Promise<Decision> {
    if (costs !== undefined) {
      const call = callOf(id, cost, mode, policies, costs);
      return sync === undefined ? runRemote(call) : runSync(call);
    }
    if (sync === undefined) return runRemote(callOf(id, cost, mode));
    // Taken while in use: a store that calls back into this limiter gets a call of its own.
    const call = spare === undefined ? callOf(id, cost, mode) : spare.refill(id, cost, mode);
    spare = undefined;
    let results: readonly PolicyResult[];
    try {
      results = sync.evaluateSync!(call);
    } catch (cause) {
      spare = call;
      return syncFailed(call, cause);
    }
    spare = call;
    // One test of a constant per decision; the shadow mapping runs only in shadow mode.
    const d =
      shadow === undefined && !overriding ? plainDecision(list, results) : decide(list, results);
    // Not dead code: the read makes V8 check the decision's hidden class, and knowing it V8
    // fulfils the promise without a generic lookup of `d.then` (6 % of a decision's instructions).
    void d.allowed;
    return Promise.resolve(d);
  }

  /** A store error on the in-process path: rejected, or the fallback's decision. */
  function syncFailed(call: LimiterCall, cause: unknown): Promise<Decision> {
    if (isCallerError(cause)) return Promise.reject(cause);
    const error = storeError(cause);
    if (onStoreError !== 'throw') onError?.(error);
    // A fallback store may hold on to its call: it gets one of its own.
    return fallBack(call.withoutDeadline(), error);
  }

  /** A call of its own on the in-process path (per-policy costs): never the spare. */
  function runSync(call: LimiterCall): Promise<Decision> {
    let results: readonly PolicyResult[];
    try {
      results = sync!.evaluateSync!(call);
    } catch (cause) {
      return syncFailed(call, cause);
    }
    return Promise.resolve(decide(list, results));
  }

  async function runRemote(call: StoreCall): Promise<Decision> {
    if (breaker !== undefined && !breaker.admit()) return fallBack(call, breakerOpen);
    let results: readonly PolicyResult[];
    try {
      results = await withTimeout(store.evaluate(call), timeoutMs, deadlineOf(call));
    } catch (cause) {
      if (isCallerError(cause)) {
        breaker?.release();
        throw cause;
      }
      const error = storeError(cause);
      breaker?.failure(error);
      if (onStoreError !== 'throw') onError?.(error);
      return fallBack(call, error);
    }
    breaker?.success();
    return decide(list, results);
  }

  /** The store's reset, bounded and counted by the breaker like a decision. */
  const resetStore = (keys: readonly string[]): Promise<void> =>
    guarded(breaker, timeoutMs, () => store.reset(keys));

  /** The store's refund, bounded and counted by the breaker like a decision. */
  const refundStore = (call: StoreCall): Promise<void> =>
    guarded(breaker, timeoutMs, () => store.evaluate(call).then(() => undefined), deadlineOf(call));

  /** The call's deadline, or the store's reading of it when the store may move it. */
  const deadlineOf = (call: StoreCall): number | (() => number | undefined) | undefined =>
    call.extendable === true ? () => store.waitUntil!(call) : call.deadline;

  /** `cost` as `refund()` checks it: a positive safe integer no policy's capacity is below. */
  function refundCostOf(opts: { cost?: number } | undefined, method: string): number {
    // `refund(id, 5)` or `{ costs: 5 }` would otherwise give back 1 without a word.
    if (opts !== undefined && !onlyCost(opts)) {
      throw new FloodgateError('INVALID_OPTION', `${method}() takes { cost } as its options`);
    }
    // Only a missing cost means 1: `{ cost: null }` is a caller's bug, not a default.
    const cost = opts?.cost === undefined ? 1 : opts.cost;
    if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
      throw new FloodgateError(
        'INVALID_COST',
        `cost must be a positive safe integer, got ${String(cost)}`,
      );
    }
    return cost;
  }

  /** An admission at a checked cost: one cost through the blocked-key cache, per-policy past it. */
  function admit(id: string, c: CallCost): Promise<Decision> {
    // A per-policy cost's denial is not cached: the cache compares one cost with another.
    if (c.costs !== undefined) return run(id, c.cost, 'limit', c.costs);
    if (blocked === undefined) return run(id, c.cost, 'limit');
    return limitBlocked(blocked, id, c.cost);
  }

  function limitBlocked(cache: BlockedCache, id: string, cost: number): Promise<Decision> {
    const cached = cache.lookup(id, cost, clock);
    // A shadow denial is an admission: never cached, so never served from the cache.
    if (cached !== undefined) return Promise.resolve(cached);
    const flight = cache.start(id);
    const epoch = flight.epoch;
    // Not an async function (`run` reports every failure as a rejection): one promise and one
    // hop fewer per decision (bench/doc/notes.md, issue 16's sixth round).
    return run(id, cost, 'limit').then(
      (decision) => {
        cache.finish(id, flight, epoch, cost, decision, clock);
        return decision;
      },
      (error: unknown) => {
        cache.finish(id, flight, epoch, cost, undefined, clock);
        throw error;
      },
    );
  }

  /** A store call with a deadline when `timeoutMs` is set, so a late script charges nothing. */
  const callOf = (
    id: string,
    cost: number,
    mode: StoreCall['mode'],
    ps = policies,
    costs?: readonly number[],
  ): LimiterCall =>
    new LimiterCall(
      ps,
      prefix,
      id,
      cost,
      mode,
      timeoutMs === undefined ? undefined : performance.now() + timeoutMs,
      overriding,
      migrate,
      costs,
      extendable,
    );

  /** A refund of `charged` only (the enforced policies of a partly shadowed limiter). */
  const refundCallOf = (charged: readonly Policy[], id: string, cost: number): LimiterCall =>
    new LimiterCall(
      charged,
      prefix,
      id,
      cost,
      'refund',
      timeoutMs === undefined ? undefined : performance.now() + timeoutMs,
      overriding,
      migrate,
      undefined,
      extendable,
    );
  const charged = refundScope(policies, shadow);
  /** A reservation's settle: the signed differences, on what its admission charged. */
  const host: SettleHost = {
    policies,
    capacity,
    now: clock,
    async settle(id, decision, diffs) {
      const scope = charged(decision);
      if (scope === undefined) return;
      const costs = scope === policies ? diffs : scope.map((p) => diffs[policies.indexOf(p)]!);
      if (costs.every((c) => c === 0)) return;
      const most = Math.max(...costs.map(Math.abs));
      // As a refund: units given back may lift a cached denial, before and after the call.
      blocked?.invalidate(id);
      try {
        await refundStore(callOf(id, most, 'settle', scope, costs));
      } finally {
        blocked?.invalidate(id);
      }
    },
  };
  let waiting: WaitQueues | undefined;
  const queues = (): WaitQueues =>
    // Made at the first wait(); in shadow mode nothing is held back (no leaky-bucket delay).
    (waiting ??= new WaitQueues(
      {
        // With `ps` (wait-turn.ts: queues cut to a waiter's time left), around the cache.
        decide: (id, cost, ps) =>
          ps !== undefined
            ? runRemote(callOf(id, cost, 'limit', ps))
            : blocked === undefined
              ? run(id, cost, 'limit')
              : limitBlocked(blocked, id, cost),
        giveBack: (identity, cost, decision) => limiter.refund(identity, { cost, decision }),
      },
      shadow !== true,
      policies,
    ));

  const limiter: ReservingLimiter = {
    policies,
    shadow: shadow === true,
    limit(identity, opts) {
      try {
        // `limit(id, 5)` or `{ costs: 5 }` would otherwise charge 1 without a word.
        if (opts !== undefined && !onlyCost(opts)) {
          throw new FloodgateError('INVALID_OPTION', 'limit() takes { cost } as its options');
        }
        const c = costOf(policies, opts?.cost, LIMIT, capacity);
        return admit(idOf(identity), c);
      } catch (error) {
        // Bad input rejects, as from an async function, rather than throwing synchronously.
        return Promise.reject(error);
      }
    },
    reserve(identity, opts) {
      try {
        const { estimate, settleWithinMs } = reserveOptionsOf(opts, host);
        const id = idOf(identity);
        return admit(id, estimate).then((d) =>
          reservationOf(d, id, estimate, settleWithinMs, host),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    },
    wait(identity, opts) {
      try {
        const { cost, maxWaitMs, signal } = checkWaitOptions(opts);
        const id = idOf(identity);
        if (cost > capacity) {
          throw new FloodgateError(
            'COST_EXCEEDS_CAPACITY',
            `cost ${cost} exceeds the largest admissible cost ${capacity}`,
          );
        }
        return queues().wait(id, cost, maxWaitMs, signal, identity);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async peek(identity) {
      return run(idOf(identity), 1, 'peek');
    },
    async reset(identity) {
      const id = idOf(identity);
      const keys = keysOf(id);
      blocked?.invalidate(id);
      // The store hears of the reset in the caller's tick, as it hears of `limit` calls: it
      // orders the reset after the calls made before it and before those made after it.
      const remote = resetStore(keys);
      // Decisions made by a fallback store during an outage are forgotten too.
      const local = typeof onStoreError === 'object' ? onStoreError.reset(keys) : undefined;
      try {
        const [r, l] = await Promise.allSettled([remote, local]);
        if (r.status === 'rejected') throw r.reason;
        if (l.status === 'rejected') throw l.reason;
      } finally {
        // A denial that was in flight during the reset may predate it: it must not be cached.
        blocked?.invalidate(id);
      }
    },
    async refund(identity, opts) {
      const decision = refundDecisionOf(opts);
      const cost = refundCostOf(decision === undefined ? opts : { cost: opts!.cost }, 'refund');
      const id = idOf(identity);
      // No admission ever charged more than the smallest capacity: nothing to give back.
      if (cost > capacity) {
        throw new FloodgateError(
          'COST_EXCEEDS_CAPACITY',
          `refund of ${cost} exceeds the largest admissible cost ${capacity}`,
        );
      }
      const scope = decision === undefined ? policies : charged(decision);
      if (scope === undefined) return;
      // The refund frees units: a cached denial of the identity may no longer hold, and one in
      // flight during the refund may predate it (as for reset).
      blocked?.invalidate(id);
      try {
        await refundStore(
          scope === policies ? callOf(id, cost, 'refund') : refundCallOf(scope, id, cost),
        );
      } finally {
        blocked?.invalidate(id);
      }
    },
  };
  // Decided here, once: without onDecision and telemetry the limiter is returned unwrapped.
  const report = reporter(options.onDecision, tele, complain);
  const done = report === undefined ? limiter : observed(limiter, report);
  if (blocked !== undefined) exposeInvalidation(done, (i) => blocked.invalidate(idOf(i)));
  if (!overriding) return done;
  return withOverrides(done, {
    // overridesOption checked that it can hold them.
    store: options.store as Store & OverrideStore,
    prefix,
    policies,
    clock,
    timeoutMs,
    breaker,
    blocked,
    idOf,
  });
}
