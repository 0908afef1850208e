// withSlices for real: four app servers, each its own Node process with its own ioredis client,
// hammer one identity on one throw-away Redis across several fixed-window seams. No window admits
// more than its limit, and the admissions cost a small fraction of an EVALSHA each.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { commandCalls, type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const WORKER = fileURLToPath(new URL('./slices-worker.mjs', import.meta.url));
const PROCESSES = 4;
const LIMIT = 5000;
const WINDOW_MS = 1000;
const SIZE = 200;
const RUN_MS = 2500;

interface WorkerResult {
  /** Admissions per `w0:w1`: the windows of the instants just before the call and after its answer. */
  admitted: Record<string, number>;
  denied: number;
  errors: string[];
}

let server: RedisServer;
const workers: ChildProcess[] = [];

const SPEC = { limit: LIMIT, windowMs: WINDOW_MS, size: SIZE, prefix: 'slices' };

function start(): Promise<ChildProcess> {
  const w = fork(WORKER, [JSON.stringify({ url: server.url, ...SPEC })], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  workers.push(w);
  return new Promise((resolve, reject) => {
    w.once('exit', (code) => reject(new Error(`slices worker exited with ${code}`)));
    w.once('message', () => resolve(w));
  });
}

interface Load {
  identity: string;
  inFlight: number;
  /** Each process's calls one after another at `primeAt`, before the run (0: none). */
  prime?: number;
  primeAt?: number;
  maxAgeMs?: number;
}

/** Every process calls for `identity` for `runMs` from `startAt`; EVALSHA calls meanwhile. */
async function runAll(load: Load, startAt = Date.now() + 200, runMs = RUN_MS) {
  const before = await commandCalls(server.port);
  const results = await Promise.all(
    workers.map(
      (w) =>
        new Promise<WorkerResult>((resolve) => {
          w.once('message', (m: WorkerResult) => resolve(m));
          w.send({ type: 'run', ...load, startAt, runMs });
        }),
    ),
  );
  const after = await commandCalls(server.port);
  expect(results.flatMap((r) => r.errors)).toEqual([]);
  const spans: [number, number, number][] = [];
  for (const r of results) {
    for (const [k, n] of Object.entries(r.admitted)) {
      const [w0, w1] = k.split(':').map(Number) as [number, number];
      spans.push([w0, w1, n]);
    }
  }
  return {
    spans,
    admitted: spans.reduce((s, x) => s + x[2], 0),
    denied: results.reduce((s, r) => s + r.denied, 0),
    evalsha: (after.evalsha ?? 0) - (before.evalsha ?? 0),
  };
}

/**
 * An admission happened between its call's two instants, inside the window the store charged its
 * unit in (a slice ends before that window does, on the same clock: one machine). So the
 * admissions whose instants all fall within windows a..b are at most LIMIT × (b − a + 1).
 */
function expectWithinLimit(spans: [number, number, number][], seams: number): void {
  const first = Math.min(...spans.map((s) => s[0]));
  const last = Math.max(...spans.map((s) => s[1]));
  expect(last - first).toBeGreaterThanOrEqual(seams);
  for (let a = first; a <= last; a++) {
    for (let b = a; b <= last; b++) {
      const within = spans.filter(([w0, w1]) => w0 >= a && w1 <= b).reduce((s, x) => s + x[2], 0);
      expect(within, `windows ${a - first}..${b - first}`).toBeLessThanOrEqual(LIMIT * (b - a + 1));
    }
  }
}

beforeAll(async () => {
  server = await startRedisServer();
  await Promise.all(Array.from({ length: PROCESSES }, start));
});

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

describe('withSlices: four processes, one Redis, one hot identity', () => {
  it('as fast as answers come: the limit in every window, one EVALSHA per many admissions', async () => {
    const r = await runAll({ identity: 'tenant_hot', inFlight: 64 });
    expectWithinLimit(r.spans, 2); // 2.5 windows cross at least two seams
    expect(r.denied).toBeGreaterThan(0); // the limit bound: the processes asked for more
    // The point of slices: most admissions never reached Redis.
    expect(r.evalsha).toBeGreaterThan(0);
    expect(r.evalsha * 10).toBeLessThan(r.admitted);
  });

  it('slices taken just before a seam end there: the next window still admits only its limit', async () => {
    // Each process takes a slice 300 ms before a seam (a call, then a lease of 1 + SIZE units)
    // and holds SIZE units, trusted for 800 ms, at the seam; from the seam all four hammer. A
    // slice that outlived its window would add up to 4 × SIZE to the next window's LIMIT.
    const seam = Math.ceil((Date.now() + 600) / WINDOW_MS) * WINDOW_MS;
    const r = await runAll(
      {
        identity: 'tenant_seam',
        inFlight: 64,
        prime: 2,
        primeAt: seam - 300,
        maxAgeMs: 800,
      },
      seam,
      400,
    );
    expectWithinLimit(r.spans, 1);
    expect(r.denied).toBeGreaterThan(0); // the window after the seam reached its limit
  });
});
