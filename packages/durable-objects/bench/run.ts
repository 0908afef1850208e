// Decisions per second and latency per decision of DurableObjectStore in workerd (miniflare),
// on this machine: `pnpm bench`. Not a test: numbers, no assertions. Each scenario runs in the
// bench Worker (bench/worker.ts), so the time measured is the Worker → object → SQLite path; the
// last one times whole HTTP requests to the example Worker (Hono) from Node. Each scenario runs
// three times and the fastest run is shown (on a shared machine the others measure neighbours).
// BENCH_STORAGE=<dir> keeps the objects' SQLite files there (say /dev/shm, a tmpfs, to take the
// machine's disk out of the numbers); by default they go to miniflare's temporary directory.
//
// Then the peer, side by side in the same workerd: hono-rate-limiter's Durable Object store
// (`@hono-rate-limiter/cloudflare`, one object per key), installed in the repository's bench/
// package and bundled into the bench Worker from there. Its store against DurableObjectStore,
// and a Hono app with each limiter, fixed window, same limit, never denied. The two contenders
// alternate in order round after round, and each row is the median of the rounds, with the
// ratio Floodgate ÷ peer. BENCH_ONLY=peer runs only this comparison.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { WorkerOptions } from 'miniflare';
import { bundle, COMPATIBILITY_DATE, startWorkerd } from '../test/helpers/workerd.js';

interface Scenario {
  readonly name: string;
  readonly n: number;
  readonly concurrency: number;
  readonly identities: number;
  readonly store: 'per-identity' | 'shards' | 'memory' | 'peer';
  readonly shards?: number;
  /** Run once first on the same identities, so the objects are warm. */
  readonly warm: boolean;
}

interface Result {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'MemoryStore in the isolate (baseline)',
    n: 20_000,
    concurrency: 1,
    identities: 1,
    store: 'memory',
    warm: true,
  },
  {
    name: '1 identity, sequential',
    n: 2_000,
    concurrency: 1,
    identities: 1,
    store: 'per-identity',
    warm: true,
  },
  {
    name: '1 identity, 64 in flight',
    n: 5_000,
    concurrency: 64,
    identities: 1,
    store: 'per-identity',
    warm: true,
  },
  {
    name: '1,000 identities (warm objects), 64 in flight',
    n: 5_000,
    concurrency: 64,
    identities: 1_000,
    store: 'per-identity',
    warm: true,
  },
  {
    name: '1,000 identities, shards: 16, 64 in flight',
    n: 5_000,
    concurrency: 64,
    identities: 1_000,
    store: 'shards',
    shards: 16,
    warm: true,
  },
  {
    name: '1,000 new identities (cold objects), 64 in flight',
    n: 1_000,
    concurrency: 64,
    identities: 1_000,
    store: 'per-identity',
    warm: false,
  },
  {
    name: '1,000 new identities, shards: 16, 64 in flight',
    n: 1_000,
    concurrency: 64,
    identities: 1_000,
    store: 'shards',
    shards: 16,
    warm: false,
  },
];

/** Store-level comparisons: each runs once with Floodgate's store, once with the peer's. */
const PEER_SCENARIOS: Omit<Scenario, 'store'>[] = [
  { name: '1 identity, one at a time', n: 2_000, concurrency: 1, identities: 1, warm: true },
  {
    name: '1,000 identities (warm objects), 64 in flight',
    n: 5_000,
    concurrency: 64,
    identities: 1_000,
    warm: true,
  },
];
/** Rounds per comparison: the store rows are quick, the HTTP rows take seconds a round. */
const ROUNDS = { store: 9, http: 5 };
/** In flight from Node in the whole-app rows: as in the example Worker's row above. */
const HTTP_IN_FLIGHT = 32;

const BENCH_NODE_MODULES = fileURLToPath(new URL('../../../bench/node_modules', import.meta.url));

/**
 * The bench Worker, bundled as test/helpers/workerd.ts bundles fixtures, except that the peer's
 * packages (not dependencies of this package) resolve from the repository's bench/ package.
 */
async function benchWorker(): Promise<WorkerOptions> {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('./worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    external: ['cloudflare:*'],
    nodePaths: [BENCH_NODE_MODULES],
    write: false,
    logLevel: 'silent',
  });
  return {
    name: 'bench',
    modules: true,
    script: out.outputFiles[0]!.text,
    compatibilityDate: COMPATIBILITY_DATE,
    routes: ['bench.test/*'],
    durableObjects: {
      FLOODGATE: { className: 'FloodgateObject', useSQLite: true },
      VIA_RPC: { className: 'ViaRpc', useSQLite: true },
      VIA_FETCH: { className: 'ViaFetch', useSQLite: true },
      // The peer's class needs only storage get/put and an alarm, which either backend has; on
      // SQLite, as Floodgate's, so both write to the same kind of storage.
      PEER: { className: 'DurableObjectRateLimiter', useSQLite: true },
    },
  } as WorkerOptions;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

type Mf = Awaited<ReturnType<typeof startWorkerd>>['mf'];

/** One run of `s` in the bench Worker (after a warm-up run on the same identities if `warm`). */
async function runScenario(
  mf: Mf,
  s: Scenario,
  tag: string,
): Promise<Result & { admitted: number }> {
  const body = (n: number) => JSON.stringify({ ...s, n, tag });
  if (s.warm) {
    const init = { method: 'POST', body: body(Math.min(s.n, 2_000)) };
    await (await mf.dispatchFetch('http://bench.test/', init)).arrayBuffer();
  }
  const res = await mf.dispatchFetch('http://bench.test/', { method: 'POST', body: body(s.n) });
  return (await res.json()) as Result & { admitted: number };
}

/**
 * `total` whole requests from Node to one of the bench Worker's Hono apps, `HTTP_IN_FLIGHT` at a
 * time, key `x-key` taken round-robin from `keys` names (`warm`: each key asked once first).
 */
async function runApp(
  mf: Mf,
  app: 'floodgate' | 'peer',
  tag: string,
  total: number,
  keys: number,
  warm: boolean,
): Promise<Result & { admitted: number }> {
  const drive = async (count: number, latencies?: number[]) => {
    let sent = 0;
    let admitted = 0;
    const lane = async () => {
      while (sent < count) {
        const key = `${tag}-${sent++ % keys}`;
        const t = performance.now();
        const res = await mf.dispatchFetch(`http://bench.test/app/${app}`, {
          headers: { 'x-key': key },
        });
        await res.arrayBuffer();
        latencies?.push(performance.now() - t);
        if (res.status === 200) admitted++;
      }
    };
    await Promise.all(Array.from({ length: HTTP_IN_FLIGHT }, lane));
    return admitted;
  };
  if (warm) await drive(keys);
  const latencies: number[] = [];
  const start = performance.now();
  const admitted = await drive(total, latencies);
  const perSecond = Math.round((total / (performance.now() - start)) * 1000);
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * total))]!;
  return { perSecond, p50Ms: p(0.5), p99Ms: p(0.99), admitted };
}

/** Floodgate and the peer alternating over `rounds`: one row of medians and the ratio. */
async function compare(
  name: string,
  rounds: number,
  n: number,
  run: (who: 'floodgate' | 'peer', round: number) => Promise<Result & { admitted: number }>,
): Promise<void> {
  const rates = { floodgate: [] as number[], peer: [] as number[] };
  const p99s = { floodgate: [] as number[], peer: [] as number[] };
  let denied = 0;
  for (let round = 0; round < rounds; round++) {
    const order =
      round % 2 === 0 ? (['floodgate', 'peer'] as const) : (['peer', 'floodgate'] as const);
    for (const who of order) {
      const r = await run(who, round);
      rates[who].push(r.perSecond);
      p99s[who].push(r.p99Ms);
      denied += n - r.admitted;
    }
  }
  const f = median(rates.floodgate);
  const p = median(rates.peer);
  const ms = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  console.log(
    `${name} | ${f} | ${p} | ${(f / p).toFixed(2)} | ${ms(median(p99s.floodgate))} | ${ms(median(p99s.peer))}${denied > 0 ? ` | ${denied} denied!` : ''}`,
  );
  console.log(`  rounds, floodgate: ${rates.floodgate.join(', ')}; peer: ${rates.peer.join(', ')}`);
}

async function comparePeer(mf: Mf): Promise<void> {
  console.log(`\nload average before the comparison: ${load()}`);
  console.log(
    `against hono-rate-limiter's DO store (median of ${ROUNDS.store} rounds, HTTP ${ROUNDS.http}, order alternating) | Floodgate /s | peer /s | Floodgate ÷ peer | Floodgate p99 ms | peer p99 ms`,
  );
  console.log('--- | ---: | ---: | ---: | ---: | ---:');
  // Each contender keeps its identities across the warm rounds (fewer objects: local workerd
  // holds a file open per object, and tens of thousands of them exhaust its descriptors).
  for (const [i, s] of PEER_SCENARIOS.entries()) {
    await compare(`store: ${s.name}`, ROUNDS.store, s.n, (who) =>
      runScenario(
        mf,
        { ...s, store: who === 'floodgate' ? 'per-identity' : 'peer' },
        `${who}-s${i}`,
      ),
    );
  }
  await compare(
    `Hono app, HTTP from Node, ${HTTP_IN_FLIGHT} in flight, 1,000 warm keys`,
    ROUNDS.http,
    2_000,
    (who) => runApp(mf, who, `${who}-warm`, 2_000, 1_000, true),
  );
  await compare(
    `Hono app, HTTP from Node, ${HTTP_IN_FLIGHT} in flight, a new key each`,
    ROUNDS.http,
    1_000,
    (who, round) => runApp(mf, who, `${who}-new${round}`, 1_000, 1_000, false),
  );
  console.log(`load average after: ${load()}`);
}

async function main(): Promise<void> {
  const bench = await benchWorker();
  const example = {
    name: 'example',
    modules: true,
    script: await bundle('example/worker.ts'),
    compatibilityDate: COMPATIBILITY_DATE,
    routes: ['example.test/*'],
    durableObjects: { FLOODGATE: { className: 'FloodgateObject', useSQLite: true } },
  };
  const dir = process.env.BENCH_STORAGE;
  const persist = dir === undefined ? undefined : `${dir}/floodgate-bench-${process.pid}`;
  const { mf } = await startWorkerd(
    [bench, example] as never,
    persist === undefined ? {} : { persist },
  );
  try {
    console.log(`load average (1, 5, 15 min): ${load()}, on 2 cores`);
    if (process.env.BENCH_ONLY === 'peer') {
      await comparePeer(mf);
      return;
    }
    // The isolate's clock ticks in whole ms: the mean comes from the rate (Little's law).
    console.log('scenario | decisions/s | mean ms | p99 ms');
    console.log('--- | ---: | ---: | ---:');
    let run = 0;
    for (const s of SCENARIOS) {
      let best: Result | undefined;
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await runScenario(mf, s, `s${run++}`);
        if (best === undefined || r.perSecond > best.perSecond) best = r;
      }
      const mean = ((s.concurrency * 1000) / best!.perSecond).toFixed(2);
      console.log(`${s.name} | ${best!.perSecond} | ${mean} | ${best!.p99Ms}`);
    }
    for (const kind of ['rpc', 'fetch']) {
      let best = 0;
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await mf.dispatchFetch(`http://bench.test/${kind}`);
        best = Math.max(best, ((await res.json()) as Result).perSecond);
      }
      const mean = (1000 / best).toFixed(3);
      console.log(`transport alone (no storage), ${kind}, sequential | ${best} | ${mean} | `);
    }
    // Whole requests from Node to the example Worker, one IP per request (each its own object).
    const total = 1_000;
    const start = performance.now();
    let sent = 0;
    const lane = async () => {
      while (sent < total) {
        const ip = `10.0.${(sent >> 8) & 255}.${sent++ & 255}`;
        const res = await mf.dispatchFetch('http://example.test/', {
          headers: { 'cf-connecting-ip': ip },
        });
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 32 }, lane));
    const perSecond = Math.round((total / (performance.now() - start)) * 1000);
    const mean = ((32 * 1000) / perSecond).toFixed(2);
    console.log(
      `HTTP requests from Node to the example Worker, 32 in flight, new IPs | ${perSecond} | ${mean} | `,
    );
    await comparePeer(mf);
  } finally {
    await mf.dispose();
    if (persist !== undefined) rmSync(persist, { recursive: true, force: true });
  }
}

await main();
