// A concurrency limiter's onDecision and telemetry (issue 30, item 11): acquired, denied,
// fallback, error, released, expired, and how long leases were held; through OpenTelemetry's
// in-memory exporters as telemetry.test.ts does for rate limits. Hooks never change an answer.
import { SpanStatusCode } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConcurrencyLimiter, type LeaseEvent } from '../src/concurrency.js';
import { HoldTimes } from '../src/concurrency-hold.js';
import { openTelemetry } from '../src/telemetry.js';
import { LeaseMapStore, RemoteLeaseStore } from './lease-map-store.js';

const SECRET = 'secret-identity-42';

function setup() {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
  });
  const telemetry = openTelemetry({ meterProvider, tracerProvider });
  async function collect(): Promise<MetricData[]> {
    await meterProvider.forceFlush();
    return metricExporter
      .getMetrics()
      .at(-1)!
      .scopeMetrics.flatMap((s) => s.metrics);
  }
  return { telemetry, collect, spanExporter, tracerProvider };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createConcurrencyLimiter: onDecision and telemetry', () => {
  it('reports every acquire and release, with hold times, to onDecision and OpenTelemetry; no identity anywhere', async () => {
    const { telemetry, collect, spanExporter, tracerProvider } = setup();
    const store = new RemoteLeaseStore();
    const events: LeaseEvent[] = [];
    const limiter = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: '1m',
      prefix: 'exports',
      telemetry,
      onDecision: (e) => events.push(e),
    });
    const strict = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: '1m',
      prefix: 'strict',
      telemetry,
      onStoreError: 'throw',
      breaker: false,
    });
    const held = await limiter.acquire(SECRET); // acquired
    await limiter.acquire(SECRET); // denied
    store.held.clear(); // the lease is gone from the store, as an expired one is
    await held.release(); // expired
    const again = await limiter.acquire(SECRET); // acquired
    await again.release(); // released
    store.down = true;
    const fallback = await limiter.acquire(SECRET); // fallback
    await fallback.release(); // released, on the fallback
    await strict.acquire('other-identity').catch(() => {}); // error
    expect(events.map((e) => [e.operation, e.outcome, e.identity, e.heldMs !== undefined])).toEqual(
      [
        ['acquire', 'acquired', SECRET, false],
        ['acquire', 'denied', SECRET, false],
        ['release', 'expired', SECRET, true],
        ['acquire', 'acquired', SECRET, false],
        ['release', 'released', SECRET, true],
        ['acquire', 'fallback', SECRET, false],
        ['release', 'released', SECRET, true],
      ],
    );
    expect(events[1]!.lease).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
    expect(events[5]!.lease).toMatchObject({ allowed: true, reason: 'store-unavailable' });
    for (const e of events) expect(e.durationMs).toBeGreaterThanOrEqual(0);

    const byName = new Map((await collect()).map((m) => [m.descriptor.name, m]));
    const leases = byName.get('floodgate.leases')!;
    expect(leases.descriptor.unit).toBe('{lease}');
    const counts = Object.fromEntries(
      leases.dataPoints.map((p) => [
        `${p.attributes['floodgate.limiter']}/${p.attributes['floodgate.outcome']}`,
        p.value,
      ]),
    );
    expect(counts).toEqual({
      'exports/acquired': 2,
      'exports/denied': 1,
      'exports/expired': 1,
      'exports/released': 2,
      'exports/fallback': 1,
      'strict/error': 1,
    });
    const heldTimes = byName.get('floodgate.lease.held')!;
    expect(heldTimes.descriptor.unit).toBe('s');
    const holds = heldTimes.dataPoints.reduce(
      (n, p) => n + (p.value as { count: number }).count,
      0,
    );
    expect(holds).toBe(3);
    // Every lease store call is timed, as a rate limiter's evaluate is.
    const storeCalls = byName.get('floodgate.store.duration')!.dataPoints;
    expect(storeCalls.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBe(7);

    await tracerProvider.forceFlush();
    const spans = spanExporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(Array(5).fill('floodgate.acquire'));
    const failed = spans.filter((s) => s.status.code === SpanStatusCode.ERROR);
    expect(failed.map((s) => s.attributes['floodgate.outcome'])).toEqual(['fallback', 'error']);
    const everything = JSON.stringify({
      metrics: [...byName.values()],
      spans: spans.map((s) => ({ n: s.name, a: s.attributes, st: s.status })),
    });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('other-identity');
  });

  it('a hook or telemetry that throws changes no answer; it is logged', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const limiter = createConcurrencyLimiter({
      store: new LeaseMapStore(),
      limit: 1,
      leaseMs: '1m',
      onDecision() {
        throw new Error('hook bug');
      },
      telemetry: {
        bind: () => ({
          decided() {},
          storeDuration() {
            throw new Error('meter bug');
          },
          breakerChanged() {},
          leased() {
            throw new Error('meter bug');
          },
        }),
      },
    });
    const lease = await limiter.acquire('u');
    expect(lease.allowed).toBe(true);
    expect((await limiter.acquire('u')).allowed).toBe(false);
    await lease.release();
    expect((await limiter.acquire('u')).allowed).toBe(true);
    expect(logged).toHaveBeenCalledTimes(1); // at most once per 10 s
  });

  it('a telemetry without leased() still binds, and hears the store calls', async () => {
    let calls = 0;
    const limiter = createConcurrencyLimiter({
      store: new LeaseMapStore(),
      limit: 1,
      leaseMs: '1m',
      telemetry: {
        bind: () => ({ decided() {}, storeDuration: () => void calls++, breakerChanged() {} }),
      },
    });
    await (await limiter.acquire('u')).release();
    expect(calls).toBe(2);
  });
});

describe('the wait a denial announces (expectedWaitMs)', () => {
  it('the longest of the last 32 hold times, at least 1 s, at most the store bound; the bound before any', () => {
    const holds = new HoldTimes();
    expect(holds.wait(60_000)).toBe(60_000);
    holds.record(1499.2);
    expect(holds.wait(60_000)).toBe(1500);
    expect(holds.wait(1200)).toBe(1200);
    holds.record(20);
    expect(holds.wait(60_000)).toBe(1500);
    for (let i = 0; i < 32; i++) holds.record(40);
    expect(holds.wait(60_000)).toBe(1000); // the 1.5 s hold is forgotten; the floor
    expect(holds.wait(300)).toBe(300);
  });

  it('a denial carries it: the store bound until a lease was released, then the hold times', async () => {
    const limiter = createConcurrencyLimiter({
      store: new LeaseMapStore(),
      limit: 1,
      leaseMs: '1m',
    });
    const first = await limiter.acquire('u');
    const early = await limiter.acquire('u');
    expect([early.retryAfterMs, early.expectedWaitMs]).toEqual([60_000, 60_000]);
    await first.release();
    await limiter.acquire('u');
    const later = await limiter.acquire('u');
    expect([later.retryAfterMs, later.expectedWaitMs]).toEqual([60_000, 1000]);
  });
});
