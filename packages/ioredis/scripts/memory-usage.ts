// Prints Redis `MEMORY USAGE` per key for each policy, as the README reports it.
// Run: pnpm --filter @floodgate/ioredis memory-usage   (needs redis-server on PATH)
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { encodeIdentity, policyKey } from '@floodgate/core/store';
import { startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { IoRedisStore } from '../src/index.js';

const server = await startRedisServer();
const redis = new Redis(server.url);
const identity = 'key_0123456789abcdef'; // 20 bytes, like an API key id
const rows: [string, string, number, number, string][] = [];

async function measure(label: string, policy: Policy, calls: number, spacingMs = 0): Promise<void> {
  const limiter = createLimiter({
    store: new IoRedisStore(redis),
    policy,
    onStoreError: 'throw',
    blockCache: false,
  });
  for (let i = 0; i < calls; i++) {
    await limiter.limit(identity);
    if (spacingMs > 0) await new Promise((r) => setTimeout(r, spacingMs));
  }
  const key = policyKey('floodgate', encodeIdentity(identity), policy.id);
  const bytes = Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const type = String(await redis.type(key));
  const encoding = String(await redis.object('ENCODING', key));
  rows.push([label, policy.id, calls, bytes, `${type}/${encoding}`]);
  await limiter.reset(identity);
}

await measure('fixedWindow 100/1m', fixedWindow({ limit: 100, window: '1m' }), 1);
await measure('slidingWindow 100/1m', slidingWindow({ limit: 100, window: '1m' }), 1);
await measure('tokenBucket 100/1m', tokenBucket({ limit: 100, interval: '1m' }), 1);
await measure('tokenBucket 7/1m (fractional)', tokenBucket({ limit: 7, interval: '1m' }), 1);
await measure(
  'leakyBucket 100/1m queue 10',
  leakyBucket({ limit: 100, interval: '1m', queue: 10 }),
  1,
);
await measure(
  'slidingWindowLog 100/1m, 1 entry',
  slidingWindowLog({ limit: 100, window: '1m' }),
  1,
);
await measure(
  'slidingWindowLog 100/1m, 10 entries',
  slidingWindowLog({ limit: 100, window: '1m' }),
  10,
  2,
);
await measure(
  'slidingWindowLog 100/1m, 100 entries',
  slidingWindowLog({ limit: 100, window: '1m' }),
  100,
  2,
);
await measure(
  'slidingWindowLog 1000/1m, 1000 entries',
  slidingWindowLog({ limit: 1000, window: '1m' }),
  1000,
  0,
);

const info = String(await redis.info('server'));
console.log(
  `redis ${/redis_version:(\S+)/.exec(info)?.[1]}, key ${JSON.stringify(policyKey('floodgate', identity, '<policy id>'))}`,
);
console.log('| policy | key suffix | decisions | MEMORY USAGE (bytes) | type/encoding |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r[0]} | \`${r[1]}\` | ${r[2]} | ${r[3]} | ${r[4]} |`);
redis.disconnect();
await server.stop();
