// A concurrency limiter's onDecision and telemetry, guarded: the lease events go through the
// same reporter as rate-limit decisions (observe.ts), so a hook that throws or rejects is
// handled one way everywhere; and the store calls are timed for the telemetry.
import type { LeaseReport } from './concurrency-lease.js';
import type { DecisionEvent } from './decision-event.js';
import type { LeaseEvent } from './lease-event.js';
import type { LeaseStore } from './lease-types.js';
import { type Complain, reporter, watchResult } from './observe.js';
import type { LimiterTelemetry } from './telemetry-types.js';

/**
 * `onDecision` and the telemetry's `leased`, through observe.ts's reporter; undefined when
 * neither is set (nothing is timed or built per call then). The reporter is typed for
 * decisions; it only passes the event on, so a lease event goes through it unchanged.
 */
export function leaseReporter(
  onDecision: ((event: LeaseEvent) => void) | undefined,
  tele: LimiterTelemetry | undefined,
  complain: Complain,
): LeaseReport | undefined {
  const leased = tele?.leased;
  const shim: LimiterTelemetry | undefined =
    tele === undefined || leased === undefined
      ? undefined
      : {
          decided: (event, startedAt) =>
            leased.call(tele, event as unknown as LeaseEvent, startedAt),
          storeDuration: () => {},
          breakerChanged: () => {},
        };
  const hook = onDecision as ((event: DecisionEvent) => void) | undefined;
  return reporter(hook, shim, complain) as LeaseReport | undefined;
}

/** The lease store with each call timed for the telemetry (answered or failed). */
export function timedLeaseStore(
  store: LeaseStore,
  tele: LimiterTelemetry,
  complain: Complain,
): LeaseStore {
  const timed = <T>(call: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const since = (): void => {
      try {
        watchResult(tele.storeDuration((performance.now() - t) / 1000), 'telemetry', complain);
      } catch (error) {
        complain('telemetry', error);
      }
    };
    let answer: Promise<T>;
    try {
      answer = call();
    } catch (error) {
      since();
      throw error;
    }
    return answer.then(
      (value) => {
        since();
        return value;
      },
      (error: unknown) => {
        since();
        throw error;
      },
    );
  };
  return {
    acquireLease: (request) => timed(() => store.acquireLease(request)),
    releaseLease: (lease) => timed(() => store.releaseLease(lease)),
    extendLease: (lease, ms) => timed(() => store.extendLease(lease, ms)),
  };
}
