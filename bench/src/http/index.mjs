// Whole HTTP apps under autocannon (issue 16): Express, Fastify and Hono, each bare (the
// ceiling), with Floodgate's adapter and with the framework's usual peer limiter, on memory and
// on a throw-away Redis; an all-admitted run and a mostly-denied run each. Returns the Markdown
// lines of the section and a JSON-able result; index.mjs prints them.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median, table } from '../measure.mjs';
import { startRedis } from '../redis.mjs';
import { version } from '../versions.mjs';
import { httpConfig } from './config.mjs';
import { measureFramework, SCENARIOS } from './run.mjs';

const PEERS = {
  express: { memory: 'express-rate-limit', redis: 'express-rate-limit + rate-limit-redis' },
  fastify: { memory: '@fastify/rate-limit', redis: '@fastify/rate-limit (redis)' },
  hono: { memory: 'hono-rate-limiter', redis: 'hono-rate-limiter (RedisStore)' },
};
const FRAMEWORKS = { express: 'express', fastify: 'fastify', hono: 'hono' };
const PEER_PACKAGES = [
  'express-rate-limit',
  'rate-limit-redis',
  '@fastify/rate-limit',
  'hono-rate-limiter',
];

const rpsOf = (runs) => median(runs.map((r) => r.rps));
const p99Of = (runs) => median(runs.map((r) => r.p99));
/** `median ±half-range %` of the runs. */
function spread(values, digits = 0) {
  const m = median(values);
  const half = m === 0 ? 0 : ((Math.max(...values) - Math.min(...values)) / 2 / m) * 100;
  return `${m.toLocaleString('en-US', { maximumFractionDigits: digits })} ±${Math.round(half)}%`;
}
const ratio = (a, b) => (b === 0 ? '–' : `${(a / b).toFixed(2)}×`);

const cpuOf = (runs) => median(runs.map((r) => r.cpuUs));
const cells = (c) => [
  spread(c.runs.map((r) => r.rps)),
  spread(
    c.runs.map((r) => r.p99),
    1,
  ),
  spread(
    c.runs.map((r) => r.cpuUs),
    1,
  ),
];

// Issue 35: Floodgate sending the peer's header set at least level with the peer (req/s, and
// p99 no higher); with its own default headers (more of them) at least 0.9× its req/s.
const HEADER_SETS = [
  { limiter: 'floodgate', name: 'Floodgate', headers: 'its default headers', rps: 0.9, p99: false },
  {
    limiter: 'floodgate-peer-headers',
    name: "Floodgate, the peer's headers",
    headers: "the peer's headers",
    rps: 1,
    p99: true,
  },
];

/** One framework's rows: bare, then Floodgate (both header sets) and its peer per store and run. */
function rowsOf(framework, measured) {
  const bare = measured.find((c) => c.app.limiter === 'bare');
  const rows = [[framework, 'bare (no limiter)', '–', '–', ...cells(bare), '–', '–', '–', '1.00×']];
  const targets = [];
  for (const cell of measured.filter((c) => c.app.limiter === 'floodgate')) {
    const { store, scenario } = cell.app;
    const same = (limiter) =>
      measured.find(
        (c) => c.app.limiter === limiter && c.app.store === store && c.app.scenario === scenario,
      );
    const peer = same('peer');
    const label = SCENARIOS.find((s) => s.id === scenario).label;
    const ours = HEADER_SETS.map((h) => ({ ...h, cell: same(h.limiter) })).filter(
      (h) => h.cell !== undefined,
    );
    for (const [name, c] of [
      ...ours.map((h) => [h.name, h.cell]),
      [PEERS[framework][store], peer],
    ]) {
      rows.push([
        framework,
        name,
        store,
        label,
        ...cells(c),
        ratio(rpsOf(c.runs), rpsOf(peer.runs)),
        ratio(p99Of(c.runs), p99Of(peer.runs)),
        ratio(cpuOf(c.runs), cpuOf(peer.runs)),
        ratio(rpsOf(c.runs), rpsOf(bare.runs)),
      ]);
    }
    for (const h of ours) {
      const rps = rpsOf(h.cell.runs) / rpsOf(peer.runs);
      const p99 = [p99Of(h.cell.runs), p99Of(peer.runs)];
      targets.push({
        framework,
        store,
        scenario,
        headers: h.headers,
        rpsTarget: h.rps,
        p99Target: h.p99,
        rpsRatio: rps,
        p99: p99[0],
        peerP99: p99[1],
        cpuRatio: cpuOf(h.cell.runs) / cpuOf(peer.runs),
        met: rps >= h.rps && (!h.p99 || p99[0] <= p99[1]),
      });
    }
  }
  return { rows, targets };
}

/**
 * @param {{ repeats: number, redisServer?: string }} config the bench's shared config
 * @returns {Promise<{ lines: string[], result: object }>}
 */
export async function benchHttp(config, log) {
  const { frameworks, stores } = httpConfig;
  const redis = stores.includes('redis') ? await startRedis(config) : undefined;
  const measured = {};
  try {
    for (const framework of frameworks) {
      log(`  http: ${framework}`);
      measured[framework] = await measureFramework(
        framework,
        stores,
        config.repeats,
        redis?.server,
        log,
      );
    }
  } finally {
    await redis?.stop();
  }
  const rows = [];
  const targets = [];
  for (const framework of frameworks) {
    const r = rowsOf(framework, measured[framework]);
    rows.push(...r.rows);
    targets.push(...r.targets);
  }
  const versions = [
    ...Object.values(FRAMEWORKS),
    '@hono/node-server',
    ...PEER_PACKAGES,
    'autocannon',
  ].map((n) => `${n} ${version(n)}`);
  const lines = [
    `### Whole HTTP apps under autocannon (${httpConfig.connections} connections, ${httpConfig.seconds} s per run, ${httpConfig.identities} x-api-key identities)`,
    '',
    `One process per app, GET /hello; fixed window per identity, ${httpConfig.windowMs / 1000} s: ` +
      `limit 1 000 000 000 (all admitted) or ${httpConfig.deniedLimit} (mostly denied). Each library's default headers, and Floodgate also with its peer's header set (X-RateLimit-* for express-rate-limit and @fastify/rate-limit, draft-6 RateLimit-* for hono-rate-limiter; no Access-Control-Expose-Headers). ` +
      `Median of ${config.repeats} interleaved runs ± half the range; p99 over every response, 429s included; server CPU is the app process's user + system time per response. ` +
      (redis === undefined
        ? ''
        : `Redis: a throw-away redis-server ${redis.version} on 127.0.0.1, one ioredis connection per app. `) +
      versions.join(' · '),
    '',
    table(
      [
        'framework',
        'app',
        'store',
        'run',
        'req/s',
        'p99 ms',
        'server CPU µs/req',
        '÷ peer req/s',
        'p99 ÷ peer',
        'CPU ÷ peer',
        '÷ bare req/s',
      ],
      rows,
      ['l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    table(
      ['target (issue 35)', 'req/s ÷ peer', 'p99 ms (peer)', 'CPU/req ÷ peer', 'met'],
      targets.map((t) => [
        `${t.framework} on ${t.store}, ${SCENARIOS.find((s) => s.id === t.scenario).label}, ${t.headers}: ` +
          `≥ ${t.rpsTarget.toFixed(1)}×${t.p99Target ? ' and p99 ≤ peer' : ''}`,
        `${t.rpsRatio.toFixed(2)}×`,
        `${t.p99} (${t.peerP99})`,
        `${t.cpuRatio.toFixed(2)}×`,
        t.met ? 'yes' : '**no**',
      ]),
      ['l', 'r', 'r', 'r', 'l'],
    ),
  ];
  const result = {
    settings: { ...httpConfig, repeats: config.repeats, redis: redis?.version },
    versions,
    cells: Object.fromEntries(frameworks.map((f) => [f, measured[f]])),
    targets,
  };
  if (config.write !== '') {
    // Its own file: results.json is report.mjs's, and this section is not in every run.
    const file = new URL('../../results-http.json', import.meta.url);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    try {
      // In the repository's own format, so `biome check` stays clean after a run.
      execFileSync('pnpm', ['exec', 'biome', 'format', '--write', fileURLToPath(file)], {
        cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        stdio: 'ignore',
      });
    } catch {
      // Without Biome the file is still valid JSON.
    }
    log('bench: wrote bench/results-http.json');
  }
  return { lines, result };
}
