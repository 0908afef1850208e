// Issue 35's Cluster burst, measured: one process, 3 000 identities × 4 decisions at once on a
// throw-away six-node Redis Cluster through ioredis and node-redis, with the default timeoutMs
// (250 ms) and with 5 000 ms; cold (scripts not yet loaded on the masters) and warm. Prints how
// many decisions Redis made and how many the per-process fallback made (`store-timeout`), the wall
// time and this process's CPU time. The suite's test of the same burst (testkit's
// cluster-burst.ts) asserts the counts; this adds the times. BENCH_BURST_STALL_MS (default 0)
// keeps this process busy that long after the loop, as a loaded machine does: the loop then
// outlasts the default timeoutMs (a CI run's 401 of GLIDE's 12 000 to the fallback).
// Run: pnpm --filter @floodgate/bench bench:cluster-burst
import { createLimiter, tokenBucket } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { NodeRedisStore } from '@floodgate/node-redis';
import { startRedisCluster, startRedisServer } from '@floodgate/testkit/redis';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';

const IDENTITIES = Number(process.env.BENCH_BURST_IDENTITIES ?? 3_000);
const ROUNDS = 4;
const STALL_MS = Number(process.env.BENCH_BURST_STALL_MS ?? 0);

/** One burst on a fresh prefix; what decided it, and what it cost this process. */
async function burst(store, timeoutMs, label) {
  const limiter = createLimiter({
    store,
    policy: tokenBucket({ limit: ROUNDS - 1, interval: '1m' }),
    prefix: `burst-${label.replace(/\W+/g, '-')}`,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  const calls = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < IDENTITIES; i++) calls.push(limiter.limit(`id${i}`));
  }
  const busy = performance.now() + STALL_MS;
  while (performance.now() < busy) {
    // spin: timers and sockets wait, as behind a loop that takes longer
  }
  const decisions = await Promise.all(calls);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const by = {};
  for (const d of decisions) by[d.reason ?? 'redis'] = (by[d.reason ?? 'redis'] ?? 0) + 1;
  const cpuMs = (used.user + used.system) / 1000;
  const perDecision = (cpuMs * 1000) / decisions.length;
  console.log(
    `| ${label} | ${by.redis ?? 0} | ${by['store-timeout'] ?? 0} | ${wallMs.toFixed(0)} | ${cpuMs.toFixed(0)} | ${perDecision.toFixed(0)} |`,
  );
}

/** Each client: a cluster client of its own, its masters' scripts flushed first. */
const CLIENTS = [
  {
    name: 'ioredis',
    async open(nodes) {
      const client = new Cluster(nodes);
      await client.ping();
      await Promise.all(client.nodes('master').map((node) => node.script('FLUSH')));
      return { store: new IoRedisStore(client), close: () => client.quit() };
    },
  },
  {
    name: 'node-redis',
    async open(nodes) {
      const client = createCluster({
        rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      client.on('error', () => {});
      await client.connect();
      await Promise.all(
        client.masters.map(async (m) => (await client.nodeClient(m)).scriptFlush()),
      );
      return { store: new NodeRedisStore(client), close: () => client.close() };
    },
  },
];

/** The same burst on one Redis (batched), for comparison: ioredis, default options. */
async function single() {
  const server = await startRedisServer();
  const client = new Redis(server.url);
  try {
    await client.script('FLUSH');
    const store = new IoRedisStore(client);
    await burst(store, undefined, 'one Redis (batched), ioredis, default timeoutMs, cold');
    await burst(store, undefined, 'one Redis (batched), ioredis, default timeoutMs, warm');
  } finally {
    await client.quit();
    await server.stop();
  }
}

const cluster = await startRedisCluster();
try {
  console.log(
    `${IDENTITIES} identities × ${ROUNDS} decisions at once, 3 masters (last: one Redis), ` +
      `${STALL_MS} ms busy after the loop\n`,
  );
  console.log('| burst | by Redis | store-timeout | wall ms | Node CPU ms | CPU µs / decision |');
  console.log('|---|---|---|---|---|---|');
  for (const { name: client, open } of CLIENTS) {
    for (const [timeoutMs, name] of [
      [undefined, 'default timeoutMs'],
      [5_000, 'timeoutMs 5000'],
    ]) {
      // Its masters have no script loaded yet (cold), then they have (warm).
      const { store, close } = await open(cluster.startupNodes);
      try {
        await burst(store, timeoutMs, `${client}, ${name}, cold`);
        await burst(store, timeoutMs, `${client}, ${name}, warm`);
      } finally {
        await close();
      }
    }
  }
  await single();
} finally {
  await cluster.stop();
}
