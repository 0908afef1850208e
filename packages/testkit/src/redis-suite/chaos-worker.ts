import { createLimiter, fixedWindow } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { openClient } from './shared.js';
import type { RedisStoreAdapter } from './types.js';

/**
 * The chaos run's policy: every worker decides on the same identities with it.
 * @example
 * ```ts
 * import { CHAOS_POLICY, type ChaosReport } from './chaos-worker.js';
 *
 * declare const report: ChaosReport;
 * // Admissions per identity and policy window: at most CHAOS_POLICY.limit where no fault came near.
 * const perWindow = new Map<string, number>();
 * for (const [identity, now] of report.log) {
 *   const key = `${identity}@${now - (now % CHAOS_POLICY.windowMs)}`;
 *   perWindow.set(key, (perWindow.get(key) ?? 0) + 1);
 * }
 * ```
 */
export const CHAOS_POLICY = fixedWindow({ limit: 10, window: '1s' });
export const CHAOS_IDENTITIES = 5;

/**
 * One admission as a chaos worker logs it: identity index, when (the start of the window Redis
 * counted it in, or the fallback's clock), its reason.
 * @example
 * ```ts
 * import type { ChaosEntry, ChaosReport } from './chaos-worker.js';
 *
 * declare const report: ChaosReport;
 * // The admissions the fallback made rather than Redis.
 * const fromFallback: ChaosEntry[] = report.log.filter(([, , reason]) => reason.startsWith('store-'));
 * ```
 */
export type ChaosEntry = [identity: number, now: number, reason: string];

/**
 * What a chaos worker sends back when told to stop.
 * @example
 * ```ts
 * import { fork } from 'node:child_process';
 * import type { ChaosReport } from './chaos-worker.js';
 *
 * declare const worker: ReturnType<typeof fork>; // a forked chaos worker script
 * const report = await new Promise<ChaosReport>((resolve) => {
 *   worker.on('message', (m: { report?: ChaosReport }) => m.report && resolve(m.report));
 *   worker.send({ type: 'stop' });
 * });
 * if (report.unhandled > 0 || report.errors.length > 0) throw new Error(report.errors.join('\n'));
 * ```
 */
export interface ChaosReport {
  /** Every admission (denials are not logged: there are far too many). */
  log: ChaosEntry[];
  /** Starts of the policy windows in which the store failed to make a decision (`reason: 'store-…'`). */
  failures: number[];
  unhandled: number;
  errors: string[];
}

/**
 * One "app server" of the chaos run: its own client and store (through the parent's fault
 * proxy), deciding in a loop on shared identities and logging every decision with the time the
 * store decided it at, until the parent says stop. Then it reports, closes its client, and must
 * exit by itself: a timer or socket left behind would keep it alive, and the parent checks.
 * A store package's chaos worker script is just `await serveChaosWorker(ADAPTERS)`.
 * @example
 * A store package's whole `test/chaos-worker.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, serveChaosWorker } from '@floodgate/testkit/redis';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * await serveChaosWorker(ADAPTERS);
 * ```
 * @public
 */
export async function serveChaosWorker<C>(
  adapters: readonly RedisStoreAdapter<C>[],
): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('serveChaosWorker: run it with child_process.fork');
  const adapter = adapters.find((a) => a.name === process.env.FLOODGATE_ADAPTER);
  if (adapter === undefined) throw new Error(`no adapter named ${process.env.FLOODGATE_ADAPTER}`);
  let unhandled = 0;
  process.on('unhandledRejection', () => {
    unhandled++;
  });
  const client = await openClient(adapter, process.env.REDIS_URL!, { reconnectMs: 100 });
  // Decisions run one at a time. `decidedAt` is the time the store sent to Redis with the call
  // (read synchronously at the start of its evaluate); other clock reads (the blocked-key cache,
  // a fallback) only set `last`, which dates decisions Redis did not make.
  let last = 0;
  let decidedAt = 0;
  let inStore = false;
  const now = () => {
    last = Date.now();
    if (inStore) decidedAt = last;
    return last;
  };
  const redis = adapter.makeStore(client, { clock: 'client', now });
  const store: Store = {
    remote: true,
    now: () => redis.now!(),
    fallback: () => redis.fallback!(),
    reset: (keys) => redis.reset(keys),
    evaluate(call) {
      inStore = true;
      try {
        return redis.evaluate(call);
      } finally {
        inStore = false;
      }
    },
  };
  const limiter = createLimiter({
    store,
    policy: CHAOS_POLICY,
    prefix: 'chaos',
    timeoutMs: 1000, // generous: on a loaded CI machine a shorter one times out with no fault near
    breaker: { failures: 3, cooldownMs: 1000 },
  });
  const log: ChaosEntry[] = [];
  const failures = new Set<number>();
  const errors: string[] = [];
  let running = true;
  process.on('message', (m: { type: string }) => {
    if (m.type === 'stop') running = false;
  });
  send({ ready: true });
  for (let i = 0; running; i++) {
    const identity = i % CHAOS_IDENTITIES;
    last = 0;
    decidedAt = 0;
    try {
      const d = await limiter.limit(`user-${identity}`);
      // Redis counts a caller whose clock is behind the key's in the key's window (time never
      // runs backward for a key), and its reset still counts from the caller's clock: so
      // `decidedAt + resetAfterMs` ends the window Redis counted it in, whatever lag (a starved
      // event loop, a slow network) came between reading the clock and the script running.
      const at = d.reason === undefined ? decidedAt + d.resetAfterMs - CHAOS_POLICY.windowMs : last;
      if (d.allowed) log.push([identity, at, d.reason ?? '']);
      if (d.reason?.startsWith('store-')) failures.add(last - (last % CHAOS_POLICY.windowMs));
    } catch (e) {
      errors.push(String(e));
    }
    // Paced at a few thousand decisions a second: far above the limit, and the IPC log stays small.
    if (i % 10 === 9) await new Promise((r) => setTimeout(r, 2));
  }
  send({ report: { log, failures: [...failures], unhandled, errors } satisfies ChaosReport });
  await adapter.disconnect(client);
  process.disconnect();
}
