// One of several processes hammering one identity on one Deno KV file (the exactness tests in
// test/writers.test.ts). Runs in Deno (`Deno.openKv`) or in Node (`openKv` from `@deno/kv`,
// imported from the path the test passes). Waits until every process is ready, then makes its
// calls as fast as it can and prints what it saw (JSON) as its last line.
import { createLimiter, type Policy, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { type DenoKvLike, DenoKvStore, type DenoKvStoreOptions } from '../../src/index.js';

/** What the test tells each process. */
export interface HammerConfig {
  readonly path: string;
  /** `@deno/kv`'s ES module (a file URL), for Node. */
  readonly kvModule: string;
  readonly mode: 'log' | 'bucket' | 'lease';
  readonly limit: number;
  /** Calls this process makes. */
  readonly calls: number;
  /** Calls in flight at once in this process. */
  readonly inFlight: number;
  readonly worker: number;
  readonly workers: number;
  readonly prefix: string;
  /** Identities the calls go to in turn. @default 1 (one hot identity) */
  readonly identities?: number;
  /** Options of each process's store. @default the store's defaults */
  readonly store?: Pick<DenoKvStoreOptions, 'maxRetries' | 'busyTimeoutMs'>;
}

/** What each process reports. */
export interface HammerReport {
  readonly admitted: number;
  readonly denied: number;
  readonly errors: readonly string[];
  readonly conflicts: number;
  readonly busy: number;
  readonly exhausted: number;
  readonly commits: number;
  /** Each call's latency in ms (performance.now), in the order they ended. */
  readonly latencies: readonly number[];
  /**
   * Conflicts while each call was in flight, in the same order: that call's own retries when
   * one call is in flight at a time.
   */
  readonly retries: readonly number[];
  /** Date.now() before its first call and after its last. */
  readonly firstAt: number;
  readonly lastAt: number;
}

type Kv = DenoKvLike & { close(): void };
declare const Deno: { args: string[]; openKv(path: string): Promise<Kv> } | undefined;
declare const process: { argv: string[] };

const onDeno = typeof Deno !== 'undefined';
const config = JSON.parse(onDeno ? Deno!.args[0]! : process.argv[2]!) as HammerConfig;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The KV file, opened by every process at once: the first opens create its tables, and on a
 * loaded machine another's open can find the file locked meanwhile. Tried again for 10 s.
 */
async function open(): Promise<Kv> {
  const openKv = onDeno
    ? (path: string) => Deno!.openKv(path)
    : ((await import(config.kvModule)) as { openKv(p: string): Promise<Kv> }).openKv;
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await openKv(config.path);
    } catch (error) {
      if (Date.now() >= until) throw error;
      await sleep(20);
    }
  }
}

const kv: Kv = await open();
const store = new DenoKvStore(kv, config.store ?? {});
const identities = config.identities ?? 1;

/** Every process writes its ready mark, then waits for all the others'. */
async function barrier(): Promise<void> {
  const mark = (i: number) => ['barrier', config.prefix, String(i)];
  await kv
    .atomic()
    .set(mark(config.worker), new Uint8Array([1]))
    .commit();
  const all = Array.from({ length: config.workers }, (_, i) => mark(i));
  // Bounded: a process that died before its mark must fail the run, not hang the others.
  const until = Date.now() + 30_000;
  for (;;) {
    const entries = await kv.getMany(all);
    const ready = entries.filter((e) => e.versionstamp !== null).length;
    if (ready === config.workers) return;
    if (Date.now() >= until) {
      throw new Error(`barrier: ${ready} of ${config.workers} processes ready after 30 s`);
    }
    await sleep(5);
  }
}

function policyOf(): Policy {
  // The log's window outlasts the run: every admission stays counted.
  if (config.mode === 'log') return slidingWindowLog({ limit: config.limit, window: '1h' });
  return tokenBucket({ limit: config.limit, interval: '1s', burst: config.limit });
}

async function main(): Promise<HammerReport> {
  const rates =
    config.mode === 'lease'
      ? undefined
      : createLimiter({
          store,
          policy: policyOf(),
          prefix: config.prefix,
          blockCache: false,
          onStoreError: 'throw',
          timeoutMs: false,
          breaker: false,
        });
  const leases =
    config.mode === 'lease'
      ? createConcurrencyLimiter({
          store,
          limit: config.limit,
          leaseMs: 3_600_000,
          prefix: config.prefix,
          onStoreError: 'throw',
          timeoutMs: false,
          breaker: false,
        })
      : undefined;
  let admitted = 0;
  let denied = 0;
  const errors: string[] = [];
  const latencies: number[] = [];
  const retries: number[] = [];
  let next = 0;
  await barrier();
  const firstAt = Date.now();
  const lane = async () => {
    while (next < config.calls) {
      const id = `id${next++ % identities}`;
      const t0 = performance.now();
      const c0 = store.stats.conflicts;
      try {
        const allowed =
          rates !== undefined
            ? (await rates.limit(id)).allowed
            : (await leases!.acquire(id)).allowed;
        if (allowed) admitted++;
        else denied++;
      } catch (error) {
        errors.push(error instanceof Error ? error.message : String(error));
      }
      latencies.push(performance.now() - t0);
      retries.push(store.stats.conflicts - c0);
    }
  };
  await Promise.all(Array.from({ length: config.inFlight }, lane));
  const lastAt = Date.now();
  const { conflicts, busy, exhausted, commits } = store.stats;
  return {
    admitted,
    denied,
    errors,
    conflicts,
    busy,
    exhausted,
    commits,
    latencies,
    retries,
    firstAt,
    lastAt,
  };
}

const report = await main();
kv.close();
console.log(JSON.stringify(report));
