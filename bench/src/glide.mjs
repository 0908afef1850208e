// Valkey GLIDE: which script transport GlideStore should use (EVALSHA through customCommand,
// GLIDE's Script + invokeScript, or a Valkey Function with FCALL), and GlideStore against
// rate-limiter-flexible's RateLimiterValkeyGlide on one GLIDE client and one Valkey server.
// Prints Markdown; with a complete comparison (and unless BENCH_WRITE=) also writes
// bench/results-glide.json, bench/doc/glide.md and its section of docs/benchmarks.md.
// Run: pnpm --filter @floodgate/bench bench:glide   (BENCH_SERVER=/path/to/valkey-server)
import { spawnSync } from 'node:child_process';
import { fixedWindow } from '@floodgate/core';
import { encodeScriptArgs, scriptForKinds } from '@floodgate/core/redis';
import { commandCalls, delta, startRedisServer } from '@floodgate/testkit/redis';
import { GlideClient, Logger, Script } from '@valkey/valkey-glide';
import { identities } from './config.mjs';
import { glideContenders, PEER } from './glide-contenders.mjs';
import {
  collectGarbage,
  compare,
  concurrent,
  formatOps,
  median,
  sequential,
  table,
} from './measure.mjs';
import { commandStats } from './redis.mjs';
import { writeGlideReport } from './report.mjs';
import { machine, version } from './versions.mjs';

Logger.setLoggerConfig('off');
const int = (name, fallback) => Number(String(process.env[name] ?? fallback).replaceAll('_', ''));
const SEQUENTIAL = int('BENCH_GLIDE_ITERATIONS', 4_000);
const CONCURRENT = int('BENCH_GLIDE_CONCURRENT_ITERATIONS', 20_000);
const REPEATS = int('BENCH_REPEATS', 3);
const IN_FLIGHT = [1, 16, 256];
const KEYS = identities(1000);
const NEVER = 500_000; // never reached in a run, as in the Redis section
const DAY_MS = 86_400_000;
const log = (line) => process.stderr.write(`${line}\n`);
const out = [];
const print = (text = '') => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};

// RateLimiterValkeyGlide registers its Function with `server.register_function`, which only Valkey
// has: BENCH_SERVER, else valkey-server on PATH, else redis-server (which runs only our rows).
const onPath = (bin) => spawnSync(bin, ['--version']).error === undefined;
const bin =
  process.env.BENCH_SERVER || (onPath('valkey-server') ? 'valkey-server' : 'redis-server');
const server = await startRedisServer({ bin });
const client = await GlideClient.createClient({
  addresses: [{ host: '127.0.0.1', port: server.port }],
  requestTimeout: 10_000,
});
const info = String(await client.customCommand(['INFO', 'server']));
const serverName = /valkey_version:(\S+)/.test(info)
  ? `valkey-server ${/valkey_version:(\S+)/.exec(info)[1]}`
  : `redis-server ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'}`;

const policy = fixedWindow({ limit: NEVER, window: DAY_MS });
const { source, sha1 } = scriptForKinds(['fixedWindow']);
const argsOf = (key) =>
  encodeScriptArgs({ keys: [`fg:{${key}}:w`], policies: [policy], cost: 1, mode: 'limit' });
const script = new Script(source);
// The script body uses KEYS and ARGV: as a function's parameters they mean the same.
const library = `#!lua name=floodgate_bench\nredis.register_function('fg_fixed', function(KEYS, ARGV)\n${source}\nend)`;
const decided = (reply) => ({ allowed: Array.isArray(reply) && Number(reply[0]) === 1 });
const fcall = (k) => client.customCommand(['FCALL', 'fg_fixed', '1', `fg:{${k}}:w`, ...argsOf(k)]);
const transports = [
  {
    name: 'EVALSHA (customCommand; EVAL after NOSCRIPT)',
    setup: async () => {
      await client.customCommand(['SCRIPT', 'LOAD', source]);
      const tail = (k) => ['1', `fg:{${k}}:w`, ...argsOf(k)];
      return {
        decide: async (k) => decided(await client.customCommand(['EVALSHA', sha1, ...tail(k)])),
      };
    },
  },
  {
    name: 'Script + invokeScript',
    setup: async () => ({
      decide: async (k) =>
        decided(await client.invokeScript(script, { keys: [`fg:{${k}}:w`], args: argsOf(k) })),
    }),
  },
  {
    name: 'FUNCTION LOAD + FCALL',
    setup: async () => {
      await client.customCommand(['FUNCTION', 'LOAD', 'REPLACE', library]);
      return { decide: async (k) => decided(await fcall(k)) };
    },
  },
];

// Top-level commands only: a script's or function's usec already includes the calls inside it.
const TOP = new Set(['evalsha', 'eval', 'fcall', 'fcall_ro']);
const serverWork = (before, after, n) => {
  let usec = 0;
  let calls = 0;
  for (const [name, s] of after) {
    if (!TOP.has(name)) continue;
    usec += s.usec - (before.get(name)?.usec ?? 0);
    calls += s.calls - (before.get(name)?.calls ?? 0);
  }
  return { us: usec / n, commands: calls / n };
};
const stats = async () => commandStats(await client.customCommand(['INFO', 'commandstats']));

/**
 * Every contender at 1, 16 and 256 in flight, interleaved; the server's time and top-level
 * commands per decision are read from INFO commandstats around each timed run.
 */
async function measure(contenders) {
  const results = [];
  for (const inFlight of IN_FLIGHT) {
    log(`  glide: ${inFlight} in flight`);
    const work = new Map(contenders.map((c) => [c.name, []]));
    let current;
    const tracked = contenders.map((c) => ({
      name: c.name,
      setup: () => {
        current = c.name;
        return c.setup();
      },
    }));
    const iterations = inFlight === 1 ? SEQUENTIAL : CONCURRENT;
    const run = async (decide) => {
      await concurrent(decide, KEYS, KEYS.length, 16); // every key exists, scripts are loaded
      collectGarbage();
      const before = await stats();
      const r =
        inFlight === 1
          ? await sequential(decide, KEYS, iterations)
          : await concurrent(decide, KEYS, iterations, inFlight);
      work.get(current).push(serverWork(before, await stats(), iterations));
      return { ...r, iterations };
    };
    const samples = await compare(tracked, REPEATS, run, (denied) => denied === 0);
    results.push({ inFlight, samples, work });
  }
  return results;
}

/** Commands the server counted for one decision right after its cache was emptied. */
async function recovery(name, flush, decide) {
  await decide('warm');
  await client.customCommand(flush);
  const before = await commandCalls(server.port);
  await decide('after-flush');
  const d = delta(before, await commandCalls(server.port));
  // `script|load` is how INFO names a subcommand; a `|` would split a Markdown cell.
  const named = Object.entries(d).map(([c, n]) => `${c.replace('|', ' ').toUpperCase()} ${n}`);
  return [name, named.join(', ')];
}

const fmt = (n) => n.toLocaleString('en-US');
const meta = {
  ...machine(),
  server: serverName,
  versions: Object.fromEntries(
    ['@valkey/valkey-glide', 'rate-limiter-flexible'].map((n) => [n, version(n)]),
  ),
  repeats: REPEATS,
  sequentialIterations: SEQUENTIAL,
  concurrentIterations: CONCURRENT,
  keys: KEYS.length,
};
const json = { meta };
let complete = false;

try {
  print('## Valkey GLIDE (`pnpm --filter @floodgate/bench bench:glide`)');
  print();
  print(
    `${meta.date.slice(0, 10)} · Node ${meta.node} · ${meta.platform} · ${meta.cpus} CPUs (${meta.cpuModel}) · ` +
      `load average at start ${meta.loadAverageAtStart.join(' ')} (a shared machine) · a throw-away ` +
      `${serverName} on 127.0.0.1 · @valkey/valkey-glide ${meta.versions['@valkey/valkey-glide']} · ` +
      `rate-limiter-flexible ${meta.versions['rate-limiter-flexible']}. A separate run from the ` +
      'sections above (it needs a Valkey server); CI runs no benchmark.',
  );
  print();
  print(
    `One GLIDE client shared by every contender, ${fmt(KEYS.length)} keys, ${fmt(SEQUENTIAL)} decisions ` +
      `per sequential run and ${fmt(CONCURRENT)} per concurrent run; the median of ${REPEATS} ` +
      'interleaved runs (± half their range). "Server µs" is the time the server spent in the ' +
      'top-level EVALSHA/FCALL commands (INFO commandstats, diffed around each timed run) divided ' +
      'by the decisions; "commands" is those commands per decision.',
  );

  const peer = glideContenders(client, NEVER, DAY_MS).find((c) => c.name === PEER);
  const peerError = await peer
    .setup()
    .then(({ decide }) => decide('probe'))
    .then(
      () => undefined,
      (e) => (e instanceof Error ? e.message : String(e)),
    );
  const contenders = glideContenders(client, NEVER, DAY_MS).filter(
    (c) => peerError === undefined || c.name !== PEER,
  );
  print();
  print(`### GlideStore against rate-limiter-flexible's RateLimiterValkeyGlide`);
  print();
  if (peerError !== undefined)
    print(`RateLimiterValkeyGlide cannot run on ${serverName}: ${peerError}\n`);
  json.comparison = await measure(contenders);
  const rows = [];
  for (const { inFlight, samples, work } of json.comparison) {
    const us = (name) => median(work.get(name).map((w) => w.us));
    const ops = (name) => median(samples.get(name));
    const hasPeer = samples.has(PEER);
    for (const c of contenders) {
      rows.push([
        String(inFlight),
        c.name,
        formatOps(samples.get(c.name)),
        hasPeer ? `${(ops(c.name) / ops(PEER)).toFixed(2)}×` : '–',
        us(c.name).toFixed(1),
        hasPeer ? `${(us(c.name) / us(PEER)).toFixed(2)}×` : '–',
        median(work.get(c.name).map((w) => w.commands)).toFixed(2),
      ]);
    }
  }
  print(
    table(
      ['in flight', 'contender', 'decisions/s', '÷ RLF', 'server µs', '÷ RLF µs', 'commands'],
      rows,
      ['r', 'l', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  complete = peerError === undefined;

  print();
  print('### Script transports on GLIDE (raw, no Floodgate batching; fixedWindow script)');
  print();
  json.transports = await measure(transports);
  const tRows = json.transports.flatMap(({ inFlight, samples, work }) =>
    transports.map((t) => [
      t.name,
      String(inFlight),
      formatOps(samples.get(t.name)),
      median(work.get(t.name).map((w) => w.us)).toFixed(1),
    ]),
  );
  print(table(['transport', 'in flight', 'decisions/s', 'server µs'], tRows, ['l', 'r', 'r', 'r']));

  print();
  print('### The first decision after the cache is emptied');
  print();
  const flushScripts = ['SCRIPT', 'FLUSH'];
  const [, invoke] = await Promise.all(transports.map((t) => t.setup()));
  json.recovery = [
    await recovery(transports[0].name, flushScripts, async (k) => {
      // What GlideStore does: EVALSHA, and EVAL with the source on NOSCRIPT.
      const tail = ['1', `fg:{${k}}:w`, ...argsOf(k)];
      try {
        await client.customCommand(['EVALSHA', sha1, ...tail]);
      } catch {
        await client.customCommand(['EVAL', source, ...tail]);
      }
    }),
    await recovery(transports[1].name, flushScripts, invoke.decide),
    await recovery(transports[2].name, ['FUNCTION', 'FLUSH'], async (k) => {
      try {
        await fcall(k);
      } catch {
        await client.customCommand(['FUNCTION', 'LOAD', 'REPLACE', library]);
        await fcall(k);
      }
    }),
  ];
  print(table(['transport', 'commands the server ran'], json.recovery, ['l', 'l']));
} finally {
  script.release();
  client.close();
  await server.stop();
}

if (!complete) {
  log('bench:glide: RateLimiterValkeyGlide did not run (no Valkey server): nothing written');
} else if ((process.env.BENCH_WRITE ?? 'yes') !== '') {
  const plain = (rows) =>
    rows.map(({ inFlight, samples, work }) => ({
      inFlight,
      contenders: Object.fromEntries(
        [...samples].map(([name, runs]) => [
          name,
          {
            median: median(runs),
            runs: runs.map(Math.round),
            serverUs: median(work.get(name).map((w) => w.us)),
            commandsPerDecision: median(work.get(name).map((w) => w.commands)),
          },
        ]),
      ),
    }));
  writeGlideReport(
    { ...json, comparison: plain(json.comparison), transports: plain(json.transports) },
    out.join('\n'),
  );
  log('bench:glide: wrote bench/results-glide.json, bench/doc/glide.md, docs/benchmarks.md');
}
