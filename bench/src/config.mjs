// Every knob of the bench, read once from the environment. Defaults keep the whole run under
// about a minute on a 2-core machine.

function int(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

const SECTIONS = [
  'inprocess',
  'redis',
  'roundtrips',
  'memory',
  'ceiling',
  'blocked',
  'accuracy',
  'eviction',
  'concurrency',
  'overrides',
];
// Run only when BENCH_SECTIONS names them: whole HTTP apps take minutes, not seconds; slices fork
// four processes and write their own part of docs/benchmarks.md (bench/doc/slices.md).
const OPT_IN = ['http', 'slices'];

function sections() {
  const raw = process.env.BENCH_SECTIONS;
  if (raw === undefined || raw === '') return new Set(SECTIONS);
  const list = raw.split(',').map((s) => s.trim());
  for (const s of list) {
    if (!SECTIONS.includes(s) && !OPT_IN.includes(s)) {
      throw new Error(
        `BENCH_SECTIONS: unknown section "${s}" (known: ${[...SECTIONS, ...OPT_IN].join(', ')})`,
      );
    }
  }
  return new Set(list);
}

export const config = Object.freeze({
  /** Timed decisions per in-process run. */
  iterations: int('BENCH_ITERATIONS', 100_000),
  /** Untimed decisions before each in-process run (≥ BENCH_KEYS, so every key exists). */
  warmup: int('BENCH_WARMUP', 20_000, 0),
  /** Distinct identities in the "many keys" in-process scenario. */
  keys: int('BENCH_KEYS', 10_000),
  /** Timed decisions per sequential Redis run (one in flight). */
  redisIterations: int('BENCH_REDIS_ITERATIONS', 5_000),
  /** Timed decisions per concurrent Redis run. */
  redisConcurrentIterations: int('BENCH_REDIS_CONCURRENT_ITERATIONS', 20_000),
  /** Untimed decisions before each Redis run (≥ BENCH_REDIS_KEYS). */
  redisWarmup: int('BENCH_REDIS_WARMUP', 10_000, 0),
  /** Distinct identities in the Redis scenarios. */
  redisKeys: int('BENCH_REDIS_KEYS', 10_000),
  /** Decisions in flight in the concurrent Redis scenarios (comma-separated). */
  concurrency: (process.env.BENCH_CONCURRENCY || '16,256').split(',').map((v) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`BENCH_CONCURRENCY: bad value ${v}`);
    return n;
  }),
  /** Requests per `redis-benchmark` ceiling run. */
  ceilingRequests: int('BENCH_CEILING_REQUESTS', 200_000),
  /** Decisions per blocked-key-cache run. */
  blockedDecisions: int('BENCH_BLOCKED_DECISIONS', 5_000),
  /** Requests in the synthetic bursty trace of the accuracy section. */
  accuracyRequests: int('BENCH_ACCURACY_REQUESTS', 200_000),
  /** Where results.json and docs/benchmarks.md are written ('' = do not write). */
  write: process.env.BENCH_WRITE ?? 'yes',
  /** Decisions counted (and timed) for the round-trip report. */
  roundTripDecisions: int('BENCH_ROUNDTRIP_DECISIONS', 5_000),
  /** Keys written for the memory-per-key report. */
  memoryKeys: int('BENCH_MEMORY_KEYS', 1_000),
  /** MemoryStore's maxKeys in the eviction section; it decides for 10 × as many identities. */
  evictionMaxKeys: int('BENCH_EVICTION_MAX_KEYS', 50_000),
  /** Wall time of each throughput run of the slices section (4 processes, 256 in flight each). */
  slicesMs: int('BENCH_SLICES_MS', 2000),
  /** Wall time of each slices run where the limit binds (over-admission). */
  slicesBindingMs: int('BENCH_SLICES_BINDING_MS', 5000),
  /** Runs per contender and scenario; the table shows the median. */
  repeats: int('BENCH_REPEATS', 3),
  /**
   * Untimed rounds of every contender before the timed repeats of a comparison: a server runs its
   * limiter for hours, so the rows measure code the JIT has compiled, for every contender alike
   * (a first round read up to 1.5× slower than the last for every library, the most for the
   * largest code path).
   */
  warmupRounds: int('BENCH_WARMUP_ROUNDS', 1, 0),
  /** Which parts to run (comma-separated): see SECTIONS. */
  sections: sections(),
  /** The redis-server executable (default: redis-server on PATH). */
  redisServer: process.env.BENCH_REDIS_SERVER || undefined,
});

/** `id_0000000`, `id_0000001`, …: the same identities for every contender. */
export function identities(n) {
  return Array.from({ length: n }, (_, i) => `id_${String(i).padStart(7, '0')}`);
}

/**
 * Identities of the shapes apps count by (issue 35: the shape changes the verdict, so the bench
 * must not pick one): a short id (`u000123`), an API key as a header carries it (`sk_live_` and
 * 24 hex digits), an IPv6 client address (a /64 per identity, as IPv6 clients get them).
 */
export const KEY_SHAPES = Object.freeze({
  'short id': (i) => `u${String(i).padStart(6, '0')}`,
  'API key': (i) =>
    `sk_live_${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}${String(i).padStart(16, '0')}`,
  IPv6: (i) => `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`,
});

/** `n` identities of one of `KEY_SHAPES`. */
export function shapedIdentities(shape, n) {
  const of = KEY_SHAPES[shape];
  return Array.from({ length: n }, (_, i) => of(i));
}
