// Redis: @floodgate/ioredis IoRedisStore against rate-limiter-flexible's RateLimiterRedis, both on
// ioredis, against a throw-away redis-server this process starts (never the one on 6379).

import { readFileSync } from 'node:fs';
import { startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { identities } from './config.mjs';
import { POLICIES, redisContenders } from './contenders.mjs';
import { collectGarbage, compare, concurrent, median, sequential, table } from './measure.mjs';

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
        const { result, redisUs, redisCpuUs } = await onRedis(redis, n, () =>
          concurrent(decide, keys, n, c),
        );
        return { ...result, iterations: n, redisUs, redisCpuUs };
      },
    })),
  ];
  const results = [];
  for (const s of scenarios) {
    log(`  redis: ${s.scenario}`);
    const client = await redis.client(s.pipelining);
    try {
      const runs = new Map();
      const samples = await compare(
        redisContenders(redis, client, NEVER, DAY_MS, POLICIES, { batchRows: true }),
        config.repeats,
        s.run,
        (denied) => denied === 0,
        runs,
      );
      const row = { scenario: s.scenario, inFlight: s.inFlight ?? 1, samples };
      if (s.inFlight !== undefined) {
        const per = (field) =>
          new Map([...runs].map(([name, rs]) => [name, median(rs.map((x) => x[field]))]));
        row.redisUs = per('redisUs');
        row.redisCpuUs = per('redisCpuUs');
      }
      results.push(row);
    } finally {
      client.disconnect();
    }
  }
  return results;
}

/** The CPU time the redis-server process has had, in ns (Linux; undefined elsewhere). */
function serverCpuNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` (n decisions) and says what Redis spent on them, per decision: `redisUs`, the usec
 * of EVALSHA and EVAL in `INFO commandstats` (the scripts' own run time, as the peers' rows
 * count theirs), and `redisCpuUs`, the server process's CPU time (Linux schedstat), which also
 * holds reading and parsing the commands and writing the replies: what one Redis core carries.
 */
async function onRedis(redis, n, work) {
  const before = commandStats(await redis.admin.info('commandstats'));
  const cpu = serverCpuNs(redis.server.pid);
  const result = await work();
  const cpuAfter = serverCpuNs(redis.server.pid);
  const after = commandStats(await redis.admin.info('commandstats'));
  let usec = 0;
  for (const name of ['evalsha', 'eval']) {
    usec += (after.get(name)?.usec ?? 0) - (before.get(name)?.usec ?? 0);
  }
  return {
    result,
    redisUs: usec / n,
    redisCpuUs:
      cpu === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpu) / 1e3 / n,
  };
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
  const contenders = redisContenders(redis, client, NEVER, DAY_MS);
  const runs = new Map(contenders.map((c) => [c.name, []]));
  try {
    // Repeats interleaved, the order rotated each time, as every other table: measured one
    // contender after the other in a fixed order, the first ones paid for what the process was
    // still settling (a later contender on the same path measured a third less Node CPU).
    for (let r = 0; r < config.repeats; r++) {
      for (let j = 0; j < contenders.length; j++) {
        const c = contenders[(j + r) % contenders.length];
        runs.get(c.name).push(await roundTrip(c, client, redis, config, keys, n));
      }
    }
  } finally {
    client.disconnect();
  }
  return contenders.map(({ name }) => {
    const all = runs.get(name);
    const mid = (field) => median(all.map((x) => x[field]));
    return {
      ...all[0],
      latencyUs: mid('latencyUs'),
      clientCpuUs: mid('clientCpuUs'),
      serverUs: mid('serverUs'),
    };
  });
}

/** One contender's sequential run of `n` decisions, counted as `benchRoundTrips` says. */
async function roundTrip(c, client, redis, config, keys, n) {
  const { decide } = await c.setup();
  // Loads the script on the connection (EVAL or NOSCRIPT + EVAL) and warms up the JIT before
  // counting starts.
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
  return {
    name: c.name,
    client: new Map([...sent].map(([k, v]) => [k, v / n])),
    server,
    latencyUs: Number(ns) / 1e3 / n,
    clientCpuUs: (user + system) / n,
    serverUs: serverUsec / n,
  };
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

// Top-level script commands: a script's usec already counts the GETs and SETs it calls, which
// `INFO commandstats` also lists on their own rows.
const SCRIPT_COMMANDS = ['evalsha', 'eval'];

function scriptUsec(before, after) {
  let usec = 0;
  let calls = 0;
  for (const name of SCRIPT_COMMANDS) {
    usec += (after.get(name)?.usec ?? 0) - (before.get(name)?.usec ?? 0);
    calls += (after.get(name)?.calls ?? 0) - (before.get(name)?.calls ?? 0);
  }
  return { usec, calls };
}

/**
 * One hot identity: `inFlight` decisions in flight (auto-pipelining on), every one on the same
 * key. Per run: decisions/s, and Redis's µs per decision from `INFO commandstats` (usec of
 * EVALSHA and EVAL diffed around the timed part, ÷ decisions), with the script runs per decision.
 * Interleaved like `compare`: in repeat r the order is rotated by r.
 */
export async function benchHot(config, redis, log, inFlight = 256) {
  const keys = ['hot'];
  const n = config.redisConcurrentIterations;
  const warmup = Math.max(config.redisWarmup, 1_000);
  log(`  redis: one hot identity, ${inFlight} in flight`);
  const client = await redis.client(true);
  const runs = new Map();
  try {
    const contenders = redisContenders(redis, client, NEVER, DAY_MS, POLICIES);
    for (let r = 0; r < config.repeats; r++) {
      for (let j = 0; j < contenders.length; j++) {
        const c = contenders[(j + r) % contenders.length];
        const { decide, teardown } = await c.setup();
        await concurrent(decide, keys, warmup, inFlight);
        collectGarbage();
        const before = commandStats(await redis.admin.info('commandstats'));
        const { ns, denied } = await concurrent(decide, keys, n, inFlight);
        const after = commandStats(await redis.admin.info('commandstats'));
        await teardown?.();
        if (denied !== 0) throw new Error(`${c.name}: ${denied} of ${n} hot decisions denied`);
        const { usec, calls } = scriptUsec(before, after);
        const list = runs.get(c.name) ?? [];
        list.push({
          ops: n / (Number(ns) / 1e9),
          usPerDecision: usec / n,
          runsPerDecision: calls / n,
        });
        runs.set(c.name, list);
      }
    }
  } finally {
    client.disconnect();
  }
  return { inFlight, decisions: n, runs };
}

/** The hot-identity table: medians, spreads, and each row ÷ rate-limiter-flexible's. */
export function hotTable(hot, label, rlf, target = 0.3) {
  const med = (name, field) => median(hot.runs.get(name).map((x) => x[field]));
  const range = (name, field) => {
    const v = hot.runs.get(name).map((x) => x[field]);
    return `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`;
  };
  const rlfUs = med(rlf, 'usPerDecision');
  const rlfOps = med(rlf, 'ops');
  const rows = [...hot.runs.keys()].map((name) => {
    const us = med(name, 'usPerDecision');
    const perRlf = us / rlfUs;
    return [
      label(name),
      Math.round(med(name, 'ops')).toLocaleString('en-US'),
      (med(name, 'ops') / rlfOps).toFixed(2),
      `${us.toFixed(2)} (${range(name, 'usPerDecision')})`,
      perRlf.toFixed(2),
      med(name, 'runsPerDecision').toFixed(3),
      name === rlf || name.startsWith('rate-limit') ? '–' : perRlf <= target ? 'met' : 'not met',
    ];
  });
  return table(
    [
      'contender',
      'decisions/s',
      '÷ RLF',
      'Redis µs per decision (range)',
      '÷ RLF µs',
      'script runs per decision',
      `≤ ${target}× RLF µs`,
    ],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
  );
}
