// Floodgate against its peers, measured in one run on one machine.
// Run: pnpm --filter @floodgate/bench bench   (see docs/benchmarks.md)
// The report goes to stdout as Markdown (and, unless BENCH_WRITE=, to docs/benchmarks.md with
// bench/results.json and docs/benchmarks.svg); progress goes to stderr.
import { benchAccuracy } from './accuracy.mjs';
import { benchBlocked } from './blocked.mjs';
import { benchCeiling } from './ceiling.mjs';
import { benchConcurrency } from './concurrency.mjs';
import { config } from './config.mjs';
import { ERL, ERL_REDIS, RLF } from './contenders.mjs';
import { benchEviction } from './eviction.mjs';
import { benchHooks } from './hooks.mjs';
import { benchInProcess } from './inprocess.mjs';
import { formatOps, median, table } from './measure.mjs';
import { benchOverrides, WITHOUT } from './overrides.mjs';
import {
  benchHot,
  benchMemory,
  benchRedis,
  benchRoundTrips,
  hotTable,
  startRedis,
} from './redis.mjs';
import { targets, toJson, writeReport, writeSlicesReport } from './report.mjs';
import { benchSlices } from './slices.mjs';
import { slicesMarkdown, slicesTarget } from './slices-report.mjs';
import { machine, version } from './versions.mjs';

const log = (line) => process.stderr.write(`${line}\n`);
const fmt = (n) => n.toLocaleString('en-US');
const started = process.hrtime.bigint();
const out = [];
const print = (text = '') => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};

const peers = [RLF, ERL, ERL_REDIS];
const label = (name) => (peers.includes(name) ? `${name} ${version(name)}` : `Floodgate ${name}`);

/** Redis µs and Redis CPU per decision of a concurrent scenario, and what one Redis core carries. */
function redisWorkTable({ redisUs, redisCpuUs }) {
  const us = redisUs.get(RLF);
  const cpu = redisCpuUs.get(RLF);
  const rows = [...redisUs].map(([name, u]) => {
    const c = redisCpuUs.get(name);
    return [
      label(name),
      u.toFixed(2),
      (u / us).toFixed(2),
      c === undefined ? '–' : c.toFixed(2),
      c === undefined || cpu === undefined ? '–' : (c / cpu).toFixed(2),
      c === undefined ? '–' : fmt(Math.round(1e6 / c)),
    ];
  });
  return table(
    [
      'contender',
      'Redis µs (commandstats)',
      '÷ RLF',
      'Redis CPU µs (process)',
      '÷ RLF',
      'decisions/s per Redis core',
    ],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r'],
  );
}

/** One row per contender; ratio columns against each peer present in the scenario. */
function throughputTable(results) {
  const rows = [];
  for (const { scenario, samples } of results) {
    const present = peers.filter((p) => samples.has(p));
    for (const [name, runs] of samples) {
      rows.push([
        scenario,
        label(name),
        formatOps(runs),
        ...present.map((p) => `${(median(runs) / median(samples.get(p))).toFixed(2)}×`),
      ]);
    }
  }
  const present = peers.filter((p) => results[0]?.samples.has(p));
  return table(['scenario', 'contender', 'ops/s', ...present.map((p) => `÷ ${p}`)], rows, [
    'l',
    'l',
    'r',
    ...present.map(() => 'r'),
  ]);
}

const perDecision = (m) =>
  [...m]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, v]) => `${name.toUpperCase()} ${v.toFixed(2)}`)
    .join(', ');

const meta = {
  ...machine(),
  versions: Object.fromEntries(['ioredis', RLF, ERL, ERL_REDIS].map((n) => [n, version(n)])),
  repeats: config.repeats,
  note: 'Shared machine: other engineers ran tests during the run. Ratios come from interleaved runs in one process.',
};
const results = {};

log(`bench: ${config.repeats} runs per contender, interleaved`);
print(
  `${meta.date.slice(0, 10)} · Node ${meta.node} · ${meta.platform} · ${meta.cpus} CPUs (${meta.cpuModel}) · ` +
    `load average at start ${meta.loadAverageAtStart.join(' ')} (a shared machine: other test runs were going on) · ` +
    Object.entries(meta.versions)
      .map(([n, v]) => `${n} ${v}`)
      .join(' · ') +
    (typeof globalThis.gc === 'function' ? '' : ' · (no --expose-gc: GC between runs not forced)'),
);
print();
print(
  `Each figure is the median of ${config.repeats} runs, interleaved with the other contenders ` +
    '(± is half the range of the runs). Ratio columns: median ÷ median of that peer; above 1 ' +
    'means the row is faster.',
);

if (config.sections.has('inprocess')) {
  results.inprocess = await benchInProcess(config, log);
  print();
  print(`### In-process (${fmt(config.iterations)} sequential awaited decisions per run)`);
  print();
  print(throughputTable(results.inprocess));
  results.hooks = await benchHooks(config, log);
  print();
  print('`onDecision` unset costs nothing: the limiter is only wrapped when it is set.');
  print();
  print(throughputTable(results.hooks));
}

if (config.sections.has('accuracy')) {
  const a = await benchAccuracy(config, log);
  results.accuracy = a;
  print();
  print('### Sliding counter vs exact log on a synthetic bursty trace');
  print();
  print(
    `${fmt(a.decisions)} requests from ${fmt(a.identities)} identities, limit ${a.limit} per ` +
      `${a.windowMs / 1000} s; most stay at 0.4 × the limit, one in ten bursts to 3 × now and then; ` +
      `${(a.deniedShare * 100).toFixed(2)} % of requests denied by the exact log. On the same ` +
      `admitted history, \`slidingWindow\` would have decided **${(a.wrongShare * 100).toFixed(3)} %** ` +
      `of them differently (${fmt(a.tooLoose)} admitted that the log denies, ${fmt(a.tooStrict)} ` +
      'denied that it admits).',
  );
}

if (config.sections.has('eviction')) {
  const e = await benchEviction(config, log);
  results.eviction = e;
  const us = (runs) => `${median(runs).toFixed(2)} µs`;
  const spread = e.pastChunks.flat();
  print();
  print(
    `### MemoryStore past \`maxKeys\`: ${fmt(e.identities)} rotating identities, \`maxKeys\` ${fmt(e.maxKeys)}`,
  );
  print();
  print(
    table(
      ['phase', 'CPU per decision', 'slowest tenth of the run', '÷ within the bound'],
      [
        ['filling up to maxKeys (insert)', us(e.within), '–', '1.00×'],
        [
          'past maxKeys (insert + evict)',
          us(e.past),
          `${Math.max(...spread).toFixed(2)} µs`,
          `${e.ratio.toFixed(2)}×`,
        ],
      ],
      ['l', 'r', 'r', 'r'],
    ),
  );
}

const needsRedis = [
  'redis',
  'roundtrips',
  'memory',
  'ceiling',
  'blocked',
  'concurrency',
  'overrides',
  'slices',
].some((s) => config.sections.has(s));
/** The slices section's Markdown: its own file (bench/doc/slices.md), not this run's body. */
let slicesBody;
if (needsRedis) {
  const redis = await startRedis(config);
  meta.redis = redis.version;
  try {
    print();
    print(`Redis: a throw-away redis-server ${redis.version} on 127.0.0.1 (same machine).`);
    if (config.sections.has('redis')) {
      results.redis = await benchRedis(config, redis, log);
      print();
      print(
        `### Redis through ioredis (${fmt(config.redisKeys)} keys; ${fmt(config.redisIterations)} ` +
          `decisions per sequential run, ${fmt(config.redisConcurrentIterations)} per concurrent run)`,
      );
      print();
      print(throughputTable(results.redis));
      for (const row of results.redis.filter((x) => x.redisUs !== undefined)) {
        print();
        print(
          `### What Redis spends per decision, ${row.inFlight} in flight (medians of the runs ` +
            'above: usec of EVALSHA and EVAL in INFO commandstats ÷ decisions, and the ' +
            "redis-server process's CPU time ÷ decisions, which also holds reading the commands " +
            'and writing the replies)',
        );
        print();
        print(redisWorkTable(row));
      }
      // bench/doc/hot.md: one identity, 256 in flight; Redis µs per decision against RLF's.
      const hot = await benchHot(config, redis, log);
      results.hot = hot;
      print();
      print(
        `### One hot identity, ${hot.inFlight} in flight (${fmt(hot.decisions)} decisions per run, ` +
          'Redis µs per decision = usec of EVALSHA and EVAL in INFO commandstats ÷ decisions)',
      );
      print();
      print(hotTable(hot, label, RLF));
    }
    if (config.sections.has('ceiling')) {
      results.ceiling = await benchCeiling(config, redis, log);
      const top = results.redis?.find((r) => r.inFlight === Math.max(...config.concurrency));
      for (const c of results.ceiling) {
        if (top?.samples.has(c.name)) c.node = median(top.samples.get(c.name));
      }
      print();
      print(
        `### Ceiling: \`redis-benchmark -P 16 -c 50\` running each script (EVALSHA, server clock, ` +
          `10 000 keys; median of ${config.repeats} interleaved runs), and Node at ` +
          `${top?.inFlight ?? '?'} in flight as a share of it`,
      );
      print();
      const rlfUs = results.ceiling.find((c) => c.name === RLF)?.usPerCall;
      print(
        table(
          [
            'script',
            'redis-benchmark req/s',
            'Redis µs per call',
            '÷ RLF µs',
            'Node decisions/s',
            'Node ÷ ceiling',
          ],
          results.ceiling.map((c) => [
            c.name,
            fmt(Math.round(c.ceiling)),
            c.usPerCall.toFixed(2),
            (c.usPerCall / rlfUs).toFixed(2),
            c.node === undefined ? '–' : fmt(Math.round(c.node)),
            c.node === undefined ? '–' : `${((c.node / c.ceiling) * 100).toFixed(0)} %`,
          ]),
          ['l', 'r', 'r', 'r', 'r', 'r'],
        ),
      );
    }
    if (config.sections.has('roundtrips')) {
      results.roundtrips = await benchRoundTrips(config, redis, log);
      print();
      print(
        `### Redis work per decision (${fmt(config.roundTripDecisions)} sequential decisions, no pipelining; latency and CPU: median of ${config.repeats} interleaved runs)`,
      );
      print();
      print(
        table(
          [
            'library',
            'sent by the client',
            'executed by Redis (incl. inside Lua)',
            'latency µs',
            'Node CPU µs',
            'Redis CPU µs',
          ],
          results.roundtrips.map((r) => [
            label(r.name),
            perDecision(r.client),
            perDecision(r.server),
            r.latencyUs.toFixed(1),
            r.clientCpuUs.toFixed(1),
            r.serverUs.toFixed(1),
          ]),
          ['l', 'l', 'l', 'r', 'r', 'r'],
        ),
      );
      for (const r of results.roundtrips.filter((x) => !peers.includes(x.name))) {
        const total = [...r.client.values()].reduce((a, b) => a + b, 0);
        if (!(r.client.get('evalsha') === 1 && total === 1)) {
          print(`\nFloodgate ${r.name}: NOT 1 EVALSHA per decision ✗`);
          process.exitCode = 1;
        }
      }
    }
    if (config.sections.has('memory')) {
      results.memory = await benchMemory(config, redis, log);
      print();
      print(
        `### Redis memory per key (${fmt(config.memoryKeys)} 7-character identities, prefix ` +
          '`floodgate` for every library, one decision each, limit 100 per hour)',
      );
      print();
      print(
        table(
          [
            'library',
            'MEMORY USAGE (bytes)',
            'used_memory growth / key',
            'example key',
            'value',
            'type/encoding',
          ],
          results.memory.map((r) => [
            label(r.name),
            r.memoryUsage.toFixed(1),
            r.usedMemoryPerKey.toFixed(1),
            `\`${r.sampleKey}\``,
            `\`${String(r.sampleValue).slice(0, 40)}\``,
            r.encoding,
          ]),
          ['l', 'r', 'r', 'l', 'l', 'l'],
        ),
      );
    }
    if (config.sections.has('blocked')) {
      results.blocked = await benchBlocked(config, redis, log);
      print();
      print(
        `### Blocked-key cache (fixedWindow on Redis, sequential, ${fmt(config.blockedDecisions)} decisions)`,
      );
      print();
      print(
        table(
          ['scenario', 'cache on', 'cache off', 'on ÷ off'],
          results.blocked.map(({ scenario, samples }) => [
            scenario,
            formatOps(samples.get('cache on')),
            formatOps(samples.get('cache off')),
            `${(median(samples.get('cache on')) / median(samples.get('cache off'))).toFixed(2)}×`,
          ]),
          ['l', 'r', 'r', 'r'],
        ),
      );
    }
    if (config.sections.has('concurrency')) {
      const c = await benchConcurrency(config, redis, log);
      results.concurrency = c;
      print();
      print(
        `### Concurrency leases on Redis (${fmt(c.pairs)} sequential acquire + release pairs ` +
          'through ioredis, 1 000 identities, limit 10)',
      );
      print();
      print(
        table(
          [
            'µs per acquire + release (Node)',
            'EVALSHA per pair',
            'Redis µs per call',
            'MEMORY USAGE, 1 lease',
            '10 leases',
            'encoding',
          ],
          [
            [
              c.wallUsPerPair.toFixed(1),
              c.evalshaPerPair.toFixed(2),
              c.redisUsPerCall.toFixed(2),
              `${c.bytesOneLease} B`,
              `${c.bytesTenLeases} B`,
              c.encoding,
            ],
          ],
          ['r', 'r', 'r', 'r', 'r', 'l'],
        ),
      );
    }
    if (config.sections.has('overrides')) {
      results.overrides = await benchOverrides(config, redis, log);
      print();
      print(
        '### Per-identity overrides: what they cost per decision (tokenBucket, every decision ' +
          'admitted; the same limiter without `overrides`, with them and nothing stored, and ' +
          'with an override in force for every identity)',
      );
      print();
      print(
        table(
          ['scenario', 'limiter', 'decisions/s', '÷ without', 'Redis µs per decision'],
          results.overrides.flatMap(({ scenario, samples, redisUs }) =>
            [...samples].map(([name, runs]) => [
              scenario,
              name,
              formatOps(runs),
              `${(median(runs) / median(samples.get(WITHOUT))).toFixed(2)}×`,
              redisUs === undefined ? '–' : redisUs.get(name).toFixed(2),
            ]),
          ),
          ['l', 'l', 'r', 'r', 'r'],
        ),
      );
    }
    if (config.sections.has('slices')) {
      results.slices = await benchSlices(config, redis, log);
      const m = { ...meta, slicesMs: config.slicesMs, slicesBindingMs: config.slicesBindingMs };
      slicesBody = slicesMarkdown(results.slices, m);
      process.stdout.write(`\n${slicesBody}\n`);
    }
  } finally {
    await redis.stop();
  }
}

if (config.sections.has('http')) {
  // Loaded only here: the frameworks and autocannon stay out of every other section's process.
  const { benchHttp } = await import('./http/index.mjs');
  const http = await benchHttp(config, log);
  results.http = http.result;
  print();
  for (const line of http.lines) print(line);
}

results.targets = targets(results, { rlf: RLF, erl: { memory: ERL, redis: ERL_REDIS } });
print();
print('### Targets (issues 10, 16 and 35)');
print();
print(
  table(
    ['measure', 'value', 'target', 'met'],
    results.targets.map((t) => [
      t.what,
      t.value.toFixed(2),
      `${t.higherIsBetter ? '≥' : '≤'} ${t.target}`,
      t.met ? 'yes' : '**no**',
    ]),
    ['l', 'r', 'r', 'l'],
  ),
);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
print();
print(`Whole run: ${seconds.toFixed(1)} s.`);
meta.seconds = Number(seconds.toFixed(1));
if (config.write !== '' && slicesBody !== undefined) {
  writeSlicesReport({ meta, slices: results.slices }, slicesBody, slicesTarget(results.slices));
  log(
    'bench: wrote bench/results-slices.json, bench/doc/slices.md and its part of docs/benchmarks.md',
  );
}
// A slices-only run leaves the other sections' numbers alone.
if (config.write !== '' && [...config.sections].some((s) => s !== 'slices')) {
  writeReport(toJson(meta, results), out.join('\n'));
  log('bench: wrote bench/results.json, docs/benchmarks.md, docs/benchmarks.svg');
}
