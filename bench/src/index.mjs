// Floodgate against rate-limiter-flexible, measured in one run on one machine.
// Run: pnpm --filter @floodgate/bench bench   (see docs/benchmarks.md)
// The report goes to stdout as Markdown; progress goes to stderr.
import { createRequire } from 'node:module';
import { arch, cpus, platform } from 'node:os';
import { config } from './config.mjs';
import { benchInProcess } from './inprocess.mjs';
import { formatOps, formatRatio, table } from './measure.mjs';
import { benchMemory, benchRedis, benchRoundTrips, startRedis } from './redis.mjs';

const require = createRequire(import.meta.url);
const version = (name) => require(`${name}/package.json`).version;
const log = (line) => process.stderr.write(`${line}\n`);
const fmt = (n) => n.toLocaleString('en-US');
const PEER = `rate-limiter-flexible ${version('rate-limiter-flexible')}`;

const started = process.hrtime.bigint();
const out = [];
const print = (text = '') => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};

function throughputTable(results) {
  const rows = [];
  for (const { scenario, samples } of results) {
    for (const policy of ['tokenBucket', 'fixedWindow']) {
      rows.push([
        scenario,
        policy,
        formatOps(samples.get(policy)),
        formatOps(samples.get('peer')),
        formatRatio(samples.get(policy), samples.get('peer')),
      ]);
    }
  }
  return table(
    ['scenario', 'Floodgate policy', 'Floodgate ops/s', 'peer ops/s', 'Floodgate / peer'],
    rows,
    ['l', 'l', 'r', 'r', 'r'],
  );
}

const perDecision = (m) =>
  [...m]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, v]) => `${name.toUpperCase()} ${v.toFixed(2)}`)
    .join(', ');

const label = (name) => (name === 'peer' ? PEER : `Floodgate ${name}`);

log(`bench: ${config.repeats} runs per contender, interleaved`);
print(`# Floodgate vs ${PEER}`);
print();
print(
  `${new Date().toISOString().slice(0, 10)} · Node ${process.version} · ${platform()} ${arch()} · ` +
    `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}) · ioredis ${version('ioredis')}` +
    (typeof globalThis.gc === 'function' ? '' : ' · (no --expose-gc: GC between runs not forced)'),
);
print();
print(
  `Each figure is the median of ${config.repeats} runs, interleaved with the other contenders ` +
    '(± is half the range of the runs). Ratio = median Floodgate ops/s ÷ median peer ops/s; ' +
    'above 1 means Floodgate is faster. The peer has one algorithm, a fixed window, so the same ' +
    'peer runs are the reference for both Floodgate policies in a scenario.',
);

if (config.sections.has('inprocess')) {
  const results = await benchInProcess(config, log);
  print();
  print(
    `## In-process: MemoryStore vs RateLimiterMemory (${fmt(config.iterations)} sequential ` +
      `awaited decisions per run after ${fmt(config.warmup)} warm-up)`,
  );
  print();
  print(throughputTable(results));
}

const needsRedis = ['redis', 'roundtrips', 'memory'].some((s) => config.sections.has(s));
if (needsRedis) {
  const redis = await startRedis(config);
  try {
    print();
    print(`Redis: a throw-away redis-server ${redis.version} on 127.0.0.1:${redis.server.port}.`);
    if (config.sections.has('redis')) {
      const results = await benchRedis(config, redis, log);
      print();
      print(
        `## Redis: IoRedisStore vs RateLimiterRedis (${fmt(config.redisKeys)} keys; ` +
          `${fmt(config.redisIterations)} decisions per sequential run, ` +
          `${fmt(config.redisConcurrentIterations)} per concurrent run)`,
      );
      print();
      print(throughputTable(results));
    }
    if (config.sections.has('roundtrips')) {
      const rows = await benchRoundTrips(config, redis, log);
      print();
      print(
        `## Redis commands per decision (${fmt(config.roundTripDecisions)} sequential decisions, ` +
          'no pipelining)',
      );
      print();
      print(
        table(
          [
            'library',
            'sent by the client (= round trips)',
            'executed by the server (INFO commandstats, incl. inside Lua)',
          ],
          rows.map((r) => [label(r.name), perDecision(r.client), perDecision(r.server)]),
          ['l', 'l', 'l'],
        ),
      );
      print();
      print(
        'Where the time of one sequential decision goes, in µs per decision (the same single ' +
          'run, not a median: the Redis column is steady, the others move with machine load):',
      );
      print();
      print(
        table(
          [
            'library',
            'latency',
            'Node CPU (process, all threads)',
            'Redis CPU (command execution)',
          ],
          rows.map((r) => [
            label(r.name),
            r.latencyUs.toFixed(1),
            r.clientCpuUs.toFixed(1),
            r.serverUs.toFixed(1),
          ]),
          ['l', 'r', 'r', 'r'],
        ),
      );
      for (const r of rows.filter((x) => x.name !== 'peer')) {
        const evalsha = r.client.get('evalsha') ?? 0;
        const total = [...r.client.values()].reduce((a, b) => a + b, 0);
        const ok = evalsha === 1 && total === 1 && r.server.get('evalsha') === 1;
        print();
        print(
          ok
            ? `Floodgate ${r.name}: exactly 1 EVALSHA per decision ✓`
            : `Floodgate ${r.name}: NOT 1 EVALSHA per decision ✗ (client sent ${perDecision(r.client)})`,
        );
        if (!ok) process.exitCode = 1;
      }
    }
    if (config.sections.has('memory')) {
      const rows = await benchMemory(config, redis, log);
      print();
      print(
        `## Redis memory per key (${fmt(config.memoryKeys)} identities, one decision each, ` +
          'limit 100 per minute)',
      );
      print();
      print(
        table(
          [
            'library',
            'MEMORY USAGE (bytes, mean)',
            'used_memory growth / key',
            'example key',
            'value',
            'type/encoding',
          ],
          rows.map((r) => [
            label(r.name),
            r.memoryUsage.toFixed(1),
            r.usedMemoryPerKey.toFixed(1),
            `\`${r.sampleKey}\``,
            `\`${r.sampleValue}\``,
            r.encoding,
          ]),
          ['l', 'r', 'r', 'l', 'l', 'l'],
        ),
      );
    }
  } finally {
    await redis.stop();
  }
}

const seconds = Number(process.hrtime.bigint() - started) / 1e9;
print();
print(`Whole run: ${seconds.toFixed(1)} s.`);
