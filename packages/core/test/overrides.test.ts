// Overrides on the limiter's side (the stores' side is the conformance suite's): this process's
// blocked-key cache, shadowed policies, hooks, telemetry, merged decisions, and the scripts of
// limiters without overrides left as they were.
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import {
  type DecisionEvent,
  fixedWindow,
  mergeDecisions,
  slidingWindow,
  tokenBucket,
} from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { PolicyState } from '../src/policies/common.js';
import { argCount } from '../src/redis/assemble.js';
import { batchScriptFor } from '../src/redis/batch.js';
import { scriptFor } from '../src/redis/lua.js';
import { decodeScriptReply } from '../src/redis/protocol.js';
import type { OverrideStore } from '../src/store.js';
import { openTelemetry } from '../src/telemetry.js';
import { MapStore } from './map-store.js';

const HOUR = 3_600_000;

/** MapStore with overrides: states under their keys, in force while until > now. */
class OverrideMapStore extends MapStore implements OverrideStore {
  async writeOverrides(keys: readonly string[], states: readonly (PolicyState | null)[]) {
    keys.forEach((k, i) => {
      const s = states[i];
      if (s === null || s === undefined) this.states.delete(k);
      else this.states.set(k, s);
    });
  }
  async readOverrides(keys: readonly string[]) {
    return keys.map((k) => {
      const s = this.states.get(k);
      return s !== undefined && s[0]! > this.now() ? s : undefined;
    });
  }
}

describe('overrides on the limiter', () => {
  it("drop this process's cached denial of the identity, on override and on clear", async () => {
    const now = 1_000_000;
    const store = new OverrideMapStore(() => now, true);
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1d' }),
      blockCache: true,
      timeoutMs: false,
      overrides: true,
    });
    await limiter.limit('u');
    await limiter.limit('u');
    expect((await limiter.limit('u')).reason, 'cached').toBe('blocked-cache');
    await limiter.override('u', { limit: 3, until: now + HOUR });
    expect((await limiter.limit('u')).allowed, 'the raise, not the cached denial').toBe(true);
    await limiter.override('u', { limit: 0, until: now + HOUR });
    const blocked = await limiter.limit('u');
    expect([blocked.allowed, blocked.reason, blocked.override]).toEqual([
      false,
      undefined,
      { until: now + HOUR },
    ]);
    expect((await limiter.limit('u')).reason, 'the block is cached').toBe('blocked-cache');
    await limiter.overrides.clear('u');
    const calls = store.calls;
    const after = await limiter.limit('u');
    expect([after.reason, after.override, store.calls], 'asked the store again').toEqual([
      undefined,
      undefined,
      calls + 1,
    ]);
  });

  it('a shadowed policy reports its override in `shadowed`, an enforced one in `policies`', async () => {
    const store = new OverrideMapStore(() => 1_000_000);
    const limiter = createLimiter({
      store,
      policy: [
        fixedWindow({ limit: 5, window: '1d', name: 'enforced' }),
        tokenBucket({ limit: 1, interval: '1d', name: 'watched', shadow: true }),
      ],
      overrides: true,
    });
    await limiter.override('s', { limit: { enforced: 7, watched: 0 }, until: 1_000_000 + HOUR });
    const d = await limiter.limit('s');
    expect([d.allowed, d.shadowDenied, d.limit, d.remaining]).toEqual([true, true, 7, 6]);
    expect(d.binding).toBe(d.policies[0]);
    expect(d.policies[0]!.override).toEqual({ limit: 7, until: 1_000_000 + HOUR });
    expect(d.shadowed![0]!.override).toEqual({ limit: 0, until: 1_000_000 + HOUR });
    expect(d.shadowed![0]!.limit, 'a block keeps the own limit').toBe(1);
    expect(d.override).toEqual({ until: 1_000_000 + HOUR });
  });

  it('onDecision and telemetry see which decisions an override took part in', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: HOUR });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const events: DecisionEvent[] = [];
    const limiter = createLimiter({
      store: new OverrideMapStore(() => 1_000_000),
      policy: fixedWindow({ limit: 5, window: '1d', name: 'w' }),
      overrides: true,
      onDecision: (e) => events.push(e),
      telemetry: openTelemetry({ meterProvider, traces: false }),
    });
    await limiter.limit('plain');
    await limiter.override('vip', { limit: 50, until: 1_000_000 + HOUR });
    await limiter.limit('vip');
    expect(events.map((e) => e.decision?.override)).toEqual([
      undefined,
      { until: 1_000_000 + HOUR },
    ]);
    await meterProvider.forceFlush();
    const metrics = exporter
      .getMetrics()
      .at(-1)!
      .scopeMetrics.flatMap((s) => s.metrics);
    const decisions = metrics.find((m) => m.descriptor.name === 'floodgate.decisions')!;
    expect(decisions.dataPoints.map((p) => p.attributes['floodgate.override'])).toEqual([
      undefined,
      true,
    ]);
  });

  it('mergeDecisions keeps the earliest end of the overrides that took part', async () => {
    const store = new OverrideMapStore(() => 1_000_000);
    const a = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1d' }),
      prefix: 'a',
      overrides: true,
    });
    const b = createLimiter({
      store,
      policy: slidingWindow({ limit: 5, window: '1h' }),
      prefix: 'b',
      overrides: true,
    });
    await a.override('m', { limit: 9, until: 1_000_000 + 2 * HOUR });
    await b.override('m', { limit: 8, until: 1_000_000 + HOUR });
    const merged = mergeDecisions([await a.limit('m'), await b.limit('m')]);
    expect(merged.override).toEqual({ until: 1_000_000 + HOUR });
    expect(merged.policies.map((p) => p.limit)).toEqual([9, 8]);
    expect(mergeDecisions([await a.limit('other'), await b.limit('other')]).override).toBe(
      undefined,
    );
  });
});

describe('the scripts of limiters with and without overrides', () => {
  const policies = [
    tokenBucket({ limit: 5, interval: '1s' }),
    fixedWindow({ limit: 9, window: '1h', blockFor: '1m' }),
  ];

  it('without: the script reads no override key; with: one more key per policy, read by GET', () => {
    const plain = scriptFor(policies);
    const over = scriptFor(policies, true);
    expect(plain.sha1).not.toBe(over.sha1);
    expect(plain.source).not.toMatch(/\bov\b/);
    expect(over.source.split('\n')[0]).toBe(
      '-- Floodgate limit script: tokenBucket + fixedWindow (blockFor), with overrides',
    );
    // Policies' keys, the block key, then the two override keys.
    expect(over.source).toContain("redis.call('GET', KEYS[4])");
    expect(over.source).toContain("redis.call('GET', KEYS[5])");
    expect(batchScriptFor(policies).keysPerCall).toBe(3);
    expect(batchScriptFor(policies, true)).toMatchObject({ keysPerCall: 5, repeats: false });
    expect(batchScriptFor(policies, true).argsPerCall).toBe(
      argCount(['tokenBucket', 'fixedWindow'], [false, true]),
    );
  });

  it('with: seven reply fields per policy, the override read back from the last two', () => {
    const reply = [1, 4, 100, 0, 0, 2_000_000, 7, 0, 0, 500, 500, 0, 0, 0, 123];
    const { results, time } = decodeScriptReply(reply, 2, true);
    expect(time).toBe(123);
    expect(results[0]).toEqual({
      allowed: true,
      remaining: 4,
      resetAfterMs: 100,
      retryAfterMs: 0,
      delayMs: 0,
      override: { limit: 7, until: 2_000_000 },
    });
    expect(results[1]!.override).toBe(undefined);
    expect(() => decodeScriptReply(reply, 2)).toThrow(/unexpected reply/);
  });
});
