// Decisions per second, latency, and retries per decision of DenoKvStore on this machine, as the
// README reports them: one process, then several processes on one database file, on many
// identities and on one hot identity. Each process is test/deno/hammer.ts, bundled; Deno runs
// Deno.openKv, Node runs @deno/kv. Not a test: it asserts nothing, it prints.
// Run: pnpm --filter @floodgate/deno-kv measure [label filter]   (files in a temp directory)
import type { HammerReport } from '../test/deno/hammer.js';
import { hammers as bundleHammers, type HammerJob, type Runtime } from '../test/support/hammers.js';

const hammers = await bundleHammers('measure', 'm', 600_000);

async function hammer(runtimes: readonly Runtime[], job: HammerJob): Promise<HammerReport[]> {
  const exits = await hammers.run(runtimes, job);
  return exits.map((exit) => {
    if (exit.code !== 0) throw new Error(exit.stderr);
    return JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as HammerReport;
  });
}

const pct = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

/** Only the runs whose label contains this (the first argument), when given. */
const only = process.argv[2];

async function row(label: string, runtimes: readonly Runtime[], job: HammerJob): Promise<void> {
  if (only !== undefined && !label.includes(only)) return;
  const reports = await hammer(runtimes, job);
  const calls = reports.reduce((n, r) => n + r.latencies.length, 0);
  const first = Math.min(...reports.map((r) => r.firstAt));
  const last = Math.max(...reports.map((r) => r.lastAt));
  const lat = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const total = (f: 'conflicts' | 'busy' | 'commits') => reports.reduce((n, r) => n + r[f], 0);
  const errors = reports.flatMap((r) => r.errors);
  const commits = Math.max(1, total('commits'));
  console.log(
    [
      label.padEnd(58),
      String(Math.round((calls * 1000) / Math.max(1, last - first))).padStart(6),
      pct(lat, 50).toFixed(2).padStart(7),
      pct(lat, 99).toFixed(2).padStart(8),
      (calls / commits).toFixed(2).padStart(7),
      (total('conflicts') / commits).toFixed(2).padStart(7),
      (total('busy') / commits).toFixed(2).padStart(7),
      String(errors.length).padStart(6),
    ].join(' '),
  );
  if (job.inFlight === 1 && runtimes.length > 1) {
    const r = reports.flatMap((x) => x.retries).sort((a, b) => a - b);
    const at = (p: number) => pct(r, p);
    console.log(
      `    retries per decision: p50 ${at(50)}, p90 ${at(90)}, p99 ${at(99)}, p99.9 ${at(99.9)}, max ${r.at(-1)}`,
    );
  }
  for (const e of new Set(errors)) console.log(`    error: ${e}`);
}

console.log(`${'run'.padEnd(58)}  dec/s  p50 ms   p99 ms dec/cmt cfl/cmt bsy/cmt errors`);
const big = 1_000_000; // a limit never reached: every call is admitted, and commits
const many = (rt: Runtime, n: number) => Array.from({ length: n }, () => rt);
for (const rt of ['deno', 'node'] as const) {
  const bucket = { mode: 'bucket', limit: big } as const;
  await row(`${rt}: 1 process, 1 in flight, 1 identity`, [rt], {
    ...bucket,
    calls: 4000,
    inFlight: 1,
  });
  await row(`${rt}: 1 process, 32 in flight, 1000 identities`, [rt], {
    ...bucket,
    calls: 8000,
    inFlight: 32,
    identities: 1000,
  });
  await row(`${rt}: 1 process, 32 in flight, 1 identity`, [rt], {
    ...bucket,
    calls: 8000,
    inFlight: 32,
  });
  await row(`${rt}: 4 processes, 8 in flight each, 1000 identities`, many(rt, 4), {
    ...bucket,
    calls: 2000,
    inFlight: 8,
    identities: 1000,
  });
  await row(`${rt}: 4 processes, 1 in flight each, 1 identity, maxRetries 1000`, many(rt, 4), {
    ...bucket,
    calls: 1000,
    inFlight: 1,
    store: { maxRetries: 1000, busyTimeoutMs: 10_000 },
  });
  await row(`${rt}: 4 processes, 8 in flight each, 1 identity`, many(rt, 4), {
    ...bucket,
    calls: 2000,
    inFlight: 8,
  });
}
hammers.dispose();
