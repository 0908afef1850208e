// One hot identity past one Redis (issue #16): four app-server processes, each with its own
// ioredis connection, call for one identity with 256 in flight; without slices every decision is
// Redis's, with withSlices most are answered in-process from leased slices. Then the same four
// processes with the limit binding, to measure what slices admit beyond the policy.
import { fork } from 'node:child_process';
import { median } from './measure.mjs';

const WORKER = new URL('./slices-worker.mjs', import.meta.url);
const PROCESSES = 4;
const IN_FLIGHT = 256;
/** Nothing is denied: the throughput runs measure the admission path. */
const UNBOUNDED = { kind: 'tokenBucket', limit: 1_000_000_000, interval: '1h' };
export const SLICE_CONTENDERS = [
  { name: 'without slices', size: 0 },
  { name: 'withSlices size 100', size: 100 },
  { name: 'withSlices size 1000', size: 1000 },
];

async function startWorkers(url) {
  return Promise.all(
    Array.from({ length: PROCESSES }, () => {
      const w = fork(WORKER, [url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      return new Promise((resolve, reject) => {
        w.once('exit', (code) => reject(new Error(`slices worker exited with ${code}`)));
        w.once('message', () => resolve(w));
      });
    }),
  );
}

async function scriptStats(admin) {
  const info = String(await admin.info('commandstats'));
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  return { calls, usec };
}

/** One run on every process at once; decisions/s over the wall time from start to the last answer. */
async function runAll(workers, admin, spec) {
  const before = await scriptStats(admin);
  const startAt = Date.now() + 200;
  const results = await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          w.once('message', resolve);
          w.send({ type: 'run', inFlight: IN_FLIGHT, startAt, ...spec });
        }),
    ),
  );
  const after = await scriptStats(admin);
  const errors = results.flatMap((r) => r.errors);
  if (errors.length > 0) throw new Error(`slices: worker errors: ${errors.join('; ')}`);
  const admitted = results.reduce((s, r) => s + r.admitted, 0);
  const denied = results.reduce((s, r) => s + r.denied, 0);
  const seconds = (Math.max(...results.map((r) => r.endedAt)) - startAt) / 1000;
  const firsts = results.map((r) => r.firstAdmit).filter((t) => typeof t === 'number');
  return {
    admitted,
    denied,
    decisions: admitted + denied,
    perSecond: (admitted + denied) / seconds,
    scripts: after.calls - before.calls,
    scriptUsec: after.usec - before.usec,
    firstAdmit: Math.min(...firsts),
    lastAdmit: Math.max(...results.map((r) => r.lastAdmit)),
    windows: results.map((r) => r.windows),
  };
}

/**
 * Admissions per fixed window, from each admission's `w0:w1` (the windows around its call):
 * `definite` those whose call began and ended in the window, `possible` those that may have
 * happened in it. A window's admissions lie between the two.
 */
function perWindow(windows) {
  const out = new Map();
  const at = (w) => {
    let x = out.get(w);
    if (x === undefined) {
      x = { definite: 0, possible: 0 };
      out.set(w, x);
    }
    return x;
  };
  for (const counts of windows) {
    for (const [k, n] of Object.entries(counts)) {
      const [w0, w1] = k.split(':').map(Number);
      if (w0 === w1) at(w0).definite += n;
      for (let w = w0; w <= w1; w++) at(w).possible += n;
    }
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]).map(([w, x]) => ({ w, ...x }));
}

export async function benchSlices(config, redis, log) {
  const workers = await startWorkers(redis.server.url);
  try {
    let n = 0;
    const id = (tag) => `${tag}_${n++}`;
    // Throughput: interleaved repeats, the order rotated each time.
    const runs = new Map(SLICE_CONTENDERS.map((c) => [c.name, []]));
    for (let r = 0; r < config.repeats; r++) {
      for (let i = 0; i < SLICE_CONTENDERS.length; i++) {
        const c = SLICE_CONTENDERS[(i + r) % SLICE_CONTENDERS.length];
        log(`  slices: ${c.name}, run ${r + 1}/${config.repeats}`);
        const x = await runAll(workers, redis.admin, {
          identity: id('hot'),
          policy: UNBOUNDED,
          size: c.size,
          durationMs: config.slicesMs,
        });
        runs.get(c.name).push({
          perSecond: x.perSecond,
          decisions: x.decisions,
          denied: x.denied,
          scriptsPerDecision: x.scripts / x.decisions,
          redisUsPerDecision: x.scriptUsec / x.decisions,
        });
      }
    }
    const throughput = SLICE_CONTENDERS.map((c) => {
      const rs = runs.get(c.name);
      return {
        name: c.name,
        size: c.size,
        runs: rs,
        perSecond: median(rs.map((x) => x.perSecond)),
        scriptsPerDecision: median(rs.map((x) => x.scriptsPerDecision)),
        redisUsPerDecision: median(rs.map((x) => x.redisUsPerDecision)),
        denied: rs.reduce((s, x) => s + x.denied, 0),
      };
    });

    // The limit binding, on limits where the promised bound (processes × size) is 1 % of the
    // limit. fixedWindow: every window's admissions against its limit (promised: none beyond).
    const fw = { kind: 'fixedWindow', limit: 400_000, window: 2000 };
    log('  slices: fixedWindow 400 000 per 2 s, size 1000, limit binding');
    const fwRun = await runAll(workers, redis.admin, {
      identity: id('fw'),
      policy: fw,
      size: 1000,
      durationMs: config.slicesBindingMs,
      windowMs: fw.window,
    });
    const windows = perWindow(fwRun.windows);
    const fixed = {
      limit: fw.limit,
      windowMs: fw.window,
      size: 1000,
      admitted: fwRun.admitted,
      denied: fwRun.denied,
      scriptsPerDecision: fwRun.scripts / fwRun.decisions,
      windows,
      // The worst window, counting only admissions surely in it (the others' calls straddle a
      // seam by the wall clock around them).
      worstDefinite: Math.max(...windows.map((x) => x.definite)),
    };

    // tokenBucket: everything admitted over the run against the bucket's bound over that span.
    const buckets = [];
    for (const size of [100, 1000]) {
      const tb = { kind: 'tokenBucket', limit: 400 * size, interval: 1000 };
      log(`  slices: tokenBucket ${tb.limit} per s, size ${size}, limit binding`);
      const x = await runAll(workers, redis.admin, {
        identity: id('tb'),
        policy: tb,
        size,
        durationMs: config.slicesBindingMs,
      });
      const spanMs = x.lastAdmit - x.firstAdmit;
      // A full bucket, plus what refills from the first admission's call to the last's answer
      // (+1: store clocks tick in whole ms).
      const bound = tb.limit + Math.floor(((spanMs + 1) * tb.limit) / tb.interval);
      buckets.push({
        limit: tb.limit,
        intervalMs: tb.interval,
        size,
        admitted: x.admitted,
        denied: x.denied,
        spanMs,
        bound,
        over: x.admitted - bound,
        promised: PROCESSES * size,
        scriptsPerDecision: x.scripts / x.decisions,
      });
    }
    return { processes: PROCESSES, inFlight: IN_FLIGHT, throughput, fixed, buckets };
  } finally {
    for (const w of workers) {
      w.removeAllListeners('exit');
      if (w.connected) w.send({ type: 'exit' });
    }
  }
}
