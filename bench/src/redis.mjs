// Redis: @floodgate/ioredis IoRedisStore against rate-limiter-flexible's RateLimiterRedis, both on
// ioredis, against a throw-away redis-server this process starts (never the one on 6379).
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { startRedisServer } from '@floodgate/testkit';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { identities } from './config.mjs';
import { collectGarbage, compare, concurrent, median, sequential } from './measure.mjs';

const NEVER = 1_000_000_000;
const HOUR_S = 3600;

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

// Every run starts from an empty keyspace on our own server (the script cache survives FLUSHALL,
// and both libraries reload their script on NOSCRIPT anyway).
function contenders(redis, client, limit, duration = { ms: '1h', s: HOUR_S }) {
  const floodgate = (policy) => async () => {
    await redis.admin.flushall('SYNC');
    const limiter = createLimiter({ store: new IoRedisStore(client), policy });
    return { decide: (key) => limiter.limit(key) };
  };
  return [
    { name: 'tokenBucket', setup: floodgate(tokenBucket({ limit, interval: duration.ms })) },
    { name: 'fixedWindow', setup: floodgate(fixedWindow({ limit, window: duration.ms })) },
    {
      name: 'peer',
      setup: async () => {
        await redis.admin.flushall('SYNC');
        const rl = new RateLimiterRedis({
          storeClient: client,
          useRedisPackage: false,
          points: limit,
          duration: duration.s,
        });
        return { decide: (key) => rl.consume(key) };
      },
    },
  ];
}

/** Throughput: sequential (latency-bound) and concurrent, auto-pipelining off and on. */
export async function benchRedis(config, redis, log) {
  const keys = identities(config.redisKeys);
  const warmup = Math.max(config.redisWarmup, config.redisKeys);
  const c = config.concurrency;
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
    ...[false, true].map((pipelining) => ({
      scenario: `${c} in flight, autoPipelining ${pipelining ? 'on' : 'off'}`,
      pipelining,
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
        contenders(redis, client, NEVER),
        config.repeats,
        s.run,
        (denied) => denied === 0,
      );
      results.push({ scenario: s.scenario, samples });
    } finally {
      client.disconnect();
    }
  }
  return results;
}

function commandStats(text) {
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
    for (const c of contenders(redis, client, NEVER)) {
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
  const keys = identities(config.memoryKeys);
  const client = await redis.client(false);
  const rows = [];
  try {
    for (const c of contenders(redis, client, 100, { ms: '1m', s: 60 })) {
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
        sampleValue: await redis.admin.get(sample),
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
