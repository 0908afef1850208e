// Decisions per second and latency per decision of DurableObjectStore in workerd (miniflare),
// on this machine: `pnpm bench`. Not a test: numbers, no assertions. Each scenario runs in the
// bench Worker (bench/worker.ts), so the time measured is the Worker → object → SQLite path; the
// last one times whole HTTP requests to the example Worker (Hono) from Node. Each scenario runs
// three times and the fastest run is shown (on a shared machine the others measure neighbours).
// BENCH_STORAGE=<dir> keeps the objects' SQLite files there (say /dev/shm, a tmpfs, to take the
// machine's disk out of the numbers); by default they go to miniflare's temporary directory.
import { rmSync } from 'node:fs';
import {
  bundle,
  COMPATIBILITY_DATE,
  fixtureWorker,
  startWorkerd,
} from '../test/helpers/workerd.js';

interface Scenario {
  readonly name: string;
  readonly n: number;
  readonly concurrency: number;
  readonly identities: number;
  readonly store: 'per-identity' | 'shards' | 'memory';
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

async function main(): Promise<void> {
  const bench = await fixtureWorker('bench/worker.ts', {
    name: 'bench',
    routes: ['bench.test/*'],
    durableObjects: {
      FLOODGATE: { className: 'FloodgateObject', useSQLite: true },
      VIA_RPC: { className: 'ViaRpc', useSQLite: true },
      VIA_FETCH: { className: 'ViaFetch', useSQLite: true },
    },
  });
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
    // The isolate's clock ticks in whole ms: the mean comes from the rate (Little's law).
    console.log('scenario | decisions/s | mean ms | p99 ms');
    console.log('--- | ---: | ---: | ---:');
    let run = 0;
    for (const s of SCENARIOS) {
      let best: Result | undefined;
      for (let attempt = 0; attempt < 3; attempt++) {
        const tag = `s${run++}`;
        const body = (n: number) => JSON.stringify({ ...s, n, tag });
        if (s.warm) {
          const init = { method: 'POST', body: body(Math.min(s.n, 2_000)) };
          await (await mf.dispatchFetch('http://bench.test/', init)).arrayBuffer();
        }
        const res = await mf.dispatchFetch('http://bench.test/', {
          method: 'POST',
          body: body(s.n),
        });
        const r = (await res.json()) as Result;
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
  } finally {
    await mf.dispose();
    if (persist !== undefined) rmSync(persist, { recursive: true, force: true });
  }
}

await main();
