// What Redis executes per decision, counted in instructions by callgrind (valgrind), which the
// machine's load does not move: the rows of docs/benchmarks.md that compare Redis µs per decision
// read this machine's spread (±20 % between runs), these read the same number every run. Each
// contender runs on its own redis-server started under valgrind, which counts only inside EVALSHA
// and EVAL (so the same work the commandstats usec rows time: the scripts and the commands they
// call, not reading commands or writing replies). A warm-up first (the keys exist, the scripts are
// loaded), then a dump, then the measured decisions, whose count is the second dump's. The last
// column's decisions are each the first of an identity the warm-up did not touch: a window's
// first write (a fixed window's SET with its expiry, where later ones are an INCRBY).
// Batched: 256 in flight through ioredis with auto-pipelining (Floodgate's batches of 64 calls);
// lone: one in flight (one script run per decision). Needs valgrind and redis-server on PATH.
// Run: pnpm --filter @floodgate/bench bench:callgrind (BENCH_CALLGRIND_DECISIONS: decisions per
// count, default 6 400; BENCH_CALLGRIND_POLICIES: which policies, comma-separated, default all five).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { identities } from './config.mjs';
import { policyOf, RLF } from './contenders.mjs';
import { concurrent } from './measure.mjs';

const KEYS = 2_000;
const DECISIONS = Number(process.env.BENCH_CALLGRIND_DECISIONS ?? 6_400);
// The Redis rows' limit and window: never reached in a run.
const LIMIT = 500_000;
const WINDOW_MS = 86_400_000;
const POLICIES = (
  process.env.BENCH_CALLGRIND_POLICIES ?? 'tokenBucket,fixedWindow,slidingWindow,leakyBucket,quota'
).split(',');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server under callgrind, counting inside EVALSHA and EVAL only. */
async function startCounted(dir) {
  const port = await freePort();
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      '--toggle-collect=evalShaCommand',
      '--toggle-collect=evalCommand',
      'redis-server',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const client = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    enableAutoPipelining: true,
    retryStrategy: () => 100,
  });
  // Refused until valgrind has the server listening: retried below.
  client.on('error', () => undefined);
  for (let i = 0; ; i++) {
    try {
      await client.connect();
      await client.ping();
      break;
    } catch (error) {
      if (i > 100) throw error;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    client,
    /** Writes the events counted so far to a file of their own (callgrind_control -d). */
    dump: () => execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' }),
    async stop() {
      await client.shutdown('NOSAVE').catch(() => undefined);
      client.disconnect();
      await exited;
    },
  };
}

/**
 * Waits until callgrind has written the warm-up's dump: `callgrind_control -d` can return before
 * the server has dumped, and decisions made meanwhile would count as warm-up.
 */
async function dumped(file) {
  for (let i = 0; i < 600; i++) {
    try {
      if (/^(?:totals|summary): \d+/m.test(readFileSync(file, 'utf8'))) return;
    } catch {
      // Not there yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`callgrind wrote no ${file}`);
}

/** The instructions of one callgrind dump file (its `totals:` or `summary:` line). */
function instructions(file) {
  const m = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (m === null) throw new Error(`no totals in ${file}`);
  return Number(m[1]);
}

function decider(name, client) {
  if (name === RLF) {
    const rl = new RateLimiterRedis({
      storeClient: client,
      points: LIMIT,
      duration: WINDOW_MS / 1000,
    });
    return (key) => rl.consume(key);
  }
  // Under valgrind Redis runs tens of times slower: a batch could outlast the default timeoutMs
  // and the limiter would decide by its fallback, uncounted. A longer one keeps a deadline in
  // every call (the script's work is the same), and a store error fails the run.
  const limiter = createLimiter({
    store: new IoRedisStore(client),
    policy: policyOf(name, LIMIT, WINDOW_MS),
    timeoutMs: 60_000,
    onStoreError: 'throw',
  });
  return (key) => limiter.limit(key);
}

/**
 * Instructions per decision of `name` with `inFlight` decisions in flight; with `fresh`, each
 * measured decision is the first of its identity (a window's first write).
 */
async function count(name, inFlight, fresh = false) {
  const dir = mkdtempSync(join(tmpdir(), 'fg-callgrind-'));
  try {
    const redis = await startCounted(dir);
    const all = identities(KEYS + (fresh ? DECISIONS : 0));
    const keys = all.slice(0, KEYS);
    const measured = fresh ? all.slice(KEYS) : keys;
    try {
      const decide = decider(name, redis.client);
      await concurrent(decide, keys, KEYS, inFlight);
      redis.dump();
      await dumped(join(dir, 'cg.out.1'));
      const { denied } = await concurrent(decide, measured, DECISIONS, inFlight);
      if (denied !== 0) throw new Error(`${name}: ${denied} denied`);
    } finally {
      await redis.stop();
    }
    // cg.out.1: the warm-up; cg.out: what came after it.
    const files = readdirSync(dir).filter((f) => f.startsWith('cg.out'));
    if (!files.includes('cg.out.1') || !files.includes('cg.out')) {
      throw new Error(`expected two callgrind dumps, found ${files.join(', ')}`);
    }
    // A dump that came after the measured decisions, or decisions decided without Redis, would
    // leave this file nearly empty.
    const counted = instructions(join(dir, 'cg.out'));
    if (counted < DECISIONS * 1000) {
      throw new Error(
        `${name}: ${counted} instructions for ${DECISIONS} decisions: a late dump, or decisions that never reached Redis?`,
      );
    }
    return counted / DECISIONS;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const name of [RLF, ...POLICIES]) {
  const batched = await count(name, 256);
  const lone = await count(name, 1);
  const first = await count(name, 1, true);
  rows.push({ name, batched, lone, first });
  process.stderr.write(
    `  ${name}: ${Math.round(batched)} batched, ${Math.round(lone)} lone, ${Math.round(first)} first\n`,
  );
}
const rlf = rows[0];
const k = (n) => `${(n / 1000).toFixed(1)}k`;
console.log(
  `Redis instructions per decision (callgrind, inside EVALSHA and EVAL; ${DECISIONS} decisions ` +
    `over ${KEYS} keys after a warm-up; limit ${LIMIT} per day)\n`,
);
console.log(
  '| contender | 256 in flight | ÷ RLF | 1 in flight | ÷ RLF | 1 in flight, first of its identity | ÷ RLF |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
const ratio = (r, f) => (r[f] / rlf[f]).toFixed(2);
for (const r of rows) {
  console.log(
    `| ${r.name} | ${k(r.batched)} | ${ratio(r, 'batched')} | ${k(r.lone)} | ${ratio(r, 'lone')} | ${k(r.first)} | ${ratio(r, 'first')} |`,
  );
}
