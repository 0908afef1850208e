// The knobs of the HTTP section, read once from the environment (see bench/doc/http.md).

function int(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${name} must be an integer ≥ 1, got ${raw}`);
  return n;
}

function list(name, known) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return known;
  const values = raw.split(',').map((s) => s.trim());
  for (const v of values) {
    if (!known.includes(v)) throw new Error(`${name}: unknown "${v}" (known: ${known.join(', ')})`);
  }
  return values;
}

export const httpConfig = Object.freeze({
  /** Seconds of load per timed run. */
  seconds: int('BENCH_HTTP_SECONDS', 3),
  /** Seconds of untimed load on each fresh server (JIT, connections, first window). */
  warmupSeconds: int('BENCH_HTTP_WARMUP_SECONDS', 1),
  /** autocannon connections (each keeps one request in flight). */
  connections: int('BENCH_HTTP_CONNECTIONS', 50),
  /** Distinct x-api-key values, cycled through by every connection. */
  identities: int('BENCH_HTTP_IDENTITIES', 100),
  /** The limit per identity and window of the mostly-denied runs. */
  deniedLimit: int('BENCH_HTTP_DENIED_LIMIT', 10),
  /** The window of every limiter, ms. */
  windowMs: int('BENCH_HTTP_WINDOW_MS', 60_000),
  frameworks: list('BENCH_HTTP_FRAMEWORKS', ['express', 'fastify', 'hono']),
  stores: list('BENCH_HTTP_STORES', ['memory', 'redis']),
  /** A directory: every server runs under --cpu-prof and writes its profile there. */
  profileDir: process.env.BENCH_HTTP_PROFILE_DIR || undefined,
});

/** Far above what any run can send in a window: every request is admitted. */
export const NEVER = 1_000_000_000;

/** The identity header every app keys by, and the one route every app serves. */
export const HEADER = 'x-api-key';
export const ROUTE = '/hello';
