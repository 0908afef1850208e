// Redis: @floodgate/ioredis IoRedisStore against rate-limiter-flexible's RateLimiterRedis, both on
// ioredis, against a throw-away redis-server this process starts (never the one on 6379).
import { startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { identities } from './config.mjs';
import { POLICIES, redisContenders } from './contenders.mjs';
import { collectGarbage, compare, concurrent, median, sequential } from './measure.mjs';

// Never reached in a run, and small enough that every policy keeps its Redis state int-encoded.
const NEVER = 500_000;
const DAY_MS = 86_400_000;

/** Starts the server and an admin connection used only between runs. */
export async function startRedis(config) {
  const server = await startRedisServer(config.redisServer ? { bin: config.redisServer } : {});
  const admin = new Redis(server.url, { lazyConnect: true });
  await admin.connect();
  const info = String(await admin.info('server'));
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
  return {
    server,
    admin,
    version,
    async client(enableAutoPipelining) {
      const client = new Redis(server.url, { enableAutoPipelining, lazyConnect: true });
      await client.connect();
      return client;
    },
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

/** Throughput: sequential (latency-bound) and concurrent, auto-pipelining off and on. */
export async function benchRedis(config, redis, log) {
  const keys = identities(config.redisKeys);
  const warmup = Math.max(config.redisWarmup, config.redisKeys);
  const scenarios = [
    {
      scenario: 'sequential (1 in flight)',
      pipelining: false,
      run: async (decide) => {
        await sequential(decide, keys, warmup);
        collectGarbage();
        const n = config.redisIterations;
        return { ...(await sequential(decide, keys, n)), iterations: n };
      },
    },
    ...config.concurrency.map((c) => ({
      scenario: `${c} in flight (autoPipelining)`,
      inFlight: c,
      pipelining: true,
      run: async (decide) => {
        await concurrent(decide, keys, warmup, c);
        collectGarbage();
        const n = config.redisConcurrentIterations;
        return { ...(await concurrent(decide, keys, n, c)), iterations: n };
      },
    })),
  ];
  const results = [];
  for (const s of scenarios) {
    log(`  redis: ${s.scenario}`);
    const client = await redis.client(s.pipelining);
    try {
      const samples = await compare(
        redisContenders(redis, client, NEVER, DAY_MS, POLICIES, { batchRows: true }),
        config.repeats,
        s.run,
        (denied) => denied === 0,
      );
      results.push({ scenario: s.scenario, inFlight: s.inFlight ?? 1, samples });
    } finally {
      client.disconnect();
    }
  }
  return results;
}

export function commandStats(text) {
  const stats = new Map();
  for (const m of String(text).matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(m[1], { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return stats;
}

/**
 * Commands per decision, counted twice: on the client (every command ioredis sends, so with one
 * in flight and no pipelining, the network round trips) and on the server (`INFO commandstats`
 * totals diffed around the run; these include the commands a Lua script calls). The same run
 * also says where a decision's time goes: wall-clock latency, this process's CPU time, and the
 * time Redis spent executing the top-level commands (a script's time includes its inner calls).
 */
export async function benchRoundTrips(config, redis, log) {
  log('  redis: round trips per decision');
  const keys = identities(config.redisKeys);
  const n = config.roundTripDecisions;
  const client = await redis.client(false);
  const rows = [];
  try {
    for (const c of redisContenders(redis, client, NEVER, DAY_MS)) {
      const { decide } = await c.setup();
      // Loads the script on the connection (EVAL or NOSCRIPT + EVAL) and warms up the JIT
      // before counting starts.
      await sequential(decide, keys, Math.max(config.redisWarmup, config.redisKeys));
      collectGarbage();
      const sent = new Map();
      const send = client.sendCommand;
      client.sendCommand = function count(command, stream) {
        const name = String(command.name).toLowerCase();
        sent.set(name, (sent.get(name) ?? 0) + 1);
        return send.call(this, command, stream);
      };
      const before = commandStats(await redis.admin.info('commandstats'));
      const cpu = process.cpuUsage();
      let ns;
      try {
        ({ ns } = await sequential(decide, keys, n));
      } finally {
        client.sendCommand = send;
      }
      const { user, system } = process.cpuUsage(cpu);
      const after = commandStats(await redis.admin.info('commandstats'));
      const server = new Map();
      let serverUsec = 0;
      for (const [name, { calls, usec }] of after) {
        if (name === 'info') continue; // the admin connection's own INFO
        const d = calls - (before.get(name)?.calls ?? 0);
        if (d > 0) server.set(name, d / n);
        // Top-level commands only: a script's usec already includes the commands it calls.
        if (sent.has(name)) serverUsec += usec - (before.get(name)?.usec ?? 0);
      }
      rows.push({
        name: c.name,
        client: new Map([...sent].map(([k, v]) => [k, v / n])),
        server,
        latencyUs: Number(ns) / 1e3 / n,
        clientCpuUs: (user + system) / n,
        serverUs: serverUsec / n,
      });
    }
  } finally {
    client.disconnect();
  }
  return rows;
}

/**
 * `MEMORY USAGE` of each key after one decision on each of `memoryKeys` identities (limit 100
 * per minute), and the growth of `used_memory` divided by the key count (which also counts the
 * expires table and keyspace growth, the same for every contender).
 */
export async function benchMemory(config, redis, log) {
  log('  redis: memory per key');
  // 7-character identities under one prefix, `floodgate`, for every library.
  const keys = Array.from(
    { length: config.memoryKeys },
    (_, i) => `u${String(i).padStart(6, '0')}`,
  );
  const client = await redis.client(false);
  const rows = [];
  try {
    for (const c of redisContenders(redis, client, 100, 3_600_000, undefined, {
      samePrefix: true,
    })) {
      const { decide } = await c.setup();
      // Loads the script, then starts from an empty keyspace again (FLUSHALL keeps scripts).
      await decide('warm-up');
      await redis.admin.flushall('SYNC');
      const usedBefore = await usedMemory(redis.admin);
      for (const key of keys) await decide(key);
      const usedAfter = await usedMemory(redis.admin);
      const names = await redis.admin.keys('*');
      if (names.length !== keys.length) {
        throw new Error(`${c.name}: expected ${keys.length} keys, found ${names.length}`);
      }
      const pipe = redis.admin.pipeline();
      for (const k of names) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
      const sizes = (await pipe.exec()).map(([error, bytes]) => {
        if (error) throw error;
        return Number(bytes);
      });
      const sample = names.sort()[0];
      rows.push({
        name: c.name,
        keys: names.length,
        memoryUsage: sizes.reduce((a, b) => a + b, 0) / sizes.length,
        memoryUsageMedian: median(sizes),
        usedMemoryPerKey: (usedAfter - usedBefore) / names.length,
        sampleKey: sample,
        sampleValue:
          (await redis.admin.type(sample)) === 'zset'
            ? (await redis.admin.zrange(sample, 0, -1, 'WITHSCORES')).join(' ')
            : await redis.admin.get(sample),
        encoding: `${await redis.admin.type(sample)}/${await redis.admin.object('ENCODING', sample)}`,
        ttlMs: await redis.admin.pttl(sample),
      });
    }
  } finally {
    client.disconnect();
  }
  return rows;
}

async function usedMemory(admin) {
  const info = String(await admin.info('memory'));
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}
