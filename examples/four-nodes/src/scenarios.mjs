// The three scenarios as functions that return numbers, so the demo prints them and the test
// asserts them from one source.
import { randomUUID } from 'node:crypto';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  parseDuration,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { burst, startAppNode, startBalancer } from './cluster.mjs';

export const NODES = 4;
export const LIMIT = 100;
export const INTERVAL = '1m';
export const REQUESTS = 380;
export const SPREAD_MS = 1900;

/**
 * Most a token bucket of `limit` per `intervalMs` can admit to one key within `elapsedMs`: a
 * full bucket plus whole tokens refilled meanwhile. Store clocks tick in whole ms, so the first
 * and last decisions can be one tick further apart than the client measured.
 */
export function tokenBucketBound(limit, intervalMs, elapsedMs) {
  return limit + Math.floor(((Math.ceil(elapsedMs) + 1) * limit) / intervalMs);
}

/**
 * Scenarios (1) and (2): four app servers behind a round-robin balancer, one client bursting
 * `requests` for one API key. Without `shared`, each node counts in its own MemoryStore.
 * @param {{ shared?: Awaited<ReturnType<typeof import('./shared-store.mjs').openSharedStore>>,
 *   requests?: number, spreadMs?: number }} [options]
 */
export async function fourNodes({ shared, requests = REQUESTS, spreadMs = SPREAD_MS } = {}) {
  const policy = tokenBucket({ limit: LIMIT, interval: INTERVAL });
  const nodes = [];
  let balancer;
  try {
    for (let i = 1; i <= NODES; i++) {
      const store = shared ? await shared.makeStore() : new MemoryStore();
      nodes.push(await startAppNode({ name: `app-${i}`, store, policy }));
    }
    balancer = await startBalancer(nodes);
    // A fresh key per run: with REDIS_URL the server may still hold the previous run's bucket.
    const apiKey = `key_${randomUUID().slice(0, 8)}`;
    const result = await burst({ port: balancer.port, apiKey, requests, spreadMs });
    const perNode = tokenBucketBound(LIMIT, parseDuration(INTERVAL), result.elapsedMs);
    const stats = nodes.map((n) => ({ ...n.stats, port: n.port }));
    return {
      apiKey,
      requests,
      elapsedMs: result.elapsedMs,
      nodes: stats,
      admitted: stats.reduce((s, n) => s + n.admitted, 0),
      denied: stats.reduce((s, n) => s + n.denied, 0),
      fallback: stats.reduce((s, n) => s + n.fallback, 0),
      ok: result.statuses.get(200) ?? 0,
      tooMany: result.statuses.get(429) ?? 0,
      // One counter admits at most `perNode`; N separate counters admit N times that.
      bound: shared ? perNode : perNode * NODES,
    };
  } finally {
    await balancer?.close();
    await Promise.all(nodes.map((n) => n.close()));
  }
}

export const SEAM_POLICIES = [
  { label: 'fixedWindow', policy: fixedWindow({ limit: LIMIT, window: INTERVAL }) },
  { label: 'slidingWindow', policy: slidingWindow({ limit: LIMIT, window: INTERVAL }) },
  { label: 'slidingWindowLog', policy: slidingWindowLog({ limit: LIMIT, window: INTERVAL }) },
  { label: 'tokenBucket', policy: tokenBucket({ limit: LIMIT, interval: INTERVAL }) },
  // queue = limit - 1: one leaving now plus 99 waiting gives the same capacity as the others.
  {
    label: 'leakyBucket (queue 99)',
    policy: leakyBucket({ limit: LIMIT, interval: INTERVAL, queue: LIMIT - 1 }),
  },
];

/**
 * Scenario (3): on an injected clock, `limit` requests in the last `limit` ms of a window and
 * `limit` more in the first `limit` ms of the next, 1 ms apart, for each policy.
 */
export async function seams() {
  const windowMs = parseDuration(INTERVAL);
  // Any epoch-aligned instant is a seam for fixedWindow; pick one near today for realism.
  const seam = (Math.floor(Date.now() / windowMs) + 1) * windowMs;
  const rows = [];
  for (const { label, policy } of SEAM_POLICIES) {
    let now = 0;
    const limiter = createLimiter({ store: new MemoryStore({ now: () => now }), policy });
    const run = async (from) => {
      let admitted = 0;
      let maxDelayMs = 0;
      for (let i = 0; i < LIMIT; i++) {
        now = from + i;
        const d = await limiter.limit('key_123');
        if (d.allowed) admitted++;
        maxDelayMs = Math.max(maxDelayMs, d.delayMs);
      }
      return { admitted, maxDelayMs };
    };
    const before = await run(seam - LIMIT);
    const after = await run(seam);
    rows.push({
      label,
      kind: policy.kind,
      before: before.admitted,
      after: after.admitted,
      total: before.admitted + after.admitted,
      spanMs: 2 * LIMIT,
      maxDelayMs: Math.max(before.maxDelayMs, after.maxDelayMs),
    });
  }
  return { limit: LIMIT, windowMs, seam, rows };
}
