import {
  createLimiter,
  fixedWindow,
  type Limiter,
  type Policy,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { isLeaseStore } from '@floodgate/core/store';
import { type OverrideRequest, serveOverrides } from './multiprocess-overrides.js';
import { openClient, sleep } from './shared.js';
import type { RedisClientOptions, RedisStoreAdapter } from './types.js';

/**
 * What the parent asks a worker over IPC.
 * @example
 * ```ts
 * import type { ChildProcess } from 'node:child_process';
 * import type { WorkerReply, WorkerRequest } from './worker.js';
 *
 * declare const worker: ChildProcess; // a forked worker script, `ready` already received
 * worker.on('message', (reply: WorkerReply) => console.log(reply.id, reply.allowed));
 * const request: WorkerRequest = { type: 'limit', id: 1, limiter: 'tokenBucket', key: 'user-1' };
 * worker.send(request);
 * ```
 */
export type WorkerRequest =
  | { type: 'limit'; id: number; limiter: string; key: string }
  | { type: 'batch'; id: number; requests: { limiter: string; key: string }[] }
  // Concurrency (multiprocess-leases.ts): `count` holders at once, each retrying until it has
  // held a lease for `holdMs`; one lease taken and never released; one attempt, released at once.
  | { type: 'hold'; id: number; key: string; count: number; holdMs: number }
  | { type: 'grab'; id: number; key: string }
  | { type: 'try'; id: number; key: string }
  // Overrides (multiprocess-overrides.ts): set, cleared and decided with by this process.
  | OverrideRequest
  | { type: 'exit' };

/**
 * What a worker answers (`ready` once, first).
 * @example
 * ```ts
 * import type { WorkerReply } from './worker.js';
 *
 * declare const replies: WorkerReply[]; // the answers to one `limit` request per process
 * // A burst on one key over every process: the admissions must add up to the limit.
 * const admitted = replies.filter((r) => r.allowed === true).length;
 * const failed = replies.filter((r) => r.error !== undefined);
 * ```
 */
export interface WorkerReply {
  id: number;
  allowed?: boolean | boolean[];
  remaining?: number;
  resetAfterMs?: number;
  /** The worker's `Date.now()` when the decision came back. */
  at?: number;
  retryAfterMs?: number;
  /** `hold`: each lease's [granted, about to release] times on the worker's `Date.now()`. */
  intervals?: [number, number][];
  error?: string;
}

/** Environment variables the parent sets for each worker. */
export const WORKER_ENV = {
  url: 'REDIS_URL',
  adapter: 'FLOODGATE_ADAPTER',
  clientOptions: 'FLOODGATE_CLIENT_OPTIONS',
} as const;

/**
 * The body of one "app server" process in `redisMultiprocessTests`: its own client (the adapter
 * named by the parent, connected to the parent's server) and store, taking requests over IPC.
 * @example
 * A store package's whole worker script (`test/worker.ts`):
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, serveRedisWorker } from '@floodgate/testkit/redis';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * await serveRedisWorker(ADAPTERS);
 * ```
 * @public
 */
export async function serveRedisWorker<C>(
  adapters: readonly RedisStoreAdapter<C>[],
): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('serveRedisWorker: run it with child_process.fork');
  const name = process.env[WORKER_ENV.adapter];
  const adapter = adapters.find((a) => a.name === name);
  if (adapter === undefined) throw new Error(`serveRedisWorker: no adapter named ${name}`);
  const options = JSON.parse(process.env[WORKER_ENV.clientOptions] ?? '{}') as RedisClientOptions;
  const client = await openClient(adapter, process.env[WORKER_ENV.url]!, options);
  const store = adapter.makeStore(client);
  // onStoreError 'throw': a failing store must show up as an error, never as a fallback decision.
  const make = (policy: Policy, prefix: string): Limiter =>
    // A generous timeout: exact counts are under test, not timeouts, on a loaded machine.
    createLimiter({ store, policy, prefix, onStoreError: 'throw', timeoutMs: 10_000 });
  const limiters: Record<string, Limiter> = {
    tokenBucket: make(tokenBucket({ limit: 100, interval: '1m' }), 'incident-tb'),
    fixedWindow: make(fixedWindow({ limit: 100, window: '1m' }), 'incident-fw'),
    manyTb: make(tokenBucket({ limit: 20, interval: '1d' }), 'many-tb'),
    manyLog: make(slidingWindowLog({ limit: 15, window: '1h' }), 'many-log'),
  };
  if (!isLeaseStore(store)) throw new Error(`serveRedisWorker: ${name} cannot hold leases`);
  // As the limiters above: exact counts are under test, not timeouts.
  const leases = { store, timeoutMs: 10_000 };
  const holding = createConcurrencyLimiter({
    ...leases,
    limit: 10,
    leaseMs: '1m',
    prefix: 'mp-cc',
  });
  const killed = createConcurrencyLimiter({
    ...leases,
    limit: 1,
    leaseMs: 1500,
    prefix: 'mp-kill',
  });
  const holdOnce = async (key: string, holdMs: number): Promise<[number, number]> => {
    for (;;) {
      const lease = await holding.acquire(key);
      if (lease.allowed) {
        const from = Date.now();
        await sleep(holdMs);
        const to = Date.now();
        await lease.release();
        return [from, to];
      }
      await sleep(2 + Math.random() * 8);
    }
  };
  const failed = (id: number) => (e: Error) => send({ id, error: String(e?.cause ?? e) });
  const overrides = serveOverrides(store, send);

  process.on('message', (m: WorkerRequest) => {
    if (overrides(m)) return;
    if (m.type === 'exit') {
      Promise.resolve(adapter.disconnect(client)).finally(() => process.exit(0));
    }
    if (m.type === 'limit') {
      limiters[m.limiter]!.limit(m.key).then(
        (d) =>
          send({
            id: m.id,
            allowed: d.allowed,
            remaining: d.remaining,
            resetAfterMs: d.resetAfterMs,
            at: Date.now(),
          } satisfies WorkerReply),
        failed(m.id),
      );
    }
    if (m.type === 'batch') {
      // Hundreds in flight at once.
      Promise.all(m.requests.map((r) => limiters[r.limiter]!.limit(r.key))).then(
        (ds) => send({ id: m.id, allowed: ds.map((d) => d.allowed) } satisfies WorkerReply),
        failed(m.id),
      );
    }
    if (m.type === 'hold') {
      Promise.all(Array.from({ length: m.count }, () => holdOnce(m.key, m.holdMs))).then(
        (intervals) => send({ id: m.id, intervals } satisfies WorkerReply),
        failed(m.id),
      );
    }
    if (m.type === 'grab' || m.type === 'try') {
      killed.acquire(m.key).then(async (lease) => {
        if (m.type === 'try') await lease.release();
        const at = Date.now();
        send({ id: m.id, allowed: lease.allowed, retryAfterMs: lease.retryAfterMs, at });
      }, failed(m.id));
    }
  });
  send({ ready: true });
}
