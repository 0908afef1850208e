// The interleaved, repeated measurement: per framework, every app in its own process (bare,
// then Floodgate and the peer per store and scenario), all started before the first run, each
// warmed up once; then `repeats` rounds, each running every app once in an order rotated by the
// round, so a slow drift of a shared machine does not favour one.
import { httpConfig, NEVER } from './config.mjs';
import { load, requestsFor } from './load.mjs';
import { forkServer } from './servers.mjs';

export const SCENARIOS = [
  { id: 'admitted', label: 'all admitted', tag: 'a' },
  { id: 'denied', label: 'mostly denied', tag: 'd' },
];

/**
 * The apps of one framework: a bare ceiling, then per store and run Floodgate (its default
 * headers, and the peer's header set) and its peer.
 */
export function appsOf(framework, stores) {
  const apps = [{ framework, limiter: 'bare', store: undefined, scenario: undefined }];
  for (const store of stores) {
    for (const { id } of SCENARIOS) {
      for (const limiter of ['floodgate', 'floodgate-peer-headers', 'peer'])
        apps.push({ framework, limiter, store, scenario: id });
    }
  }
  return apps;
}

const limitOf = (app) => (app.scenario === 'denied' ? httpConfig.deniedLimit : NEVER);
const tagOf = (app) => SCENARIOS.find((s) => s.id === (app.scenario ?? 'admitted')).tag;

/** A run that did not answer the way its scenario says measured another path: it fails the bench. */
function check(app, r) {
  const name = `${app.framework}/${app.limiter}/${app.store ?? '-'}/${app.scenario ?? '-'}`;
  if (r.other > 0) throw new Error(`${name}: ${r.other} responses neither 2xx nor 429, or errors`);
  if (app.scenario === 'denied' && r.limited < r.total / 2) {
    throw new Error(`${name}: only ${r.limited} of ${r.total} denied in a mostly-denied run`);
  }
  if (app.scenario !== 'denied' && r.ok !== r.total) {
    throw new Error(`${name}: ${r.total - r.ok} of ${r.total} not admitted in an all-admitted run`);
  }
}

/**
 * @param {string} framework
 * @param {{ url: string } | undefined} redis the throw-away server (undefined: memory only)
 * @returns {Promise<{ app: object, runs: object[] }[]>}
 */
export async function measureFramework(framework, stores, repeats, redis, log) {
  const opts = { seconds: httpConfig.seconds, connections: httpConfig.connections };
  const warm = { seconds: httpConfig.warmupSeconds, connections: httpConfig.connections };
  const cells = [];
  try {
    for (const app of appsOf(framework, stores)) {
      const server = await forkServer(
        {
          framework,
          limiter: app.limiter,
          redisUrl: app.store === 'redis' ? redis.url : undefined,
          limit: limitOf(app),
          windowMs: httpConfig.windowMs,
        },
        httpConfig.profileDir,
      );
      const requests = requestsFor(tagOf(app), httpConfig.identities);
      cells.push({ app, server, requests, runs: [] });
      await load(server.port, requests, warm);
    }
    for (let r = 0; r < repeats; r++) {
      for (let j = 0; j < cells.length; j++) {
        const cell = cells[(j + r) % cells.length];
        const before = await cell.server.cpuMicros();
        const result = await load(cell.server.port, cell.requests, opts);
        result.cpuUs = ((await cell.server.cpuMicros()) - before) / result.total;
        check(cell.app, result);
        cell.runs.push(result);
        log(
          `  http ${framework} ${cell.app.limiter} ${cell.app.store ?? ''} ${cell.app.scenario ?? ''}: ` +
            `${Math.round(result.rps)} req/s, p99 ${result.p99} ms, ${result.cpuUs.toFixed(1)} µs CPU/req`,
        );
      }
    }
  } finally {
    for (const cell of cells) await cell.server.stop();
  }
  return cells.map(({ app, runs }) => ({ app, runs }));
}
