import { createLimiter, fixedWindow, leakyBucket } from '@floodgate/core';
import { formatRateLimitHeaders } from '@floodgate/core/headers';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, test } from 'vitest';
import { createEngine } from '../src/shared/engine.js';
import { decisionHeaders } from '../src/shared/response.js';
import type { RateLimitRequest } from '../src/shared/types.js';
import { steadyMemoryStore } from './support/stores.js';

const view = (raw: object = {}): RateLimitRequest => ({
  method: 'GET',
  path: '/',
  route: undefined,
  address: undefined,
  header: () => undefined,
  raw,
});

describe("http sends core's headers for a decision, Retry-After included", () => {
  test('Retry-After is the value core formats, with the jitter range of the settings', async () => {
    const limiter = createLimiter({
      store: new MemoryStore({ now: () => 0 }),
      policy: fixedWindow({ name: 'p', limit: 1, window: '10s' }),
    });
    await limiter.limit('k');
    const denied = await limiter.limit('k');
    for (const u of [0, 0.5, 0.999]) {
      const settings = {
        standard: 'draft-7',
        legacy: true,
        jitterMs: [1_000, 3_000],
        random: () => u,
      } as const;
      const { headers, retryAfter } = decisionHeaders(denied, settings);
      const core = formatRateLimitHeaders(denied, {
        standard: 'draft-7',
        legacy: true,
        retryAfterJitterMs: [1_000, 3_000],
        random: () => u,
      });
      expect(headers).toEqual(core);
      expect(String(retryAfter)).toBe(core['Retry-After']);
    }
    const none = decisionHeaders(denied, {
      standard: false,
      legacy: false,
      jitterMs: [0, 0],
      random: Math.random,
    });
    expect(none).toEqual({ headers: { 'Retry-After': '10' }, retryAfter: 10 });
  });

  test('stacked limiters on one request: the merged decision names the binding policy', async () => {
    const raw = {};
    const wide = createEngine({
      policy: fixedWindow({ name: 'app', limit: 100, window: '1m' }),
      store: new MemoryStore({ now: () => 0 }),
      key: () => 'k',
    });
    const route = createEngine({
      policy: fixedWindow({ name: 'route', limit: 3, window: '1m' }),
      store: new MemoryStore({ now: () => 0 }),
      key: () => 'k',
    });
    const first = await wide.decide(view(raw));
    const second = await route.decide(view(raw));
    expect(first.decision?.binding.name).toBe('app');
    const merged = second.decision!;
    expect(merged.policies.map((p) => p.name)).toEqual(['app', 'route']);
    expect(merged.binding).toBe(merged.policies[1]);
    expect(second.headers.RateLimit).toBe('"app";r=99;t=60, "route";r=2;t=60');
  });

  test('a delay past maxDelayMs is refused: the binding is the refused policy, in the decision', async () => {
    const engine = createEngine({
      policy: [
        fixedWindow({ name: 'minute', limit: 100, window: '1m' }),
        leakyBucket({ name: 'q', limit: 1, interval: '10s', queue: 5 }),
      ],
      store: steadyMemoryStore(),
      key: () => 'k',
      maxDelayMs: 1_000,
    });
    expect((await engine.decide(view())).action).toBe('next');
    const refused = await engine.decide(view());
    expect(refused).toMatchObject({ action: 'respond', status: 429 });
    const d = refused.decision!;
    expect(d.binding).toBe(d.policies[1]);
    expect([d.binding.name, d.binding.allowed]).toEqual(['q', false]);
    expect(Number(refused.headers['Retry-After'])).toBe(Math.ceil(d.retryAfterMs / 1000));
  });
});
