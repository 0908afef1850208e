// The chaos run: app-server processes decide on shared identities while Redis is paused, killed
// and restarted, its scripts flushed, and the network between them made slow, stalled, cut or
// refused, at random. Afterwards the logs must show exact limits wherever no fault was near.
import { type ChildProcess, fork } from 'node:child_process';
import { type FaultProxy, startFaultProxy } from '../fault-proxy.js';
import { allKeysWithTtl, rng } from '../redis-inspect.js';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { CHAOS_IDENTITIES, CHAOS_POLICY, type ChaosReport } from './chaos-worker.js';
import { sleep } from './shared.js';
import type { RedisSuiteApi } from './types.js';

/**
 * The chaos run's worker processes, how long it injects faults, and its seed.
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import type { RedisChaosTestsOptions } from '@floodgate/testkit/redis';
 *
 * // Four app servers for five minutes; a failing seed is replayed by passing it again.
 * const options: RedisChaosTestsOptions = {
 *   worker: fileURLToPath(new URL('./chaos-worker.ts', import.meta.url)),
 *   workers: ['IoRedisStore with ioredis 5', 'IoRedisStore with ioredis 5', 'IoRedisStore with ioredis 6', 'IoRedisStore with ioredis 6'],
 *   durationMs: 300_000,
 *   seed: 7,
 * };
 * ```
 * @public
 */
export interface RedisChaosTestsOptions {
  /** The package's chaos worker script (absolute path): it calls `serveChaosWorker(adapters)`. */
  worker: string;
  /** An adapter name per worker process (four in the run). */
  workers: readonly string[];
  /** How long faults are injected. @default 60_000 */
  durationMs?: number;
  /** Seed of the fault schedule. @default 1 */
  seed?: number;
  /** Node flags for the workers. @default ['--import', 'tsx'] */
  execArgv?: readonly string[];
}

type Fault = 'pause' | 'restart' | 'latency' | 'stall' | 'drop' | 'refuse';
const FAULTS: readonly Fault[] = ['pause', 'restart', 'latency', 'stall', 'drop', 'refuse'];
/** After a fault ends: reconnects, the breaker's cooldown and a timeout still ride on it. */
const RECOVERY_MS = 2000;

interface FaultWindow {
  fault: Fault;
  start: number;
  end: number;
}

async function inject(fault: Fault, server: RedisServer, proxy: FaultProxy, ms: number) {
  if (fault === 'pause') {
    process.kill(server.pid, 'SIGSTOP');
    await sleep(ms);
    process.kill(server.pid, 'SIGCONT');
  } else if (fault === 'restart') {
    await server.restart(); // every key and cached script is gone
  } else {
    proxy.set(fault === 'latency' ? 'none' : fault, { latencyMs: fault === 'latency' ? 400 : 0 });
    if (fault === 'refuse') proxy.cutAll();
    await sleep(ms);
    proxy.set('none', { latencyMs: 0 });
  }
}

/**
 * The mixed-fault run of at least a minute: see the file comment. Checks, per identity and
 * fixed window: exactly `limit` admissions by Redis in every window no fault came near; within
 * faults, no more than Redis can have lost to restarts plus what each process's fallback allows;
 * no unhandled rejection anywhere; every key has a TTL; every worker exits by itself.
 * @example
 * A store package's `test/chaos.test.ts`:
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { redisChaosTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * redisChaosTests({ describe, it, expect, beforeAll, afterAll }, {
 *   worker: fileURLToPath(new URL('./chaos-worker.ts', import.meta.url)), // `await serveChaosWorker(ADAPTERS)`
 *   workers: Array.from({ length: 4 }, () => 'IoRedisStore with ioredis 5'), // four app servers
 * });
 * ```
 * @public
 */
export function redisChaosTests(api: RedisSuiteApi, options: RedisChaosTestsOptions): void {
  const { describe, it, expect } = api;
  const duration = options.durationMs ?? 60_000;

  describe(`chaos: ${options.workers.length} processes, faults at random for ${duration / 1000} s`, () => {
    it(
      'limits are exact away from faults, bounded within them, and nothing leaks',
      async () => {
        const server = await startRedisServer();
        const proxy = await startFaultProxy({ target: server });
        const workers: ChildProcess[] = [];
        try {
          const reports: Promise<ChaosReport>[] = [];
          const exits: Promise<number | null>[] = [];
          await Promise.all(
            options.workers.map((adapter) => {
              const w = fork(options.worker, [], {
                execArgv: [...(options.execArgv ?? ['--import', 'tsx'])],
                env: { ...process.env, REDIS_URL: proxy.url, FLOODGATE_ADAPTER: adapter },
                stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
              });
              workers.push(w);
              exits.push(new Promise((resolve) => w.once('exit', (code) => resolve(code))));
              reports.push(
                new Promise((resolve, reject) => {
                  w.on('message', (m: { report?: ChaosReport }) => m.report && resolve(m.report));
                  w.once('exit', (code, signal) =>
                    reject(new Error(`a worker exited (${code ?? signal}) before it reported`)),
                  );
                }),
              );
              return new Promise<void>((resolve) =>
                w.on('message', (m: { ready?: boolean }) => m.ready && resolve()),
              );
            }),
          );

          const random = rng(options.seed ?? 1);
          const faults: FaultWindow[] = [];
          let flushes = 0;
          const end = Date.now() + duration;
          while (Date.now() < end) {
            await sleep(3000 + random() * 3000);
            if (random() < 0.3) {
              await redisCommand(server.port, ['SCRIPT', 'FLUSH']);
              flushes++;
              continue;
            }
            const fault = FAULTS[Math.floor(random() * FAULTS.length)]!;
            const start = Date.now();
            await inject(fault, server, proxy, 500 + random() * 1000);
            faults.push({ fault, start, end: Date.now() });
          }
          await sleep(RECOVERY_MS);
          for (const w of workers) w.send({ type: 'stop' });
          const all = await Promise.all(reports);
          const codes = await Promise.race([
            Promise.all(exits),
            sleep(15_000).then(() => 'some worker did not exit by itself'),
          ]);
          expect(codes).toEqual(options.workers.map(() => 0));
          expect(all.map((r) => r.unhandled)).toEqual(options.workers.map(() => 0));
          expect(all.flatMap((r) => r.errors)).toEqual([]);
          expect(faults.length).toBeGreaterThanOrEqual(Math.floor(duration / 15_000));
          expect(flushes).toBeGreaterThan(0);

          const { limit, windowMs } = CHAOS_POLICY;
          const near = (w: number) =>
            faults.filter((f) => f.start < w + windowMs && f.end + RECOVERY_MS > w);
          // window start → per identity [admitted by Redis, admitted by a fallback]
          const counts = new Map<number, number[][]>();
          // Windows in which some store call failed although no fault was injected near them (a
          // timeout on an overloaded machine): counted and bounded below, not called exact.
          const failedIn = new Set<number>();
          let first = Number.POSITIVE_INFINITY;
          let last = 0;
          for (const r of all) {
            for (const w of r.failures) failedIn.add(w);
            for (const [identity, now, reason] of r.log) {
              first = Math.min(first, now);
              last = Math.max(last, now);
              const w = now - (now % windowMs);
              let row = counts.get(w);
              if (row === undefined) {
                row = Array.from({ length: CHAOS_IDENTITIES }, () => [0, 0]);
                counts.set(w, row);
              }
              row[identity]![reason === '' ? 0 : 1]!++;
            }
          }
          let clean = 0;
          let spurious = 0;
          const after: string[] = [];
          let worstRedis = 0;
          let worstFallback = 0;
          for (let w = first - (first % windowMs) + windowMs; w + windowMs <= last; w += windowMs) {
            const row = counts.get(w) ?? [];
            const hits = near(w);
            for (let identity = 0; identity < CHAOS_IDENTITIES; identity++) {
              const [byRedis, byFallback] = (row[identity] ?? [0, 0]) as [number, number];
              const where = `window ${w}, identity ${identity}, faults ${JSON.stringify(hits)}`;
              if (hits.length === 0 && failedIn.has(w)) {
                if (identity === 0) {
                  spurious++;
                  // What came last before it, and how long before: the summary shows it.
                  const before = faults.filter((f) => f.end <= w).at(-1);
                  after.push(before ? `${before.fault}+${w - before.end}ms` : 'none');
                }
              } else if (hits.length === 0) {
                expect([byRedis, byFallback], where).toEqual([limit, 0]);
                if (identity === 0) clean++;
              } else {
                const restarts = hits.filter((f) => f.fault === 'restart').length;
                worstRedis = Math.max(worstRedis, byRedis);
                worstFallback = Math.max(worstFallback, byFallback);
                // Admissions are logged in the window Redis counted them in (see the worker), so
                // only a restart (every key lost) lets Redis admit a window's limit once more.
                expect(byRedis, where).toBeLessThanOrEqual(limit * (1 + restarts));
                expect(byFallback, where).toBeLessThanOrEqual(limit * options.workers.length);
              }
            }
          }
          // The numbers docs/failure-modes.md quotes.
          console.info(
            `chaos: ${faults.length} faults (${faults.map((f) => f.fault).join(' ')}), ${flushes} ` +
              `script flushes; ${clean} clean windows exact, ${spurious} with an unprovoked ` +
              `(${after.join(' ')}) ` +
              `store failure; worst window near a fault: ${worstRedis} admitted by Redis, ` +
              `${worstFallback} by fallbacks (limit ${limit})`,
          );
          expect(clean).toBeGreaterThanOrEqual(3);
          // A loaded machine (other test files run alongside) can time a call out with no fault near:
          // such windows are not called exact, but most fault-free windows must be clean. (Seen:
          // 0 of 35 alone or in a warm run; 13 of 35 for node-redis in a cold fresh-clone run,
          // where its cluster suites ran beside it.)
          expect(spurious).toBeLessThanOrEqual(clean);

          for (const [key, pttl] of await allKeysWithTtl(server.port)) {
            expect(pttl, key).not.toBe(-1);
          }
        } finally {
          for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
          await proxy.close();
          await server.stop();
        }
      },
      (options.durationMs ?? 60_000) + 120_000,
    );
  });
}
