// Concurrency leases across processes: app servers, each its own process, client and store,
// share one Redis. However their acquires interleave, the limit holds at every instant, and a
// holder that dies frees its slot when its lease expires.
import { type ChildProcess, fork } from 'node:child_process';
import { encodeIdentity, policyKey } from '@floodgate/core/store';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { redisCommands } from '../resp.js';
import type { RedisMultiprocessTestsOptions, RedisWorkerSpec } from './multiprocess.js';
import { sleep } from './shared.js';
import type { RedisSuiteApi } from './types.js';
import { WORKER_ENV, type WorkerReply } from './worker.js';

/** The worker's concurrency limiters' keys (worker.ts): prefix, `{identity}`, `concurrency`. */
const leaseKey = (prefix: string, identity: string) =>
  policyKey(prefix, encodeIdentity(identity), 'concurrency');

/** Most intervals that overlap at one instant (a sweep over their starts and ends). */
function maxOverlap(intervals: readonly [number, number][]): number {
  const events = intervals.flatMap(([from, to]) => [
    [from, 1],
    [to, -1],
  ]);
  // At equal times an end comes first: touching intervals do not overlap.
  events.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, step] of events) {
    now += step!;
    most = Math.max(most, now);
  }
  return most;
}

/**
 * Several processes (each `serveRedisWorker`) hold concurrency leases on one Redis: 50
 * concurrent holders per process against a limit of 10 never hold more than 10 leases at once
 * (`ZCARD` sampled without pause from a separate connection, and the holders' own timings), and
 * a holder killed with SIGKILL frees its lease within `leaseMs`.
 * @example
 * A store package's whole `test/multiprocess-leases.test.ts`:
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { redisLeaseMultiprocessTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * redisLeaseMultiprocessTests({ describe, it, expect, beforeAll, afterAll }, {
 *   worker: fileURLToPath(new URL('./worker.ts', import.meta.url)), // `await serveRedisWorker(ADAPTERS)`
 *   workers: [1, 2, 3, 4].map(() => ({ adapter: 'IoRedisStore with ioredis 5' })),
 * });
 * ```
 * @public
 */
export function redisLeaseMultiprocessTests(
  api: RedisSuiteApi,
  options: RedisMultiprocessTestsOptions,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
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

  function start(spec: RedisWorkerSpec): Promise<ChildProcess> {
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
    return new Promise((resolve, reject) => {
      w.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
      w.on('message', (m: WorkerReply & { ready?: boolean }) => {
        if (m.ready) resolve(w);
        else pending.get(m.id)?.(m);
      });
    });
  }

  beforeAll(async () => {
    server = await startRedisServer();
    workers.push(...(await Promise.all(options.workers.map(start))));
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

  describe(`${options.workers.length} processes, one Redis: concurrency leases`, () => {
    it('50 concurrent holders per process against a limit of 10: never more than 10 at once', async () => {
      const key = leaseKey('mp-cc', 'job');
      const samples: number[] = [];
      let sampling = true;
      // ZCARD without pause, 50 pipelined per connection, until the holders are done.
      const sampler = (async () => {
        while (sampling) {
          const replies = await redisCommands(server.port, Array(50).fill(['ZCARD', key]));
          for (const r of replies) samples.push(Number(r));
        }
      })();
      const replies = await Promise.all(
        workers.map((w) => ask(w, { type: 'hold', key: 'job', count: 50, holdMs: 40 })),
      );
      sampling = false;
      await sampler;
      expect(replies.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
      const intervals = replies.flatMap((r) => r.intervals!);
      expect(intervals).toHaveLength(workers.length * 50);
      expect(samples.length).toBeGreaterThan(100);
      expect(Math.max(...samples)).toBeLessThanOrEqual(10);
      // The limit was really under pressure: some sample saw it full.
      expect(Math.max(...samples)).toBe(10);
      // Each holder's [granted, releasing] lies inside its lease's life in Redis; shrunk by 2 ms
      // at each end for clocks of different processes, they still never overlap more than 10.
      expect(maxOverlap(intervals.map(([from, to]) => [from + 2, to - 2]))).toBeLessThanOrEqual(10);
      expect(Number((await redisCommands(server.port, [['EXISTS', key]]))[0])).toBe(0);
    }, 60_000);

    it('a holder killed with SIGKILL frees its lease within leaseMs (1500 ms)', async () => {
      const holder = await start(options.workers[0]!);
      const sent = Date.now();
      const grabbed = await ask(holder, { type: 'grab', key: 'job' });
      expect(grabbed.allowed).toBe(true);
      holder.removeAllListeners('exit');
      const exited = new Promise((r) => holder.once('exit', r));
      holder.kill('SIGKILL');
      await exited;
      const denied = await ask(workers[0]!, { type: 'try', key: 'job' });
      expect(denied.allowed).toBe(false);
      expect(denied.retryAfterMs).toBeLessThanOrEqual(1500);
      let admitted: WorkerReply;
      for (;;) {
        admitted = await ask(workers[1 % workers.length]!, { type: 'try', key: 'job' });
        if (admitted.allowed === true) break;
        await sleep(10);
      }
      // Not freed by the dead connection: only by the lease's expiry, and no later than it
      // (plus the polling step and one round trip).
      expect(admitted.at! - sent).toBeGreaterThanOrEqual(1500 - 5);
      expect(admitted.at! - grabbed.at!).toBeLessThanOrEqual(1500 + 250);
    }, 30_000);
  });
}
