// An "app server" for the cross-process invalidation tests (invalidation.ts): its own client and
// store, limiters with the blocked-key cache on, and a listener of its own on the store's change
// feed, so the parent can wait until this process has heard of a change before it decides.
import { type ChildProcess, fork } from 'node:child_process';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import type { StoreChange } from '@floodgate/core/store';
import { sleep } from './shared.js';
import type { RedisNodeAddress, RedisStoreAdapter } from './types.js';

/**
 * What the parent asks. `limiter`: `'window'` (fixedWindow 2/h), `'blocking'` (the same with
 * `blockFor: '1d'`), `'bounded'` (the window with `blockCache.maxStaleMs` = `BOUNDED_STALE_MS`).
 * @example
 * ```ts
 * import type { InvalidationRequest } from './invalidation-worker.js';
 *
 * const request: InvalidationRequest = { type: 'heard', id: 1, limiter: 'window', key: 'k', count: 1 };
 * ```
 */
export type InvalidationRequest =
  | { type: 'limit' | 'reset' | 'refund'; id: number; limiter: LimiterName; key: string }
  /** Resolves once the feed's state is `state` (`'alive'`: it vouched since it was last down). */
  | { type: 'feed'; id: number; state: 'alive' | 'down' }
  /** Resolves once `count` changes of `key` have been heard; fails after `withinMs` (5 s). */
  | {
      type: 'heard';
      id: number;
      limiter: LimiterName;
      key: string;
      count: number;
      withinMs?: number;
    }
  | { type: 'exit' };

type LimiterName = 'window' | 'blocking' | 'bounded';

/**
 * What a worker answers. `at`: `performance.timeOrigin + performance.now()` (ms, fractional,
 * comparable across processes) when the call resolved, or when the change was heard.
 * @example
 * ```ts
 * import type { InvalidationReply } from './invalidation-worker.js';
 *
 * declare const reply: InvalidationReply;
 * if (reply.reason === 'blocked-cache') console.log('answered from the cache');
 * ```
 */
export interface InvalidationReply {
  id: number;
  allowed?: boolean;
  reason?: string;
  retryAfterMs?: number;
  at?: number;
  error?: string;
}

/** The `'bounded'` limiter's `blockCache.maxStaleMs`. */
export const BOUNDED_STALE_MS = 500;

const ENV = { url: 'REDIS_URL', nodes: 'FLOODGATE_CLUSTER_NODES', adapter: 'FLOODGATE_ADAPTER' };
const PREFIXES: Record<LimiterName, string> = {
  window: 'inv-w',
  blocking: 'inv-b',
  bounded: 'inv-s',
};
const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * The body of an invalidation worker script: `await serveInvalidationWorker(ADAPTERS)`.
 * @example
 * A store package's whole `test/invalidation-worker.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, serveInvalidationWorker } from '@floodgate/testkit/redis';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * await serveInvalidationWorker(ADAPTERS);
 * ```
 * @public
 */
export async function serveInvalidationWorker<C>(
  adapters: readonly RedisStoreAdapter<C>[],
): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('serveInvalidationWorker: run it with fork');
  const adapter = adapters.find((a) => a.name === process.env[ENV.adapter]);
  if (adapter === undefined) throw new Error('serveInvalidationWorker: no adapter by that name');
  const nodes = process.env[ENV.nodes];
  const client =
    nodes === undefined
      ? adapter.create(process.env[ENV.url]!)
      : adapter.createCluster!(JSON.parse(nodes) as RedisNodeAddress[]);
  await adapter.connect(client);
  const store = adapter.makeStore(client);
  const make = (name: LimiterName, blockFor?: '1d'): Limiter =>
    createLimiter({
      store,
      policy: fixedWindow({ limit: 2, window: '1h', ...(blockFor ? { blockFor } : {}) }),
      prefix: PREFIXES[name],
      onStoreError: 'throw',
      timeoutMs: 10_000,
      ...(name === 'bounded' ? { blockCache: { maxStaleMs: BOUNDED_STALE_MS } } : {}),
    });
  // Made before the listener below: the feed tells them first, so a change this process has
  // heard of has already reached their caches.
  const limiters: Record<LimiterName, Limiter> = {
    window: make('window'),
    blocking: make('blocking', '1d'),
    bounded: make('bounded'),
  };
  let state: StoreChange['type'] = 'down';
  const heard = new Map<string, number[]>();
  store.watch?.((change) => {
    if (change.type !== 'identity') {
      if (change.type !== 'missed') state = change.type;
      return;
    }
    const k = `${change.prefix}:${change.identity}`;
    heard.set(k, [...(heard.get(k) ?? []), wallNow()]);
  });
  const until = async (ok: () => boolean, ms = 5000): Promise<boolean> => {
    for (const end = Date.now() + ms; !ok(); await sleep(5)) if (Date.now() > end) return false;
    return true;
  };

  process.on('message', async (m: InvalidationRequest) => {
    if (m.type === 'exit') {
      await Promise.resolve(adapter.disconnect(client)).catch(() => {});
      process.exit(0);
    }
    try {
      if (m.type === 'feed') {
        const ok = await until(() => state === m.state, 10_000);
        send({ id: m.id, ...(ok ? {} : { error: `the feed never became ${m.state}` }) });
      } else if (m.type === 'heard') {
        const times = () => heard.get(`${PREFIXES[m.limiter]}:${m.key}`) ?? [];
        const ok = await until(() => times().length >= m.count, m.withinMs);
        send({ id: m.id, ...(ok ? { at: times()[m.count - 1] } : { error: 'not heard' }) });
      } else if (m.type === 'limit') {
        const d = await limiters[m.limiter].limit(m.key);
        const { allowed, reason, retryAfterMs } = d;
        send({ id: m.id, allowed, retryAfterMs, at: wallNow(), ...(reason ? { reason } : {}) });
      } else {
        await limiters[m.limiter][m.type](m.key);
        send({ id: m.id, at: wallNow() });
      }
    } catch (error) {
      send({ id: m.id, error: String(error) });
    }
  });
  send({ ready: true });
}

/** A request without its id (distributed over the union, as `Omit` alone would not be). */
type Ask = InvalidationRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

/** A forked invalidation worker, from the parent's side. */
export interface InvalidationWorker {
  ask(request: Ask): Promise<InvalidationReply>;
  stop(): Promise<void>;
}

/** Forks `script` with the adapter's name and where Redis is (a URL, or a cluster's nodes). */
export async function forkInvalidationWorker(
  script: string,
  env: { adapter: string; url?: string; nodes?: readonly RedisNodeAddress[] },
  execArgv: readonly string[],
): Promise<InvalidationWorker> {
  const child: ChildProcess = fork(script, [], {
    execArgv: [...execArgv],
    env: {
      ...process.env,
      [ENV.adapter]: env.adapter,
      ...(env.url === undefined ? {} : { [ENV.url]: env.url }),
      ...(env.nodes === undefined ? {} : { [ENV.nodes]: JSON.stringify(env.nodes) }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (r: InvalidationReply) => void>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`invalidation worker exited with ${code}`)));
    child.on('message', (m: InvalidationReply & { ready?: boolean }) => {
      if (m.ready) resolve();
      else pending.get(m.id)?.(m);
    });
  });
  child.removeAllListeners('exit');
  return {
    ask: (request) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        child.send({ ...request, id });
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      if (child.connected) child.send({ type: 'exit' });
      await exited;
    },
  };
}
