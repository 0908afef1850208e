// onDecision and telemetry: wrapped around a limiter only when one of them is set, so a limiter
// without them runs the unwrapped methods (no branch, no clock read, no extra promise).
import type { BreakerOptions, BreakerState } from './breaker.js';
import type { DecisionEvent } from './decision-event.js';
import { isFloodgateError } from './errors.js';
import type { ReservingLimiter } from './limiter-types.js';
import type { Store } from './store-types.js';
import type { LimiterTelemetry } from './telemetry-types.js';
import type { Decision } from './types.js';
import { timedOutDecision } from './wait.js';

type Report = (event: DecisionEvent, startedAt: number) => void;

/** Where a hook's failure goes: `complainer()`'s report, rate-limited. */
export type Complain = (what: string, error: unknown, how?: 'threw' | 'rejected') => void;

/** The outcome of a decision, as `DecisionEvent.outcome` defines it. */
export function outcomeOf(d: Decision): DecisionEvent['outcome'] {
  if (d.reason === 'store-unavailable' || d.reason === 'store-timeout') return 'fallback';
  if (d.shadowDenied === true) return 'shadow_denied';
  return d.allowed ? 'allowed' : 'denied';
}

/**
 * Reports a hook's failure (a throw, or a rejection of the promise it returned) without letting
 * it reach the caller: a metrics or logging bug must not turn decisions into errors. Logged, at
 * most once per 10 s, with how many were dropped.
 */
export function complainer(): Complain {
  let last = Number.NEGATIVE_INFINITY;
  let dropped = 0;
  return (what, error, how = 'threw') => {
    const now = Date.now();
    if (now - last < 10_000) {
      dropped++;
      return;
    }
    last = now;
    const more = dropped === 0 ? '' : `; ${dropped} more since the last report`;
    dropped = 0;
    console.error(`floodgate: ${what} ${how}, the decision stands${more}`, error);
  };
}

/**
 * What a hook returned, once it returned: an `async` hook's promise (or any thenable) that
 * rejects is reported like a throw. Unwatched, the rejection would be unhandled, and Node exits
 * on an unhandled rejection: a metrics backend that is down would take the process with it.
 */
export function watchResult(result: unknown, what: string, complain: Complain): void {
  // Hooks are typed to return void: a sync hook's undefined costs this one comparison.
  if (result === undefined || result === null) return;
  if (typeof result !== 'object' && typeof result !== 'function') return;
  try {
    if (typeof (result as { then?: unknown }).then !== 'function') return;
    // Promise.resolve adopts a foreign thenable too; a `then` that throws becomes a rejection.
    Promise.resolve(result).then(undefined, (error: unknown) => complain(what, error, 'rejected'));
  } catch (error) {
    // A getter on `then` that throws.
    complain(what, error);
  }
}

/**
 * The hook, called so that neither its throw nor its rejection reaches the caller (both go to
 * `complain`); undefined when there is no hook. For hooks of one argument: `onError`.
 */
export function guardHook<T>(
  hook: ((value: T) => unknown) | undefined,
  what: string,
  complain: Complain,
): ((value: T) => void) | undefined {
  if (hook === undefined) return undefined;
  return (value) => {
    try {
      watchResult(hook(value), what, complain);
    } catch (error) {
      complain(what, error);
    }
  };
}

/** onDecision and the telemetry, each guarded; undefined when neither is set. */
export function reporter(
  onDecision: ((event: DecisionEvent) => void) | undefined,
  telemetry: LimiterTelemetry | undefined,
  complain: Complain,
): Report | undefined {
  if (onDecision === undefined && telemetry === undefined) return undefined;
  return (event, startedAt) => {
    if (onDecision !== undefined) {
      try {
        watchResult(onDecision(event), 'onDecision', complain);
      } catch (error) {
        complain('onDecision', error);
      }
    }
    if (telemetry !== undefined) {
      try {
        watchResult(telemetry.decided(event, startedAt), 'telemetry', complain);
      } catch (error) {
        complain('telemetry', error);
      }
    }
  };
}

/** The limiter with its `limit` and `wait` reported. */
export function observed(base: ReservingLimiter, report: Report): ReservingLimiter {
  function settle<D extends Decision>(
    promise: Promise<D>,
    operation: DecisionEvent['operation'],
    identity: string,
  ): Promise<D> {
    const startedAt = performance.now();
    return promise.then(
      (decision) => {
        const durationMs = performance.now() - startedAt;
        report(
          { outcome: outcomeOf(decision), decision, identity, durationMs, operation },
          startedAt,
        );
        return decision;
      },
      (error: unknown) => {
        const durationMs = performance.now() - startedAt;
        if (isFloodgateError(error) && error.code.startsWith('STORE_')) {
          const event = { outcome: 'error', decision: undefined, identity, durationMs, operation };
          report({ ...event, error } as DecisionEvent, startedAt);
        } else if (isFloodgateError(error) && error.code === 'WAIT_TIMEOUT') {
          const decision = timedOutDecision(error);
          report({ outcome: 'denied', decision, identity, durationMs, operation }, startedAt);
        }
        throw error;
      },
    );
  }
  return {
    policies: base.policies,
    shadow: base.shadow === true,
    limit: (identity, options) => settle(base.limit(identity, options), 'limit', identity),
    wait: (identity, options) => settle(base.wait(identity, options), 'wait', identity),
    reserve: (identity, options) => settle(base.reserve(identity, options), 'reserve', identity),
    peek: (identity) => base.peek(identity),
    reset: (identity) => base.reset(identity),
    refund: (identity, options) => base.refund(identity, options),
  };
}

/** The store with each `evaluate` timed for the telemetry (answered or failed). */
export function timedStore(store: Store, tele: LimiterTelemetry, complain: Complain): Store {
  const since = (t: number): void => {
    try {
      watchResult(tele.storeDuration((performance.now() - t) / 1000), 'telemetry', complain);
    } catch (error) {
      complain('telemetry', error);
    }
  };
  const timed: {
    -readonly [K in keyof Store]: Store[K];
  } = {
    evaluate(call) {
      const t = performance.now();
      let answer: ReturnType<Store['evaluate']>;
      try {
        answer = store.evaluate(call);
      } catch (error) {
        since(t);
        throw error;
      }
      return answer.then(
        (results) => {
          since(t);
          return results;
        },
        (error: unknown) => {
          since(t);
          throw error;
        },
      );
    },
    reset: (keys) => store.reset(keys),
  };
  const sync = store.evaluateSync;
  if (sync !== undefined) {
    timed.evaluateSync = (call) => {
      const t = performance.now();
      try {
        return sync.call(store, call);
      } finally {
        since(t);
      }
    };
  }
  if (store.kind !== undefined) timed.kind = store.kind;
  if (store.remote !== undefined) timed.remote = store.remote;
  if (store.isolatesFailures !== undefined) timed.isolatesFailures = store.isolatesFailures;
  if (store.fallback !== undefined) timed.fallback = () => store.fallback!();
  if (store.now !== undefined) timed.now = () => store.now!();
  if (store.watch !== undefined) timed.watch = (listener) => store.watch!(listener);
  if (store.waitUntil !== undefined) timed.waitUntil = (call) => store.waitUntil!(call);
  return timed;
}

/**
 * The store's kind for metrics (`Store.kind`), or `'custom'`. Never the constructor's name: a
 * bundler renames classes (`_MemoryStore`), and a metric attribute must not change with a build.
 */
export function storeKind(store: Store): string {
  const kind = (store as { kind?: unknown }).kind;
  return typeof kind === 'string' && kind !== '' ? kind : 'custom';
}

/**
 * The breaker's options with its transitions told to the telemetry too, and its
 * `onStateChange` guarded: the Breaker calls it while a decision is made (from a store failure),
 * where its throw would fail the decision instead of letting it fall back.
 */
export function watchBreaker(
  o: BreakerOptions,
  tele: LimiterTelemetry | undefined,
  complain: Complain,
): BreakerOptions {
  if (typeof o !== 'object' || o === null) return o;
  const told = o.onStateChange;
  if (told !== undefined && typeof told !== 'function') return o; // the Breaker says why
  if (tele === undefined && told === undefined) return o;
  let from: BreakerState = 'closed';
  return {
    ...o,
    onStateChange(state, error) {
      if (tele !== undefined) {
        try {
          watchResult(tele.breakerChanged(from, state), 'telemetry', complain);
        } catch (e) {
          complain('telemetry', e);
        }
      }
      from = state;
      if (told !== undefined) {
        try {
          watchResult(told(state, error), 'breaker.onStateChange', complain);
        } catch (e) {
          complain('breaker.onStateChange', e);
        }
      }
    },
  };
}
