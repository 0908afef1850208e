// Issue 35's Cluster burst, measured: one process, 3 000 identities × 4 decisions at once on a
// throw-away six-node Redis Cluster through ioredis, with the default timeoutMs (250 ms) and with
// 5 000 ms; cold (scripts not yet loaded on the masters) and warm. Prints how many decisions
// Redis made and how many the per-process fallback made (`store-timeout`), the wall time and this
// process's CPU time. A measurement, not a test: the counts under the default timeout are the
// problem the issue names, not a guarantee.
// Run: pnpm --filter @floodgate/bench bench:cluster-burst
import { createLimiter, tokenBucket } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { startRedisCluster } from '@floodgate/testkit/redis';
import { Cluster } from 'ioredis';

const IDENTITIES = Number(process.env.BENCH_BURST_IDENTITIES ?? 3_000);
const ROUNDS = 4;

/** One burst on a fresh prefix; what decided it, and what it cost this process. */
async function burst(client, timeoutMs, label) {
  const limiter = createLimiter({
    store: new IoRedisStore(client),
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

const cluster = await startRedisCluster();
try {
  console.log(
    `${IDENTITIES} identities × ${ROUNDS} decisions at once, ioredis Cluster, 3 masters\n`,
  );
  console.log('| burst | by Redis | store-timeout | wall ms | Node CPU ms | CPU µs / decision |');
  console.log('|---|---|---|---|---|---|');
  for (const [timeoutMs, name] of [
    [undefined, 'default timeoutMs'],
    [5_000, 'timeoutMs 5000'],
  ]) {
    // A client of its own: its masters have no script loaded yet (cold), then they have (warm).
    const client = new Cluster(cluster.startupNodes);
    await client.ping();
    await Promise.all(client.nodes('master').map((node) => node.script('FLUSH')));
    try {
      await burst(client, timeoutMs, `${name}, cold`);
      await burst(client, timeoutMs, `${name}, warm`);
    } finally {
      await client.quit();
    }
  }
} finally {
  await cluster.stop();
}
