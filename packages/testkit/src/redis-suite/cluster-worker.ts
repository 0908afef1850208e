// An "app server" process on a Redis Cluster: its own cluster client (the adapter the parent
// names) and store, deciding for a list of identities round after round while the parent moves
// slots under it. The parent collects what it admitted and any decision that failed.
import { type ChildProcess, fork } from 'node:child_process';
import { createLimiter, type Decision, fixedWindow, tokenBucket } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { sleep } from './shared.js';
import type { RedisClientOptions, RedisNodeAddress, RedisStoreAdapter } from './types.js';

/**
 * What the parent asks a cluster worker.
 * @example
 * ```ts
 * import type { ChildProcess } from 'node:child_process';
 * import type { ClusterWorkerRequest } from './cluster-worker.js';
 *
 * declare const child: ChildProcess; // a forked cluster worker script
 * // 60 rounds 40 ms apart for two identities, each allowed 20 an hour.
 * const run: ClusterWorkerRequest = { type: 'run', id: 1, prefix: 'rs', identities: ['a', 'b'], limit: 20, rounds: 60, pauseMs: 40 };
 * child.send(run);
 * ```
 */
export type ClusterWorkerRequest =
  | {
      type: 'run';
      id: number;
      prefix: string;
      identities: string[];
      /** fixedWindow limit per identity (a tokenBucket of twice that rides along). */
      limit: number;
      rounds: number;
      pauseMs: number;
    }
  | {
      /**
       * Every identity `rounds` times, all at once, through a limiter with the default
       * `timeoutMs` and fallback (issue 35's burst): a tokenBucket of `limit` a minute.
       */
      type: 'burst';
      id: number;
      prefix: string;
      identities: string[];
      limit: number;
      rounds: number;
      /** The limiter's `timeoutMs`. @default the limiter's default */
      timeoutMs?: number;
    }
  | { type: 'exit' };

/**
 * A worker's answer to `run`: admissions per identity (same order) and failed decisions.
 * @example
 * ```ts
 * import type { ClusterWorkerReply } from './cluster-worker.js';
 *
 * declare const replies: ClusterWorkerReply[]; // one per worker, for the same identities
 * // Admissions per identity over every process: the limit, exactly, if nothing failed.
 * const total = replies[0]!.admitted.map((_, i) => replies.reduce((n, r) => n + r.admitted[i]!, 0));
 * const failed = replies.flatMap((r) => r.errors);
 * ```
 */
export interface ClusterWorkerReply {
  id: number;
  admitted: number[];
  errors: string[];
  /** A burst's decisions that the fallback made, not Redis (`Decision.reason` set). */
  fallback?: number;
  /** The first of those, as `reason@ms` (since the burst began): for a failure's message. */
  fallbacks?: string[];
}

const ENV = {
  nodes: 'FLOODGATE_CLUSTER_NODES',
  adapter: 'FLOODGATE_ADAPTER',
  clientOptions: 'FLOODGATE_CLIENT_OPTIONS',
} as const;

/**
 * The body of a cluster worker script: `await serveRedisClusterWorker(ADAPTERS)`. Decisions run
 * with `onStoreError: 'throw'` and no blocked-key cache: every one goes to Redis, and one that
 * fails is reported, never hidden behind a fallback.
 * @example
 * A store package's whole `test/cluster-worker.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, serveRedisClusterWorker } from '@floodgate/testkit/redis';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * await serveRedisClusterWorker(ADAPTERS);
 * ```
 * @public
 */
export async function serveRedisClusterWorker<C>(
  adapters: readonly RedisStoreAdapter<C>[],
): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('serveRedisClusterWorker: run it with fork');
  const adapter = adapters.find((a) => a.name === process.env[ENV.adapter]);
  if (adapter?.createCluster === undefined) throw new Error('no cluster adapter by that name');
  const nodes = JSON.parse(process.env[ENV.nodes] ?? '[]') as RedisNodeAddress[];
  const options = JSON.parse(process.env[ENV.clientOptions] ?? '{}') as RedisClientOptions;
  const client = adapter.createCluster(nodes, options);
  await adapter.connect(client);
  const store = adapter.makeStore(client);
  process.on('message', async (m: ClusterWorkerRequest) => {
    if (m.type === 'exit') {
      await Promise.resolve(adapter.disconnect(client)).catch(() => {});
      process.exit(0);
    }
    if (m.type === 'burst') {
      send({ id: m.id, errors: [], ...(await burst(store, m)) } satisfies ClusterWorkerReply);
      return;
    }
    const limiter = createLimiter({
      store,
      policy: [
        fixedWindow({ limit: m.limit, window: '1h' }),
        tokenBucket({ limit: m.limit * 2, interval: '1h' }),
      ],
      prefix: m.prefix,
      onStoreError: 'throw',
      timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
      blockCache: false,
    });
    const admitted = m.identities.map(() => 0);
    const errors: string[] = [];
    for (let r = 0; r < m.rounds; r++) {
      await Promise.all(
        m.identities.map((id, i) =>
          limiter.limit(id).then(
            (d) => {
              if (d.allowed) admitted[i]!++;
            },
            (e: Error) => errors.push(String((e as { cause?: unknown }).cause ?? e)),
          ),
        ),
      );
      await sleep(m.pauseMs);
    }
    send({ id: m.id, admitted, errors } satisfies ClusterWorkerReply);
  });
  send({ ready: true });
}

/** A burst (see `ClusterWorkerRequest`): admissions per identity, and fallback decisions. */
export async function burst(
  store: Store,
  m: Pick<
    Extract<ClusterWorkerRequest, { type: 'burst' }>,
    'prefix' | 'identities' | 'limit' | 'rounds' | 'timeoutMs'
  >,
): Promise<{ admitted: number[]; fallback: number; fallbacks: string[] }> {
  const began = performance.now();
  const fallbacks: string[] = [];
  // Every option but the policy and prefix (and a timeoutMs if asked) at its default.
  const limiter = createLimiter({
    store,
    policy: tokenBucket({ limit: m.limit, interval: '1m' }),
    prefix: m.prefix,
    ...(m.timeoutMs === undefined ? {} : { timeoutMs: m.timeoutMs }),
  });
  const calls: Promise<Decision>[] = [];
  for (let r = 0; r < m.rounds; r++) {
    for (const id of m.identities) {
      calls.push(
        limiter.limit(id).then((d) => {
          if (d.reason !== undefined && fallbacks.length < 10) {
            fallbacks.push(`${d.reason}@${Math.round(performance.now() - began)}`);
          }
          return d;
        }),
      );
    }
  }
  const decisions = await Promise.all(calls);
  const admitted = m.identities.map(() => 0);
  let fallback = 0;
  decisions.forEach((d, i) => {
    if (d.reason !== undefined) fallback++;
    else if (d.allowed) admitted[i % m.identities.length]!++;
  });
  return { admitted, fallback, fallbacks };
}

/** What a test that forks cluster workers needs: the adapter, and the worker script. */
export interface ClusterWorkerSetup<C> {
  adapter: RedisStoreAdapter<C>;
  /** The cluster worker script (it calls `serveRedisClusterWorker`). */
  worker: string;
  execArgv?: readonly string[] | undefined;
}

/**
 * A forked cluster worker, from the parent's side.
 * @example
 * ```ts
 * import { type ClusterWorker, forkClusterWorker } from './cluster-worker.js';
 * import { type RedisCluster } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * declare const script: string; // the package's cluster worker script
 * const worker: ClusterWorker = await forkClusterWorker(script, { adapter: 'IoRedisStore with ioredis 5', nodes: cluster.startupNodes });
 * const { admitted } = await worker.run({ prefix: 'rs', identities: ['a'], limit: 20, rounds: 30, pauseMs: 10 });
 * await worker.stop();
 * ```
 */
export interface ClusterWorker {
  run(
    request: Omit<Extract<ClusterWorkerRequest, { type: 'run' }>, 'id' | 'type'>,
  ): Promise<ClusterWorkerReply>;
  /** A burst (`ClusterWorkerRequest` 'burst'): admissions by Redis per identity, fallbacks. */
  burst(
    request: Omit<Extract<ClusterWorkerRequest, { type: 'burst' }>, 'id' | 'type'>,
  ): Promise<ClusterWorkerReply>;
  stop(): Promise<void>;
}

/**
 * Forks `script` (which calls `serveRedisClusterWorker`) and resolves once its client is up.
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { forkClusterWorker } from './cluster-worker.js';
 * import { type RedisCluster } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * const worker = await forkClusterWorker(fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)), {
 *   adapter: 'IoRedisStore with ioredis 5', // an adapter name in the script's list
 *   nodes: cluster.startupNodes,
 *   clientOptions: { autoPipelining: true },
 * });
 * const { admitted, errors } = await worker.run({ prefix: 'rs', identities: ['a', 'b'], limit: 20, rounds: 60, pauseMs: 40 });
 * await worker.stop();
 * ```
 */
export async function forkClusterWorker(
  script: string,
  options: {
    adapter: string;
    nodes: readonly RedisNodeAddress[];
    clientOptions?: RedisClientOptions;
    execArgv?: readonly string[];
  },
): Promise<ClusterWorker> {
  const child: ChildProcess = fork(script, [], {
    execArgv: [...(options.execArgv ?? ['--import', 'tsx'])],
    env: {
      ...process.env,
      [ENV.nodes]: JSON.stringify(options.nodes),
      [ENV.adapter]: options.adapter,
      [ENV.clientOptions]: JSON.stringify(options.clientOptions ?? {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (r: ClusterWorkerReply) => void>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`cluster worker exited with ${code}`)));
    child.on('message', (m: ClusterWorkerReply & { ready?: boolean }) => {
      if (m.ready) resolve();
      else pending.get(m.id)?.(m);
    });
  });
  const ask = (request: object, type: 'run' | 'burst'): Promise<ClusterWorkerReply> => {
    const id = next++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      child.send({ ...request, type, id });
    });
  };
  return {
    run: (request) => ask(request, 'run'),
    burst: (request) => ask(request, 'burst'),
    async stop() {
      child.removeAllListeners('exit');
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      if (child.connected) child.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
