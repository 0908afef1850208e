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
import { type DecisionEvent, tokenBucket } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { Store } from '../src/store.js';
import { openTelemetry } from '../src/telemetry.js';
import { MapStore } from './map-store.js';

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
    const all = metricExporter.getMetrics();
    return all.at(-1)!.scopeMetrics.flatMap((s) => s.metrics);
  }
  return { telemetry, collect, spanExporter, tracerProvider };
}

/** A remote store (so breaker and blocked-key cache are on) that fails while `down`. */
function flakyStore(): { store: Store; setDown(v: boolean): void } {
  const inner = new MapStore(() => 1_000_000);
  let down = false;
  const store = {
    kind: 'FlakyStore',
    remote: true,
    evaluate: (c: Parameters<Store['evaluate']>[0]) =>
      down ? Promise.reject(new Error('down')) : inner.evaluate(c),
    reset: (k: readonly string[]) => inner.reset(k),
  };
  return { store, setDown: (v) => (down = v) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('openTelemetry()', () => {
  it('records decisions, store durations, breaker state and transitions, and spans; no identity anywhere', async () => {
    const { telemetry, collect, spanExporter, tracerProvider } = setup();
    const { store, setDown } = flakyStore();
    const policy = tokenBucket({ limit: 2, interval: '1h', name: 'burst' });
    const limiter = createLimiter({
      store,
      policy,
      prefix: 'api',
      telemetry,
      onStoreError: 'deny',
      timeoutMs: false,
      breaker: { failures: 2, cooldownMs: 3_600_000 },
    });
    const strict = createLimiter({
      store,
      policy,
      prefix: 'strict',
      telemetry,
      onStoreError: 'throw',
      timeoutMs: false,
      breaker: false,
    });
    const shadow = createLimiter({ store, policy, prefix: 'shadow', telemetry, shadow: true });
    await limiter.limit(SECRET);
    await limiter.limit(SECRET);
    await limiter.limit(SECRET); // denied by the store
    for (let i = 0; i < 3; i++) await shadow.limit(SECRET); // allowed twice, then shadow_denied
    setDown(true);
    await strict.limit('other-identity').catch(() => {}); // error
    await limiter.limit('x1'); // fallback, failure 1 (SECRET would come from the blocked-key cache)
    await limiter.limit('x2'); // fallback, failure 2: the breaker opens
    const metrics = await collect();
    const byName = new Map(metrics.map((m) => [m.descriptor.name, m]));
    expect([...byName.keys()].sort()).toEqual([
      'floodgate.breaker.state',
      'floodgate.breaker.transitions',
      'floodgate.decisions',
      'floodgate.store.duration',
    ]);
    const decisions = byName.get('floodgate.decisions')!;
    expect(decisions.descriptor.unit).toBe('{decision}');
    const counts = Object.fromEntries(
      decisions.dataPoints.map((p) => [
        `${p.attributes['floodgate.limiter']}/${p.attributes['floodgate.policy'] ?? '-'}/${p.attributes['floodgate.outcome']}`,
        p.value,
      ]),
    );
    expect(counts).toEqual({
      'api/burst/allowed': 2,
      'api/burst/denied': 1,
      'api/burst/fallback': 2,
      'shadow/burst/allowed': 2,
      'shadow/burst/shadow_denied': 1,
      'strict/-/error': 1,
    });
    const duration = byName.get('floodgate.store.duration')!;
    expect(duration.descriptor.unit).toBe('s');
    const stores = duration.dataPoints.map((p) => p.attributes['floodgate.store']);
    expect(new Set(stores)).toEqual(new Set(['FlakyStore']));
    const durationCount = duration.dataPoints.reduce(
      (n, p) => n + (p.value as { count: number }).count,
      0,
    );
    expect(durationCount).toBe(9); // every store call, answered or failed (none while open)
    const transitions = byName.get('floodgate.breaker.transitions')!;
    expect(transitions.descriptor.unit).toBe('{transition}');
    expect(
      transitions.dataPoints.map((p) => [p.attributes['floodgate.breaker.state'], p.value]),
    ).toEqual([['open', 1]]);
    const state = byName.get('floodgate.breaker.state')!;
    const states = Object.fromEntries(
      state.dataPoints
        .filter((p) => p.attributes['floodgate.limiter'] === 'api')
        .map((p) => [p.attributes['floodgate.breaker.state'], p.value]),
    );
    expect(states).toEqual({ closed: 0, open: 1, 'half-open': 0 });

    await tracerProvider.forceFlush();
    const spans = spanExporter.getFinishedSpans();
    expect(spans).toHaveLength(9); // one per decision
    expect(new Set(spans.map((s) => s.name))).toEqual(new Set(['floodgate.limit']));
    const errorSpan = spans.find((s) => s.attributes['floodgate.outcome'] === 'error')!;
    expect(errorSpan.status.code).toBe(SpanStatusCode.ERROR);
    const ok = spans.find((s) => s.attributes['floodgate.outcome'] === 'allowed')!;
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    expect(ok.attributes).toEqual({
      'floodgate.limiter': 'api',
      'floodgate.policy': 'burst',
      'floodgate.outcome': 'allowed',
      'floodgate.store': 'FlakyStore',
    });
    const everything = JSON.stringify({
      metrics,
      spans: spans.map((s) => ({ n: s.name, a: s.attributes, e: s.events, st: s.status })),
    });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('other-identity');
  });

  it('one throwing hook does not break the decision; it is logged', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const seen: DecisionEvent[] = [];
    const limiter = createLimiter({
      store: new MapStore(),
      policy: tokenBucket({ limit: 5, interval: '1s' }),
      onDecision(event) {
        seen.push(event);
        throw new Error('hook bug');
      },
    });
    const d = await limiter.limit('u');
    expect(d.allowed).toBe(true);
    await limiter.limit('u');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ outcome: 'allowed', identity: 'u', operation: 'limit' });
    expect(seen[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(error).toHaveBeenCalledTimes(1); // at most once per 10 s
    expect(String(error.mock.calls[0]![0])).toContain('onDecision threw');
  });

  it('reports an error outcome for a store failure under onStoreError throw, not for bad input', async () => {
    const seen: DecisionEvent[] = [];
    const limiter = createLimiter({
      store: { evaluate: () => Promise.reject(new Error('down')), reset: async () => {} },
      policy: tokenBucket({ limit: 5, interval: '1s' }),
      onDecision: (e) => seen.push(e),
    });
    await expect(limiter.limit('u')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(limiter.limit('u', { cost: 0 })).rejects.toMatchObject({ code: 'INVALID_COST' });
    await limiter.peek('u').catch(() => {});
    expect(seen.map((e) => [e.outcome, e.error?.code, e.decision])).toEqual([
      ['error', 'STORE_UNAVAILABLE', undefined],
    ]);
  });

  it('rejects a telemetry without bind()', () => {
    expect(() =>
      createLimiter({
        store: new MapStore(),
        policy: tokenBucket({ limit: 5, interval: '1s' }),
        telemetry: {} as never,
      }),
    ).toThrow(/telemetry/);
  });
});
