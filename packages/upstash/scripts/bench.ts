// Decisions per second and latency of UpstashStore over HTTP, beside @upstash/ratelimit, both
// through the testkit's bridge (in a process of its own) to one throw-away redis-server, each
// with an @upstash/redis client as it comes (base64 responses, auto-pipelining on, retry off).
// Every decision is admitted (limits far above the load), so each one reaches Redis; both
// in-process caches are off. Rounds rotate the order of the contenders; medians are printed.
// Run: pnpm --filter @floodgate/upstash bench   (redis-server on PATH; @upstash/ratelimit is
// taken from bench/node_modules when it is installed there)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { createLimiter, fixedWindow, type Policy, tokenBucket } from '@floodgate/core';
import { startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from '@upstash/redis';
import { UpstashStore } from '../src/index.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ROUND_MS = Number(process.env.ROUND_MS ?? 1500);
const IN_FLIGHT = [1, 16, 64];
const BIG = 1_000_000_000;

interface RatelimitModule {
  Ratelimit: {
    new (config: object): { limit(id: string): Promise<{ success: boolean }> };
    fixedWindow(tokens: number, window: string): unknown;
    tokenBucket(refill: number, interval: string, max: number): unknown;
  };
}

function loadRatelimit(): RatelimitModule | undefined {
  try {
    return createRequire(new URL('../../../bench/package.json', import.meta.url))(
      '@upstash/ratelimit',
    ) as RatelimitModule;
  } catch {
    return undefined;
  }
}

const server = await startRedisServer();
const child = spawn(
  process.execPath,
  ['--import', 'tsx', 'scripts/bench-bridge.ts', String(server.port)],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
  },
);
const { url, token } = JSON.parse(
  await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout! }).once('line', resolve),
  ),
) as { url: string; token: string };

/** What a client sent so far: HTTP requests, and the commands they carried. */
interface Sent {
  requests: number;
  commands: number;
}

/** A fresh client to the bridge, counting what it sends. */
function client(): { redis: Redis; sent: () => Sent } {
  const redis = new Redis({ url, token, retry: { retries: 0 }, enableTelemetry: false });
  const sent: Sent = { requests: 0, commands: 0 };
  redis.use((req, next) => {
    sent.requests++;
    // A pipeline's body is an array of commands; one command's, an array of strings.
    const body = req.body as unknown[];
    sent.commands += Array.isArray(body[0]) ? body.length : 1;
    return next(req);
  });
  return { redis, sent: () => ({ ...sent }) };
}

type Decide = (id: string) => Promise<boolean>;
interface Contender {
  name: string;
  make(kind: 'fixedWindow' | 'tokenBucket'): { decide: Decide; sent: () => Sent };
}

const floodgate = (batch: boolean): Contender => ({
  name: `Floodgate UpstashStore${batch ? '' : ' (batch: false)'}`,
  make(kind) {
    const { redis, sent } = client();
    const policy: Policy =
      kind === 'fixedWindow'
        ? fixedWindow({ limit: BIG, window: '1h' })
        : tokenBucket({ limit: BIG, interval: '1h' });
    const limiter = createLimiter({
      store: new UpstashStore(redis, { batch }),
      policy,
      prefix: `fg-${batch}`,
      onStoreError: 'throw',
      timeoutMs: 5000, // @upstash/ratelimit's default timeout
      blockCache: false,
    });
    return { decide: async (id) => (await limiter.limit(id)).allowed, sent };
  },
});

const ratelimit = loadRatelimit();
const contenders: Contender[] = [floodgate(true), floodgate(false)];
if (ratelimit !== undefined) {
  const { Ratelimit } = ratelimit;
  contenders.push({
    name: '@upstash/ratelimit',
    make(kind) {
      const { redis, sent } = client();
      const limiter = new Ratelimit({
        redis,
        limiter:
          kind === 'fixedWindow'
            ? Ratelimit.fixedWindow(BIG, '1 h')
            : Ratelimit.tokenBucket(BIG, '1 h', BIG),
        prefix: 'rl',
        analytics: false,
        ephemeralCache: false,
        timeout: 5000,
      });
      return { decide: async (id) => (await limiter.limit(id)).success, sent };
    },
  });
}

interface Sample {
  perSecond: number;
  p50: number;
  p99: number;
  requests: number;
  commands: number;
}

/** `inFlight` callers deciding in a loop for ROUND_MS on random identities of 1000. */
async function round(decide: Decide, sent: () => Sent, inFlight: number): Promise<Sample> {
  const latencies: number[] = [];
  const before = sent();
  const start = performance.now();
  const end = start + ROUND_MS;
  let denied = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        if (!(await decide(`user-${Math.floor(Math.random() * 1000)}`))) denied++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - start;
  if (denied > 0) throw new Error(`${denied} decisions denied: the limits must stay out of reach`);
  const after = sent();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  const n = latencies.length;
  return {
    perSecond: (n / elapsed) * 1000,
    p50: at(0.5),
    p99: at(0.99),
    requests: (after.requests - before.requests) / n,
    commands: (after.commands - before.commands) / n,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = loadavg()[0]!.toFixed(1);
console.log(
  `node ${process.version}, ${ROUNDS} rounds of ${ROUND_MS} ms, load average ${load} at start`,
);
if (ratelimit === undefined)
  console.log('@upstash/ratelimit not found in bench/node_modules: left out');
console.log(
  '\n| policy | in flight | contender | decisions/s | p50 ms | p99 ms | HTTP requests / decision | commands sent / decision |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const kind of ['fixedWindow', 'tokenBucket'] as const) {
  const made = contenders.map((c) => ({ name: c.name, ...c.make(kind) }));
  for (const m of made) await round(m.decide, m.sent, 4); // scripts cached, connections open
  for (const inFlight of IN_FLIGHT) {
    const samples = new Map<string, Sample[]>(made.map((m) => [m.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < made.length; i++) {
        const m = made[(i + r) % made.length]!;
        samples.get(m.name)!.push(await round(m.decide, m.sent, inFlight));
      }
    }
    for (const m of made) {
      const s = samples.get(m.name)!;
      const cell = (f: (x: Sample) => number, digits: number) => median(s.map(f)).toFixed(digits);
      console.log(
        `| ${kind} | ${inFlight} | ${m.name} | ${cell((x) => x.perSecond, 0)} | ${cell((x) => x.p50, 2)} | ${cell((x) => x.p99, 2)} | ${cell((x) => x.requests, 3)} | ${cell((x) => x.commands, 3)} |`,
      );
    }
  }
}
console.log(`\nload average ${loadavg()[0]!.toFixed(1)} at the end`);
child.stdin!.end();
await new Promise((r) => child.once('exit', r));
await server.stop();
