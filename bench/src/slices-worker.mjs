// One app server of the slices section (bench/src/slices.mjs): its own ioredis connection and
// IoRedisStore; on each `run` message, a limiter (wrapped in withSlices unless size is 0) and
// `inFlight` loops calling for one identity until the run's end.
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { withSlices } from '@floodgate/core/slices';
import { IoRedisStore } from '@floodgate/ioredis';
import { Redis } from 'ioredis';

const redis = new Redis(process.argv[2], { lazyConnect: true });
await redis.connect();
const store = new IoRedisStore(redis);

function limiterOf({ policy, size }) {
  const { kind, ...options } = policy;
  const plain = createLimiter({
    store,
    policy: kind === 'fixedWindow' ? fixedWindow(options) : tokenBucket(options),
    prefix: 'bench_slices',
    // Every decision is the store's (or an error, counted): no fallback, no deadline to miss.
    onStoreError: 'throw',
    timeoutMs: false,
  });
  return size === 0 ? plain : withSlices(plain, { size });
}

/**
 * Calls until `startAt + durationMs`. With `windowMs`, each admission is counted under `w0:w1`,
 * the fixed windows (wall clock, the same as the redis-server's on this machine) of the instants
 * just before the call and just after its answer: it happened between them.
 */
async function run(m) {
  const limiter = limiterOf(m);
  const until = m.startAt + m.durationMs;
  const windows = new Map();
  let admitted = 0;
  let denied = 0;
  let firstAdmit = Number.POSITIVE_INFINITY;
  let lastAdmit = 0;
  const errors = [];
  async function loop() {
    while (Date.now() < until) {
      const t0 = Date.now();
      let d;
      try {
        d = await limiter.limit(m.identity);
      } catch (error) {
        errors.push(String(error));
        return;
      }
      const t1 = Date.now();
      if (d.allowed) {
        admitted++;
        if (t0 < firstAdmit) firstAdmit = t0;
        if (t1 > lastAdmit) lastAdmit = t1;
        if (m.windowMs !== undefined) {
          const k = `${Math.floor(t0 / m.windowMs)}:${Math.floor(t1 / m.windowMs)}`;
          windows.set(k, (windows.get(k) ?? 0) + 1);
        }
      } else {
        denied++;
        // Denials answered in-process (the blocked-key cache) would never yield otherwise.
        if (denied % 256 === 0) await new Promise((r) => setImmediate(r));
      }
    }
  }
  await new Promise((r) => setTimeout(r, Math.max(0, m.startAt - Date.now())));
  await Promise.all(Array.from({ length: m.inFlight }, loop));
  return {
    admitted,
    denied,
    endedAt: Date.now(),
    firstAdmit,
    lastAdmit,
    windows: Object.fromEntries(windows),
    errors: errors.slice(0, 3),
  };
}

process.on('message', async (m) => {
  if (m.type === 'run') {
    try {
      process.send({ type: 'result', ...(await run(m)) });
    } catch (error) {
      process.send({ type: 'result', errors: [String(error)] });
    }
  } else if (m.type === 'exit') {
    redis.disconnect();
    process.disconnect();
  }
});
process.send({ type: 'ready' });
