// The ceiling of each of our scripts: `redis-benchmark -P 16` sending EVALSHA with the same
// arguments a limiter sends (server clock, 10 000 identities), with no Node in the way. Node's
// throughput at 256 in flight is then read as a share of it.
import { execFile } from 'node:child_process';
import { encodeScriptArgs, scriptFor } from '@floodgate/core/redis';
import { POLICIES, policyOf } from './contenders.mjs';
import { median } from './measure.mjs';

// Never reached in a run, and small enough that every policy keeps its Redis state int-encoded.
const NEVER = 500_000;

function run(bin, args) {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${bin} failed: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}

// rate-limiter-flexible's script (RateLimiterRedis, 11.4), as the reference row.
const RLF_SCRIPT = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}`;

async function ceilingOf(bin, config, redis, source, key, argv) {
  const sha = await redis.admin.script('LOAD', source);
  await redis.admin.flushall('SYNC');
  await redis.admin.config('RESETSTAT');
  const out = await run(bin, [
    '-h',
    '127.0.0.1',
    '-p',
    String(redis.server.port),
    '-n',
    String(config.ceilingRequests),
    '-c',
    '50',
    '-P',
    '16',
    '-r',
    '10000',
    '-q',
    'EVALSHA',
    sha,
    '1',
    key,
    ...argv,
  ]);
  const m = /([\d.]+) requests per second/.exec(out);
  if (m === null) throw new Error(`redis-benchmark: unexpected output ${out}`);
  const stats = String(await redis.admin.info('commandstats'));
  const us = /^cmdstat_evalsha:.*usec_per_call=([\d.]+)/m.exec(stats);
  return { ceiling: Number(m[1]), usPerCall: us === null ? Number.NaN : Number(us[1]) };
}

/**
 * requests/s of `redis-benchmark -P 16 -c 50` running each policy's script, and Redis's own
 * µs per call (`INFO commandstats`, usec_per_call of EVALSHA) over the same run: the median of
 * `config.repeats` runs, interleaved with the order rotated. Run once each in a fixed order, one
 * script's figure moved by half between two runs of the bench (the reference row among them).
 */
export async function benchCeiling(config, redis, log) {
  const bin = config.redisServer
    ? config.redisServer.replace(/server$/, 'benchmark')
    : 'redis-benchmark';
  const jobs = [
    {
      name: 'rate-limiter-flexible',
      source: RLF_SCRIPT,
      key: 'rlflx:id___rand_int__',
      argv: ['1', '86400'],
    },
  ];
  for (const name of POLICIES) {
    const policy = policyOf(name, NEVER, 86_400_000);
    const policies = [policy];
    const { source } = scriptFor(policies);
    const argv = encodeScriptArgs({ keys: [], policies, cost: 1, mode: 'limit' });
    // -r replaces __rand_int__ with 000000000000..(r-1): 10 000 identities, as the Node runs.
    const key = `floodgate:{id___rand_int__}:${policy.id}`;
    jobs.push({ name, source, key, argv });
    if (name === 'fixedWindow' || name === 'tokenBucket') {
      // The same script on the client clock (now in ARGV): what reading TIME costs.
      const client = [...argv];
      client[2] = String(Date.now());
      jobs.push({ name: `${name} (client clock)`, source, key, argv: client });
    }
  }
  const runs = new Map(jobs.map((j) => [j.name, []]));
  for (let r = 0; r < config.repeats; r++) {
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[(i + r) % jobs.length];
      log(`  ceiling: ${job.name} (${r + 1} of ${config.repeats})`);
      runs.get(job.name).push(await ceilingOf(bin, config, redis, job.source, job.key, job.argv));
    }
  }
  return jobs.map(({ name }) => {
    const all = runs.get(name);
    return {
      name,
      ceiling: median(all.map((x) => x.ceiling)),
      usPerCall: median(all.map((x) => x.usPerCall)),
    };
  });
}
