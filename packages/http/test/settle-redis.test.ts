// Settling on a real redis-server (IoRedisStore), through the node:http adapter: a streamed
// response is charged what its handler reported, a client that leaves mid-stream what was
// reported by then, and the estimate holds the quota while the response streams.
import { IoRedisStore } from '@floodgate/ioredis';
import { type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from './concurrency-apps.js';
import { ABORT_TOKENS, SETTLE_ADAPTERS, STREAM_TOKENS } from './settle-apps.js';
import { readThenAbort, tokenLimiter, used } from './support/settle.js';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

const opened: App[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

let n = 0;
async function setUp() {
  // Exact counts, not the deadline, are under test: a slow CI machine must not fall back.
  const store = new IoRedisStore(client);
  const limiter = tokenLimiter(store, {
    prefix: `settle-${process.pid}-${n++}`,
    timeoutMs: 10_000,
  });
  const app = await SETTLE_ADAPTERS.node!({
    limiter,
    key: () => 'client',
    cost: { requests: 1, tokens: 100 },
    settle: true,
  });
  opened.push(app);
  return { app, limiter };
}

describe('settle on IoRedisStore (real redis-server)', () => {
  it('a streamed response is charged what the handler reported', async () => {
    const { app, limiter } = await setUp();
    const res = await fetch(`${app.url}/stream`);
    await res.text();
    await app.meters[0]?.settled;
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 3 * STREAM_TOKENS });
  });

  it('a client that leaves mid-stream is charged what was reported by then', async () => {
    const { app, limiter } = await setUp();
    await readThenAbort(`${app.url}/abort`, 2, async () => {
      expect(await used(limiter)).toEqual({ requests: 1, tokens: 100 });
    });
    for (let i = 0; i < 400 && app.meters.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await app.meters[0]?.settled;
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 2 * ABORT_TOKENS });
  });
});
