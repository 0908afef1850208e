/**
 * `@floodgate/core/telemetry`: limiter metrics and traces through OpenTelemetry. The only file of
 * core that imports `@opentelemetry/api` (an optional peer dependency): an app that never
 * imports this entry never loads it.
 * @module
 */
import {
  type Attributes,
  type Meter,
  type MeterProvider,
  metrics,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { BreakerState } from './breaker.js';
import type { DecisionEvent } from './decision-event.js';
import { leaseInstruments } from './telemetry-leases.js';
import type { LimiterTelemetry, Telemetry, TelemetryTarget } from './telemetry-types.js';

export type { LimiterTelemetry, Telemetry, TelemetryTarget };

/**
 * Where `openTelemetry()` records: the global providers unless given.
 * @example
 * ```ts
 * import { openTelemetry, type OpenTelemetryOptions } from '@floodgate/core/telemetry';
 * import { MeterProvider } from '@opentelemetry/sdk-metrics';
 *
 * const options: OpenTelemetryOptions = { meterProvider: new MeterProvider(), traces: false };
 * const telemetry = openTelemetry(options);
 * ```
 * @public
 */
export interface OpenTelemetryOptions {
  /** @default the global one (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
  /** @default the global one (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /** A meter to record with, instead of one from `meterProvider`. */
  meter?: Meter;
  /** A tracer to start spans with, instead of one from `tracerProvider`. */
  tracer?: Tracer;
  /** A span per decision (`floodgate.limit`, `floodgate.wait`). @default true */
  traces?: boolean;
}

const SCOPE = '@floodgate/core';
const STATES: readonly BreakerState[] = ['closed', 'open', 'half-open'];
// Store calls take from microseconds (in-process) to a few ms (Redis): the default boundaries
// (0 to 10 000) would put them all in one bucket.
const STORE_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/**
 * A limiter `telemetry` that records through OpenTelemetry:
 * - `floodgate.decisions` (counter, `{decision}`): `floodgate.limiter` (the prefix),
 *   `floodgate.policy` (the binding policy's name; absent on errors), `floodgate.outcome`, and
 *   `floodgate.override` (true) when a stored override took part (`Decision.override`);
 * - `floodgate.store.duration` (histogram, `s`): `floodgate.limiter`, `floodgate.store` (kind);
 * - `floodgate.breaker.state` (gauge, `{state}`): 1 for the breaker's state, 0 for the others,
 *   by `floodgate.breaker.state`;
 * - `floodgate.breaker.transitions` (counter, `{transition}`), by the state moved to;
 * - a span per decision, `floodgate.limit` or `floodgate.wait`, with the decision's attributes,
 *   its status an error when the store failed (outcomes `error` and `fallback`);
 * - of a concurrency limiter: `floodgate.leases` (counter, `{lease}`) by `floodgate.limiter` and
 *   `floodgate.outcome` (`acquired`, `denied`, `fallback`, `error`, `released`, `expired`),
 *   `floodgate.lease.held` (histogram, `s`: grant to release), and a `floodgate.acquire` span.
 * Identities never appear in an attribute. One `openTelemetry()` may serve many limiters.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { openTelemetry } from '@floodgate/core/telemetry';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 10, interval: '1s', name: 'burst' }),
 *   prefix: 'api',
 *   telemetry: openTelemetry(),
 * });
 * ```
 * @public
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Telemetry {
  const meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const tracer =
    options.traces === false
      ? undefined
      : (options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE));
  const decisions = meter.createCounter('floodgate.decisions', {
    unit: '{decision}',
    description: 'Rate-limit decisions, by limiter, binding policy and outcome.',
  });
  const storeDuration = meter.createHistogram('floodgate.store.duration', {
    unit: 's',
    description: 'Duration of the store calls a limiter makes.',
    advice: { explicitBucketBoundaries: STORE_BUCKETS },
  });
  const transitions = meter.createCounter('floodgate.breaker.transitions', {
    unit: '{transition}',
    description: 'Circuit breaker state changes, by the state moved to.',
  });
  const breakerState = meter.createObservableGauge('floodgate.breaker.state', {
    unit: '{state}',
    description: 'Circuit breaker state: 1 for the current state, 0 for the others.',
  });
  const leases = leaseInstruments(meter, tracer);
  // Weakly held: a limiter dropped by the app stops being observed instead of being kept alive.
  const watched = new Set<WeakRef<TelemetryTarget>>();
  breakerState.addCallback((result) => {
    for (const ref of watched) {
      const target = ref.deref();
      const state = target?.breakerState();
      if (target === undefined || state === undefined) {
        if (target === undefined) watched.delete(ref);
        continue;
      }
      for (const s of STATES) {
        result.observe(s === state ? 1 : 0, {
          'floodgate.limiter': target.limiter,
          'floodgate.store': target.store,
          'floodgate.breaker.state': s,
        });
      }
    }
  });

  return {
    bind(target): LimiterTelemetry {
      const limiter = target.limiter;
      const storeAttributes = { 'floodgate.limiter': limiter, 'floodgate.store': target.store };
      // Watched whatever its breaker: the limiter builds its breaker after binding.
      watched.add(new WeakRef(target));
      // One attribute object per (policy, outcome), made once: nothing allocated per decision.
      const byKey = new Map<string, Attributes>();
      const attributesOf = (event: DecisionEvent): Attributes => {
        const policy = event.decision?.binding.name;
        // A decision a stored override took part in says so: a block or a boost shows apart.
        const overridden = event.decision?.override !== undefined;
        const key = `${policy ?? ''}\u0000${event.outcome}${overridden ? '\u0000o' : ''}`;
        let a = byKey.get(key);
        if (a === undefined) {
          a = { 'floodgate.limiter': limiter, 'floodgate.outcome': event.outcome };
          if (policy !== undefined) a['floodgate.policy'] = policy;
          if (overridden) a['floodgate.override'] = true;
          byKey.set(key, a);
        }
        return a;
      };
      return {
        decided(event, startedAt) {
          const attributes = attributesOf(event);
          decisions.add(1, attributes);
          if (tracer === undefined) return;
          const span = tracer.startSpan(`floodgate.${event.operation}`, {
            kind: SpanKind.INTERNAL,
            startTime: performance.timeOrigin + startedAt,
            attributes: { ...attributes, 'floodgate.store': target.store },
          });
          if (event.outcome === 'error') {
            span.setStatus({ code: SpanStatusCode.ERROR, message: event.error?.code });
          } else if (event.outcome === 'fallback') {
            span.setStatus({ code: SpanStatusCode.ERROR, message: event.decision?.reason });
          }
          span.end(performance.timeOrigin + startedAt + event.durationMs);
        },
        storeDuration(seconds) {
          storeDuration.record(seconds, storeAttributes);
        },
        breakerChanged(_from, to) {
          transitions.add(1, { ...storeAttributes, 'floodgate.breaker.state': to });
        },
        leased: leases.bind(limiter, target.store),
      };
    },
  };
}
