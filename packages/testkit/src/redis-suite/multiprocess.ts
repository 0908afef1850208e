// The incident: app servers, each a separate process with its own client and store, share one
// Redis. A client bursts 380 requests in under two seconds through a round-robin balancer; the
// limit holds.
import { type ChildProcess, fork } from 'node:child_process';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { registerOverrideProcesses } from './multiprocess-overrides.js';
import type { RedisClientOptions, RedisSuiteApi } from './types.js';
import { WORKER_ENV, type WorkerReply } from './worker.js';

/**
 * One app-server process: which adapter its client comes from, and how it is built.
 * @example
 * ```ts
 * import type { RedisWorkerSpec } from '@floodgate/testkit/redis';
 *
 * // Four app servers on one client generation, every other one auto-pipelining.
 * const workers: RedisWorkerSpec[] = [0, 1, 2, 3].map((i) => ({
 *   adapter: 'IoRedisStore with ioredis 5',
 *   options: { autoPipelining: i % 2 === 0 },
 * }));
 * ```
 * @public
 */
export interface RedisWorkerSpec {
  /** An adapter's `name`, looked up by `serveRedisWorker` in the worker. */
  adapter: string;
  options?: RedisClientOptions;
}

/**
 * The worker script `redisMultiprocessTests` forks, and one spec per process.
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import type { RedisMultiprocessTestsOptions } from '@floodgate/testkit/redis';
 *
 * // A worker script already compiled to JavaScript needs no tsx.
 * const options: RedisMultiprocessTestsOptions = {
 *   worker: fileURLToPath(new URL('./worker.js', import.meta.url)),
 *   workers: [{ adapter: 'NodeRedisStore with redis 6' }, { adapter: 'NodeRedisStore with redis 5' }],
 *   execArgv: [],
 *   title: 'a rolling upgrade: two client generations, one Redis',
 * };
 * ```
 * @public
 */
export interface RedisMultiprocessTestsOptions {
  /** The package's worker script (absolute path): it calls `serveRedisWorker(adapters)`. */
  worker: string;
  /** One forked process each (at least two; the burst is dealt round-robin over them). */
  workers: readonly RedisWorkerSpec[];
  /** Node flags for the workers. @default ['--import', 'tsx'] (a TypeScript worker script) */
  execArgv?: readonly string[];
  /** The `describe` title. @default `${workers.length} processes, one Redis` */
  title?: string;
}

/**
 * Several Node processes, one store each, one Redis: exact admission counts for a burst on one
 * key (tokenBucket, fixedWindow) and for many keys with hundreds of calls in flight per process.
 * @example
 * A store package's whole `test/multiprocess.test.ts`:
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { redisMultiprocessTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * redisMultiprocessTests({ describe, it, expect, beforeAll, afterAll }, {
 *   worker: fileURLToPath(new URL('./worker.ts', import.meta.url)), // `await serveRedisWorker(ADAPTERS)`
 *   workers: [1, 2, 3, 4].map(() => ({ adapter: 'IoRedisStore with ioredis 5' })),
 * });
 * ```
 * @public
 */
export function redisMultiprocessTests(
  api: RedisSuiteApi,
  options: RedisMultiprocessTestsOptions,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  const NODES = options.workers.length;
  let server: RedisServer;
  const workers: ChildProcess[] = [];
  const pending = new Map<number, (r: WorkerReply) => void>();
  let nextId = 0;

  function ask(worker: ChildProcess, message: object): Promise<WorkerReply> {
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.send({ ...message, id });
    });
  }

  beforeAll(async () => {
    server = await startRedisServer();
    await Promise.all(
      options.workers.map((spec) => {
        const w = fork(options.worker, [], {
          execArgv: [...(options.execArgv ?? ['--import', 'tsx'])],
          env: {
            ...process.env,
            [WORKER_ENV.url]: server.url,
            [WORKER_ENV.adapter]: spec.adapter,
            [WORKER_ENV.clientOptions]: JSON.stringify(spec.options ?? {}),
          },
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        workers.push(w);
        return new Promise<void>((resolve, reject) => {
          w.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
          w.on('message', (m: WorkerReply & { ready?: boolean }) => {
            if (m.ready) resolve();
            else pending.get(m.id)?.(m);
          });
        });
      }),
    );
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) {
      w.removeAllListeners('exit');
      if (w.connected) w.send({ type: 'exit' });
    }
    await Promise.all(
      workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : undefined)),
    );
    await server?.stop();
  });

  /** 380 requests for one key, one every 4 ms, dealt round-robin to the nodes. */
  async function burst(
    limiter: string,
    key: string,
  ): Promise<{ replies: WorkerReply[]; elapsedMs: number }> {
    const started = performance.now();
    const replies = await Promise.all(
      Array.from(
        { length: 380 },
        (_, i) =>
          new Promise<WorkerReply>((resolve) => {
            setTimeout(
              () => ask(workers[i % NODES]!, { type: 'limit', limiter, key }).then(resolve),
              i * 4,
            );
          }),
      ),
    );
    const elapsedMs = performance.now() - started;
    expect(replies.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
    return { replies, elapsedMs };
  }

  describe(options.title ?? `${NODES} processes, one Redis`, () => {
    it('tokenBucket 100/min: 380 requests admit 100 plus what refilled meanwhile, never more', async () => {
      const { replies, elapsedMs } = await burst('tokenBucket', 'api-key-1');
      const admitted = replies.filter((r) => r.allowed === true).length;
      expect(admitted).toBeGreaterThanOrEqual(100);
      expect(admitted).toBeLessThanOrEqual(100 + Math.ceil((elapsedMs * 100) / 60_000) + 1);
      // Every node admitted some: the limit is shared, not split.
      const perNode = Array.from(
        { length: NODES },
        (_, n) => replies.filter((r, i) => i % NODES === n && r.allowed).length,
      );
      expect(perNode.every((c) => c > 0)).toBe(true);
    });

    it('fixedWindow 100/min: never more than 100 in one aligned window', async () => {
      const { replies } = await burst('fixedWindow', 'api-key-2');
      const windows = new Map<number, number[]>();
      for (const r of replies) {
        if (r.allowed !== true) continue;
        // The window an admission was counted in ends at a whole minute: decision time + resetAfterMs.
        const end = Math.round((r.at! + r.resetAfterMs!) / 60_000) * 60_000;
        windows.set(end, [...(windows.get(end) ?? []), r.remaining!]);
      }
      for (const remaining of windows.values()) {
        expect(remaining.length).toBeLessThanOrEqual(100);
        // Each admission in a window saw a different count: no two nodes shared a slot.
        expect(new Set(remaining).size).toBe(remaining.length);
      }
      // 380 > 100: a window that saw the whole burst is full, exactly.
      if (windows.size === 1) expect([...windows.values()][0]).toHaveLength(100);
    });

    it('many keys at once, hundreds in flight per process: exact admission counts per key', async () => {
      const keys = Array.from({ length: 50 }, (_, i) => `tenant-${i}`);
      const limiterOf = (i: number): string => (i % 2 === 0 ? 'manyTb' : 'manyLog');
      const limitOf = (i: number): number => (i % 2 === 0 ? 20 : 15);
      const requests = keys.flatMap((key, i) =>
        Array.from({ length: 10 }, () => ({ limiter: limiterOf(i), key })),
      );
      // Each process gets all 500 requests (10 per key) at once, shuffled differently.
      const replies = await Promise.all(
        workers.map((w, n) => {
          const order = requests
            .map((r, i) => ({ r, sort: (i * (n + 7) * 2654435761) % 4093 }))
            .sort((x, y) => x.sort - y.sort);
          return ask(w, { type: 'batch', requests: order.map((o) => o.r) }).then((reply) => ({
            reply,
            order,
          }));
        }),
      );
      const admitted = new Map<string, number>();
      for (const { reply, order } of replies) {
        expect(reply.error).toBeUndefined();
        (reply.allowed as boolean[]).forEach((ok, i) => {
          if (ok) admitted.set(order[i]!.r.key, (admitted.get(order[i]!.r.key) ?? 0) + 1);
        });
      }
      expect(keys.map((k) => admitted.get(k) ?? 0)).toEqual(keys.map((_, i) => limitOf(i)));
    });

    registerOverrideProcesses(api, NODES, (n, message) => ask(workers[n]!, message));
  });
}
