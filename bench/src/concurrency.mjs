// The concurrency limiter on Redis: acquire + release pairs through IoRedisStore (one EVALSHA
// each), Redis's own µs per call of the lease script, and the memory a held lease takes.
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { IoRedisStore } from '@floodgate/ioredis';

const IDENTITIES = 1000;

async function evalsha(admin) {
  const stats = String(await admin.info('commandstats'));
  const m = /^cmdstat_evalsha:calls=(\d+),usec=(\d+)/m.exec(stats);
  return m === null ? { calls: 0, usec: 0 } : { calls: Number(m[1]), usec: Number(m[2]) };
}

/**
 * Sequential acquire + release pairs over `IDENTITIES` identities (limit 10, so none is denied):
 * wall µs per pair as Node sees it, Redis µs per script run, and EVALSHA per pair. Then
 * `MEMORY USAGE` of an identity's key holding 1 and 10 leases.
 */
export async function benchConcurrency(config, redis, log) {
  log('  redis: concurrency leases');
  const client = await redis.client(false);
  try {
    const store = new IoRedisStore(client);
    const limiter = createConcurrencyLimiter({ store, limit: 10, leaseMs: '1m', prefix: 'cc' });
    const pairs = config.roundTripDecisions;
    // Warm up: the script loaded, the clock offset known.
    for (let i = 0; i < 100; i++) await (await limiter.acquire(`w${i}`)).release();
    await redis.admin.config('RESETSTAT');
    const before = await evalsha(redis.admin);
    const started = process.hrtime.bigint();
    for (let i = 0; i < pairs; i++) {
      const lease = await limiter.acquire(`id${i % IDENTITIES}`);
      await lease.release();
    }
    const wallUs = Number(process.hrtime.bigint() - started) / 1000 / pairs;
    const after = await evalsha(redis.admin);
    const calls = after.calls - before.calls;
    const held = [];
    for (let i = 0; i < 10; i++) held.push(await limiter.acquire('memory-10'));
    held.push(await limiter.acquire('mem_one'));
    const usage = async (id) => Number(await redis.admin.memory('USAGE', limiter.key(id)));
    const row = {
      pairs,
      wallUsPerPair: wallUs,
      evalshaPerPair: calls / pairs,
      redisUsPerCall: (after.usec - before.usec) / calls,
      bytesOneLease: await usage('mem_one'),
      bytesTenLeases: await usage('memory-10'),
      sampleKey: limiter.key('mem_one'),
      encoding: String(await redis.admin.object('ENCODING', limiter.key('mem_one'))),
    };
    await Promise.all(held.map((l) => l.release()));
    return row;
  } finally {
    client.disconnect();
  }
}
