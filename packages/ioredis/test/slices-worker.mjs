// One app server of test/slices.test.ts: its own ioredis connection and IoRedisStore, a
// fixedWindow limiter wrapped in withSlices, calling for one identity with many calls in flight.
// Plain ESM over the built packages (run without tsx), as an app would import them.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { withSlices } from '@floodgate/core/slices';
import { IoRedisStore } from '@floodgate/ioredis';
import { Redis } from 'ioredis';

const spec = JSON.parse(process.argv[2]);
const redis = new Redis(spec.url, { lazyConnect: true });
await redis.connect();
const plain = createLimiter({
  store: new IoRedisStore(redis),
  policy: fixedWindow({ limit: spec.limit, window: spec.windowMs }),
  prefix: spec.prefix,
  // Every decision is the store's or an error the test sees: no fallback store, and no deadline
  // that a loaded machine could miss.
  onStoreError: 'throw',
  timeoutMs: false,
});
/** One wrapper per maxAgeMs asked for (undefined: the default). */
const sliced = new Map();
function limiterFor(maxAgeMs) {
  let l = sliced.get(maxAgeMs);
  if (l === undefined) {
    l = withSlices(
      plain,
      maxAgeMs === undefined ? { size: spec.size } : { size: spec.size, maxAgeMs },
    );
    sliced.set(maxAgeMs, l);
  }
  return l;
}

const sleepUntil = (at) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/**
 * A run: `prime` calls one after another at `primeAt` (to take a slice), then from `startAt`
 * for `runMs`, `inFlight` loops calling as fast as answers come. Per admission, the windows (by this machine's wall clock, which is the redis-server's)
 * of the instants just before the call and just after its answer, counted as `w0:w1`: the
 * admission itself happened between them.
 */
async function run(m) {
  const limiter = limiterFor(m.maxAgeMs);
  const admitted = new Map();
  let denied = 0;
  const errors = [];
  const w = spec.windowMs;
  async function call() {
    const t0 = Date.now();
    try {
      const d = await limiter.limit(m.identity);
      const t1 = Date.now();
      if (d.allowed) {
        const k = `${Math.floor(t0 / w)}:${Math.floor(t1 / w)}`;
        admitted.set(k, (admitted.get(k) ?? 0) + 1);
      } else denied++;
      return true;
    } catch (error) {
      errors.push(String(error));
      return false;
    }
  }
  async function loop(until) {
    while (Date.now() < until && (await call())) {
      // Denials answered in-process (the blocked-key cache) would never yield to the event loop.
      if (denied % 256 === 255) await new Promise((r) => setImmediate(r));
    }
  }
  if (m.prime > 0) {
    await sleepUntil(m.primeAt);
    for (let i = 0; i < m.prime; i++) await call();
  }
  await sleepUntil(m.startAt);
  await Promise.all(Array.from({ length: m.inFlight }, () => loop(m.startAt + m.runMs)));
  return { admitted: Object.fromEntries(admitted), denied, errors: errors.slice(0, 5) };
}

process.on('message', async (m) => {
  if (m.type === 'run') process.send({ type: 'result', ...(await run(m)) });
  else if (m.type === 'exit') {
    redis.disconnect();
    process.disconnect();
  }
});
process.send({ type: 'ready' });
