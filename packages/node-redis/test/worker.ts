// One "app server" for the multi-process test: its own node-redis client (each process a
// different node-redis generation) and NodeRedisStore. Run with `node --import tsx`.
import { createLimiter, type Limiter, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS } from './clients.js';

const conn = await CLIENT_KINDS[Number(process.env.CLIENT_KIND)]!.client(process.env.REDIS_URL!);
const store = new NodeRedisStore(conn.client);
const make = (policy: Parameters<typeof createLimiter>[0]['policy'], prefix: string): Limiter =>
  createLimiter({ store, policy, prefix, onStoreError: 'throw' });
const limiters: Record<string, Limiter> = {
  tokenBucket: make(tokenBucket({ limit: 100, interval: '1m' }), 'incident-tb'),
  manyTb: make(tokenBucket({ limit: 20, interval: '1d' }), 'many-tb'),
  manyLog: make(slidingWindowLog({ limit: 15, window: '1h' }), 'many-log'),
};

type Message =
  | { type: 'limit'; id: number; limiter: string; key: string }
  | { type: 'batch'; id: number; requests: { limiter: string; key: string }[] }
  | { type: 'exit' };

process.on('message', (m: Message) => {
  if (m.type === 'exit') {
    conn.close().then(() => process.exit(0));
  }
  if (m.type === 'limit') {
    limiters[m.limiter]!.limit(m.key).then(
      (d) => process.send!({ id: m.id, allowed: d.allowed }),
      (e: Error) => process.send!({ id: m.id, error: String(e?.cause ?? e) }),
    );
  }
  if (m.type === 'batch') {
    Promise.all(m.requests.map((r) => limiters[r.limiter]!.limit(r.key))).then(
      (ds) => process.send!({ id: m.id, allowed: ds.map((d) => d.allowed) }),
      (e: Error) => process.send!({ id: m.id, error: String(e?.cause ?? e) }),
    );
  }
});
process.send!({ ready: true });
