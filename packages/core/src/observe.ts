// onDecision and telemetry: wrapped around a limiter only when one of them is set, so a limiter
// without them runs the unwrapped methods (no branch, no clock read, no extra promise).
import type { BreakerOptions, BreakerState } from './breaker.js';
import type { DecisionEvent } from './decision-event.js';
import { isFloodgateError } from './errors.js';
import type { Limiter } from './limiter-types.js';
import type { Store } from './store-types.js';
import type { LimiterTelemetry } from './telemetry-types.js';
import type { Decision } from './types.js';
import { timedOutDecision } from './wait.js';

type Report = (event: DecisionEvent, startedAt: number) => void;

/** The outcome of a decision, as `DecisionEvent.outcome` defines it. */
export function outcomeOf(d: Decision): DecisionEvent['outcome'] {
  if (d.reason === 'store-unavailable' || d.reason === 'store-timeout') return 'fallback';
  if (d.shadowDenied === true) return 'shadow_denied';
  return d.allowed ? 'allowed' : 'denied';
}

/**
 * Reports an exception of a hook without letting it reach the caller: a metrics or logging bug
 * must not turn decisions into errors. Logged, at most once per 10 s, with how many were dropped.
 */
export function complainer(): (what: string, error: unknown) => void {
  let last = Number.NEGATIVE_INFINITY;
  let dropped = 0;
  return (what, error) => {
    const now = Date.now();
    if (now - last < 10_000) {
      dropped++;
      return;
    }
    last = now;
    const more = dropped === 0 ? '' : `; ${dropped} more since the last report`;
    dropped = 0;
    console.error(`floodgate: ${what} threw, the decision stands${more}`, error);
  };
}

/** onDecision and the telemetry, each guarded; undefined when neither is set. */
export function reporter(
  onDecision: ((event: DecisionEvent) => void) | undefined,
  telemetry: LimiterTelemetry | undefined,
  complain: (what: string, error: unknown) => void,
): Report | undefined {
  if (onDecision === undefined && telemetry === undefined) return undefined;
  return (event, startedAt) => {
    if (onDecision !== undefined) {
      try {
        onDecision(event);
      } catch (error) {
        complain('onDecision', error);
      }
    }
    if (telemetry !== undefined) {
      try {
        telemetry.decided(event, startedAt);
      } catch (error) {
        complain('telemetry', error);
      }
    }
  };
}

/** The limiter with its `limit` and `wait` reported. */
export function observed(base: Limiter, report: Report): Limiter {
  function settle(
    promise: Promise<Decision>,
    operation: DecisionEvent['operation'],
    identity: string,
  ): Promise<Decision> {
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
    peek: (identity) => base.peek(identity),
    reset: (identity) => base.reset(identity),
    refund: (identity, options) => base.refund(identity, options),
  };
}

/** The store with each `evaluate` timed for the telemetry (answered or failed). */
export function timedStore(
  store: Store,
  tele: LimiterTelemetry,
  complain: (what: string, error: unknown) => void,
): Store {
  const since = (t: number): void => {
    try {
      tele.storeDuration((performance.now() - t) / 1000);
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
  if (store.remote !== undefined) timed.remote = store.remote;
  if (store.isolatesFailures !== undefined) timed.isolatesFailures = store.isolatesFailures;
  if (store.fallback !== undefined) timed.fallback = () => store.fallback!();
  if (store.now !== undefined) timed.now = () => store.now!();
  return timed;
}

/** The store's kind for metrics: a `kind` field if it has one, else its constructor's name. */
export function storeKind(store: Store): string {
  const kind = (store as { kind?: unknown }).kind;
  if (typeof kind === 'string') return kind;
  const name = (store as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'unknown';
}

/** The breaker's options with its transitions told to the telemetry too. */
export function watchBreaker(
  o: BreakerOptions,
  tele: LimiterTelemetry | undefined,
  complain: (what: string, error: unknown) => void,
): BreakerOptions {
  if (tele === undefined || typeof o !== 'object' || o === null) return o;
  const told = o.onStateChange;
  if (told !== undefined && typeof told !== 'function') return o; // the Breaker says why
  let from: BreakerState = 'closed';
  return {
    ...o,
    onStateChange(state, error) {
      try {
        tele.breakerChanged(from, state);
      } catch (e) {
        complain('telemetry', e);
      }
      from = state;
      told?.(state, error);
    },
  };
}
