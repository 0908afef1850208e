// What `openTelemetry()` records of concurrency limits (telemetry.ts binds it): imported by the
// `@floodgate/core/telemetry` entry only, so it may read `@opentelemetry/api` as telemetry.ts does.
import {
  type Attributes,
  type Meter,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import type { LeaseEvent } from './lease-event.js';

// Requests hold slots from milliseconds to minutes.
const HELD_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The instruments, made once per `openTelemetry()`; `bind` gives each limiter its recorder. */
export function leaseInstruments(meter: Meter, tracer: Tracer | undefined) {
  const leases = meter.createCounter('floodgate.leases', {
    unit: '{lease}',
    description:
      'Concurrency-limit calls, by limiter and outcome (acquired, denied, fallback, error, released, expired).',
  });
  const held = meter.createHistogram('floodgate.lease.held', {
    unit: 's',
    description: 'How long leases were held, from grant to release (outcomes released, expired).',
    advice: { explicitBucketBoundaries: HELD_BUCKETS },
  });
  return {
    bind(limiter: string, store: string): (event: LeaseEvent, startedAt: number) => void {
      // One attribute object per outcome, made once: nothing allocated per call.
      const byOutcome = new Map<string, Attributes>();
      const attributesOf = (outcome: string): Attributes => {
        let a = byOutcome.get(outcome);
        if (a === undefined) {
          a = { 'floodgate.limiter': limiter, 'floodgate.outcome': outcome };
          byOutcome.set(outcome, a);
        }
        return a;
      };
      return (event, startedAt) => {
        const attributes = attributesOf(event.outcome);
        leases.add(1, attributes);
        if (event.heldMs !== undefined) held.record(event.heldMs / 1000, attributes);
        // A span per acquire, as per rate-limit decision; a release is a counter and a hold time.
        if (tracer === undefined || event.operation !== 'acquire') return;
        const span = tracer.startSpan('floodgate.acquire', {
          kind: SpanKind.INTERNAL,
          startTime: performance.timeOrigin + startedAt,
          attributes: { ...attributes, 'floodgate.store': store },
        });
        if (event.outcome === 'error') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.error?.code });
        } else if (event.outcome === 'fallback') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.lease?.reason });
        }
        span.end(performance.timeOrigin + startedAt + event.durationMs);
      };
    },
  };
}
