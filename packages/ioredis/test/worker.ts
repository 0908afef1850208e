// One "app server" for the multi-process tests: its own ioredis client and IoRedisStore, taking
// requests from the parent over IPC. Run with `node --import tsx`.
import {
  createLimiter,
  fixedWindow,
  type Limiter,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { Redis } from 'ioredis';
import { IoRedisStore } from '../src/index.js';

const redis = new Redis(process.env.REDIS_URL!, {
  enableAutoPipelining: process.env.PIPELINING === '1',
});
const store = new IoRedisStore(redis);
// onStoreError 'throw': a failing store must show up as an error, never as a fallback decision.
const make = (policy: Parameters<typeof createLimiter>[0]['policy'], prefix: string): Limiter =>
  createLimiter({ store, policy, prefix, onStoreError: 'throw' });
const limiters: Record<string, Limiter> = {
  tokenBucket: make(tokenBucket({ limit: 100, interval: '1m' }), 'incident-tb'),
  fixedWindow: make(fixedWindow({ limit: 100, window: '1m' }), 'incident-fw'),
  manyTb: make(tokenBucket({ limit: 20, interval: '1d' }), 'many-tb'),
  manyLog: make(slidingWindowLog({ limit: 15, window: '1h' }), 'many-log'),
};

type Message =
  | { type: 'limit'; id: number; limiter: string; key: string }
  | { type: 'batch'; id: number; requests: { limiter: string; key: string }[] }
  | { type: 'exit' };

process.on('message', (m: Message) => {
  if (m.type === 'exit') {
    redis.disconnect();
    process.exit(0);
  }
  if (m.type === 'limit') {
    limiters[m.limiter]!.limit(m.key).then(
      (d) =>
        process.send!({
          id: m.id,
          allowed: d.allowed,
          remaining: d.remaining,
          resetAfterMs: d.resetAfterMs,
          at: Date.now(),
        }),
      (e: Error) => process.send!({ id: m.id, error: String(e?.cause ?? e) }),
    );
  }
  if (m.type === 'batch') {
    // Hundreds in flight at once.
    Promise.all(m.requests.map((r) => limiters[r.limiter]!.limit(r.key))).then(
      (ds) => process.send!({ id: m.id, allowed: ds.map((d) => d.allowed) }),
      (e: Error) => process.send!({ id: m.id, error: String(e?.cause ?? e) }),
    );
  }
});
redis.ping().then(() => process.send!({ ready: true }));
