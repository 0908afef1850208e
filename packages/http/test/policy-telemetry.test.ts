// `rateLimit` builds the limiters of `policy` (a fixed one, or one per distinct policy a function
// returns): each takes `onDecision` and `telemetry` (issue 30, item 11), checked when the
// middleware is built, not at the first request.
import { createLimiter, type DecisionEvent, fixedWindow } from '@floodgate/core';
import type { LimiterTelemetry, Telemetry, TelemetryTarget } from '@floodgate/core/telemetry';
import { describe, expect, it } from 'vitest';
import { rateLimit } from '../src/node/index.js';
import { nodeHarness } from './adapters/node.js';
import { send } from './support/context.js';
import { steadyMemoryStore } from './support/stores.js';

/** A telemetry that keeps what it is told. */
function recording() {
  const bound: TelemetryTarget[] = [];
  const decided: DecisionEvent[] = [];
  const telemetry: Telemetry = {
    bind(target): LimiterTelemetry {
      bound.push(target);
      return { decided: (e) => decided.push(e), storeDuration() {}, breakerChanged() {} };
    },
  };
  return { telemetry, bound, decided };
}

const free = fixedWindow({ name: 'free', limit: 1, window: '1m' });
const pro = fixedWindow({ name: 'pro', limit: 5, window: '1m' });

describe('rateLimit with policy: onDecision and telemetry', () => {
  it('a policy function: every limiter it builds reports to both', async () => {
    const { telemetry, bound, decided } = recording();
    const events: DecisionEvent[] = [];
    const app = await nodeHarness.start({
      store: steadyMemoryStore(),
      prefix: 'tiers',
      policy: (request) => (request.header('x-plan') === 'pro' ? pro : free),
      key: () => 'one-client',
      onDecision: (e) => events.push(e),
      telemetry,
    });
    try {
      const statuses = [];
      for (const plan of ['free', 'free', 'pro']) {
        statuses.push((await send(`${app.url}/`, { 'x-plan': plan })).status);
      }
      expect(statuses).toEqual([200, 429, 200]);
    } finally {
      await app.close();
    }
    expect(bound.map((t) => t.limiter)).toEqual(['tiers', 'tiers']); // one limiter per tier
    const seen = events.map((e) => [e.outcome, e.decision?.binding.name]);
    expect(seen).toEqual([
      ['allowed', 'free'],
      ['denied', 'free'],
      ['allowed', 'pro'],
    ]);
    expect(decided.map((e) => e.outcome)).toEqual(['allowed', 'denied', 'allowed']);
  });

  it('a fixed policy reports too', async () => {
    const { telemetry, decided } = recording();
    const app = await nodeHarness.start({
      store: steadyMemoryStore(),
      policy: free,
      key: () => 'one-client',
      telemetry,
    });
    try {
      await send(`${app.url}/`);
      await send(`${app.url}/`);
    } finally {
      await app.close();
    }
    expect(decided.map((e) => e.outcome)).toEqual(['allowed', 'denied']);
  });

  it('bad values are refused when the middleware is built; with a limiter of your own they have no place', () => {
    const store = steadyMemoryStore();
    const policy = () => free;
    for (const bad of [{ telemetry: {} }, { telemetry: null }, { onDecision: 'log' }]) {
      expect(() => rateLimit({ store, policy, ...(bad as object) })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
    const limiter = createLimiter({ store, policy: free });
    expect(() => rateLimit({ limiter, telemetry: recording().telemetry })).toThrow(
      /only apply to a limiter built from `policy`/,
    );
  });
});

describe('rateLimit with a policy function: limiters per distinct policy', () => {
  it('policies that differ only in blockFor or shadow get limiters of their own', async () => {
    // One count (same kind, name and window): a watched tier, an enforced one, and one with a
    // penalty. Sharing one limiter, the first policy seen would decide for all three.
    const watched = fixedWindow({ name: 'api', limit: 1, window: '1m', shadow: true });
    const enforced = fixedWindow({ name: 'api', limit: 1, window: '1m' });
    const penalized = fixedWindow({ name: 'api', limit: 1, window: '1m', blockFor: '1h' });
    const tiers: Record<string, typeof enforced> = { watched, enforced, penalized };
    const store = steadyMemoryStore();
    const app = await nodeHarness.start({
      store,
      prefix: 'tiers-controls',
      policy: (request) => tiers[request.header('x-tier') ?? 'enforced'],
      key: () => 'one-client',
    });
    try {
      const status = async (tier: string) => (await send(`${app.url}/`, { 'x-tier': tier })).status;
      expect(await status('watched')).toBe(200); // charges the shared count: 1 of 1
      expect(await status('watched')).toBe(200); // would deny: watched only
      expect(await status('enforced')).toBe(429); // the same count, enforced
      expect(await status('penalized')).toBe(429); // denied, and blocked for an hour
    } finally {
      await app.close();
    }
    // The penalty was set by the penalized tier's own limiter: its block key is in the store.
    const blocked = createLimiter({ store, prefix: 'tiers-controls', policy: penalized });
    const d = await blocked.peek('one-client');
    expect(d.retryAfterMs).toBeGreaterThan(60_000);
  });
});
