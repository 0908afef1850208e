// Scenario (4): one hot API key past one Redis. Four app servers (in-process here, each with its
// own store and, on Redis, its own connection) all serve one big tenant, without and with
// withSlices; every caller keeps calling until it is denied, so the window's limit is used up.
import { randomUUID } from 'node:crypto';
import { createLimiter, fixedWindow, parseDuration } from '@floodgate/core';
import { withSlices } from '@floodgate/core/slices';
import { NODES } from './scenarios.mjs';

export const HOT_LIMIT = 10_000;
export const HOT_WINDOW = '1m';
/** 4 servers × 25 units held ahead = 1 % of the limit; none of it past a fixed window's end. */
export const SLICE_SIZE = 25;
/** Calls in flight per app server. */
export const HOT_IN_FLIGHT = 16;

/** The store as given, counting the calls that reach it (evaluate and its synchronous twin). */
function counted(store, count) {
  const s = {
    remote: store.remote,
    isolatesFailures: store.isolatesFailures,
    evaluate(call) {
      count.calls++;
      return store.evaluate(call);
    },
    reset: (keys) => store.reset(keys),
  };
  if (store.evaluateSync) {
    s.evaluateSync = (call) => {
      count.calls++;
      return store.evaluateSync(call);
    };
  }
  if (store.fallback) s.fallback = () => store.fallback();
  if (store.now) s.now = () => store.now();
  return s;
}

/**
 * A run in the middle of a window: the burst takes well under a second, so starting 3 s or more
 * before the window turns keeps it in one window (on this machine's clock, which the throw-away
 * redis-server and MemoryStore share).
 */
export async function awayFromSeam(windowMs) {
  const left = windowMs - (Date.now() % windowMs);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 20));
}

/**
 * @param {{ shared: Awaited<ReturnType<typeof import('./shared-store.mjs').openSharedStore>>,
 *   size: number }} options `size` 0: no slices, every decision is the store's
 */
export async function hotKey({ shared, size }) {
  const policy = fixedWindow({ limit: HOT_LIMIT, window: HOT_WINDOW });
  const windowMs = parseDuration(HOT_WINDOW);
  const count = { calls: 0 };
  const limiters = [];
  for (let i = 0; i < NODES; i++) {
    const plain = createLimiter({
      store: counted(await shared.makeStore(), count),
      policy,
      prefix: 'demo-hot',
      // A decision is the store's or an error, counted: no fallback store to admit beside it.
      onStoreError: 'throw',
    });
    limiters.push(size === 0 ? plain : withSlices(plain, { size }));
  }
  await awayFromSeam(windowMs);
  // A fresh key per run: with REDIS_URL the server may still hold the previous run's window.
  const apiKey = `tenant_${randomUUID().slice(0, 8)}`;
  const perWindow = new Map();
  const nodes = limiters.map(() => ({ admitted: 0, denied: 0, errors: 0 }));
  const started = performance.now();
  // Each caller calls until its first denial. A denial means no slice with room was held then,
  // and any slice leased after it is spent by the caller that leased it, which then carries on:
  // when the last caller stops, no units are left in a slice, and the window's limit was used.
  const caller = async (limiter, node) => {
    for (;;) {
      let d;
      try {
        d = await limiter.limit(apiKey);
      } catch {
        node.errors++;
        return;
      }
      if (!d.allowed) {
        node.denied++;
        return;
      }
      node.admitted++;
      // The window the unit was charged in, by its end (served decisions age the lease's reset).
      const w = Math.round((Date.now() + d.resetAfterMs) / windowMs);
      perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
    }
  };
  await Promise.all(
    limiters.flatMap((l, i) => Array.from({ length: HOT_IN_FLIGHT }, () => caller(l, nodes[i]))),
  );
  const elapsedMs = performance.now() - started;
  const sum = (k) => nodes.reduce((s, n) => s + n[k], 0);
  return {
    apiKey,
    size,
    nodes,
    admitted: sum('admitted'),
    denied: sum('denied'),
    errors: sum('errors'),
    decisions: sum('admitted') + sum('denied'),
    storeCalls: count.calls,
    windows: [...perWindow.values()],
    elapsedMs,
  };
}
